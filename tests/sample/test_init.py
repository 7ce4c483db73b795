"""``goldloop.sample``'s re-exports: the same objects as their homes, imported when first asked
for, so a submodule (the CLI's help reads ``strata.ROLES``) starts without the readers."""

from __future__ import annotations

import subprocess
import sys

import pytest

import goldloop.sample
from goldloop.formats import documents, sampledir


def test_each_name_is_its_homes() -> None:
    assert goldloop.sample.read_documents is documents.read_documents
    assert goldloop.sample.read_manifest is sampledir.read_manifest
    assert goldloop.sample.ManifestRow is sampledir.ManifestRow
    assert goldloop.sample.SampleDirError is sampledir.SampleDirError


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = goldloop.sample.no_such_name


def test_a_submodule_does_not_import_the_readers() -> None:
    probe = (
        "import sys\nimport goldloop.sample.strata\n"
        "print(sorted(m for m in ('goldloop.formats.documents', 'goldloop.formats.gold', 'numpy') "
        "if m in sys.modules))\n"
        "goldloop.sample.read_documents\n"
        "print('goldloop.formats.documents' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.splitlines() == ["[]", "True"]
