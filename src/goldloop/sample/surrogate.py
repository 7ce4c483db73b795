"""The surrogate part of a sample: documents only a pre-annotator sees (``<out>/surrogate/``).

Prediction-powered corpus figures (``scoring.ppi_corpus``) need a part of the pool that is a
draw of known probability from the same pool as the people's documents and independent of
them: so it is drawn from the whole pool (phase 1 in two phases), the people's documents
included, in the same strata (the batch's cut points), each stratum's share in proportion to
its size, a seeded simple random draw within it. A document's ``p_incl`` is
``p_phase1 · k_h / R_h``: ``k_h`` drawn of the ``R_h`` documents of its stratum that earlier
batches of the part left (all of them in batch 0), so a later batch adds to the part by the
batch rule the people's batches follow (``scoring.design``).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Collection, Sequence
from pathlib import Path

from goldloop.formats.sampledir import MANIFEST, SURROGATE_ROLE
from goldloop.sample.pool import PoolDoc
from goldloop.sample.strata import Boundaries, Drawn, largest_remainder

SURROGATE_DIR = "surrogate"


def surrogate_dir(sample_dir: Path) -> Path:
    """Where a sample's surrogate part lives: a sample dir of its own."""
    return sample_dir / SURROGATE_DIR


def has_surrogate(sample_dir: Path) -> bool:
    return (surrogate_dir(sample_dir) / MANIFEST).is_file()


def draw_surrogate(
    documents: Sequence[PoolDoc],
    cuts: Boundaries,
    size: int,
    seed: int,
    p_phase1: float,
    taken: Collection[str] = (),
    batch: int = 0,
) -> list[Drawn]:
    """``size`` documents of ``documents`` not ``taken`` by earlier batches of the part (all of
    them when fewer), stratified by ``cuts`` in proportion to what each stratum has left, in an
    order seeded by ``seed`` and ``batch``."""
    strata: dict[str, list[PoolDoc]] = defaultdict(list)
    for doc in documents:
        if doc.doc_id not in taken:
            strata[cuts.stratum(doc)].append(doc)
    sizes = {name: len(docs) for name, docs in strata.items()}
    allocation = largest_remainder(
        min(size, sum(sizes.values())), {k: float(n) for k, n in sizes.items()}
    )
    rng = random.Random(f"{seed}:surrogate:{batch}")
    drawn: list[Drawn] = []
    for name in sorted(allocation):
        k = allocation[name]
        members = sorted(strata[name], key=lambda d: d.doc_id)
        p_incl = p_phase1 * k / len(members)
        drawn += [Drawn(doc, name, p_incl, SURROGATE_ROLE) for doc in rng.sample(members, k)]
    return drawn
