"""The words of scoring (``scoring.modes``) import without numpy, so a door lists and checks them
in its ``--help`` and as its command line is read; and the scoring takes each of them."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from goldloop.scoring.modes import METRICS
from goldloop.scoring.plan import ratio_parts
from goldloop.scoring.regimes import E2E_COLUMNS


def test_the_words_import_without_numpy() -> None:
    probe = "import sys, goldloop.scoring.modes; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_every_metric_is_a_ratio_of_end_to_end_columns() -> None:
    counts = np.ones((3, len(E2E_COLUMNS)))
    for metric in METRICS:
        top, bottom = ratio_parts(counts, metric)
        assert top.shape == bottom.shape == (3,)
