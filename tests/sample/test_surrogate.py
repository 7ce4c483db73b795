"""The surrogate part (``sample.surrogate``) drawn with a batch on real spaCy: its own sample dir,
strata and ``p_incl`` as its report says, independent of the people's draw, refused twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.kb import KB
from goldloop.sample import read_documents, read_manifest
from goldloop.sample.batch_record import SampleSettings, report_path
from goldloop.sample.pool import PoolDoc
from goldloop.sample.run import run_sample
from goldloop.sample.strata import Boundaries
from goldloop.sample.surrogate import draw_surrogate, surrogate_dir
from goldloop.scoring.design import read_design
from goldloop.settings import DEMO_CORPUS

SETTINGS = SampleSettings(n_primary=4, n_double=2, n_reserve=2, tail_top_k=10, seed=3)


def test_a_surrogate_part_is_a_sample_dir_of_its_own(tmp_path: Path, kb: KB) -> None:
    result = run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS, surrogate=13)
    assert result.surrogate_docs == 13
    part = read_manifest(surrogate_dir(tmp_path))
    assert len(part) == 13 and {r.role for r in part} == {"surrogate"}
    assert {r.batch for r in part} == {0}
    # The people's sample is as without it: the same documents and p_incl.
    alone = run_sample(DEMO_CORPUS, tmp_path / "alone", kb, SETTINGS)
    people = [(r.doc_id, r.p_incl) for r in read_manifest(tmp_path)]
    assert people == [(r.doc_id, r.p_incl) for r in alone.rows]
    # Each stratum's p_incl is its draws over its pool size, so Σ 1/p_incl over a stratum's
    # drawn documents is that stratum's size: the pool's size in all.
    report = json.loads(report_path(surrogate_dir(tmp_path), 0).read_text(encoding="utf-8"))
    assert report["part"] == "surrogate" and report["drawn"] == 13
    drawn = Counter(r.stratum for r in part)
    for name, stratum in report["strata"].items():
        assert stratum["drawn"] == drawn[name]
        if drawn[name]:
            assert stratum["p_incl"] == pytest.approx(drawn[name] / stratum["pool"])
    assert sum(1 / r.p_incl for r in part) == pytest.approx(
        sum(s["pool"] for s in report["strata"].values() if s["drawn"])
    )
    # Drawn from the whole pool, the people's documents included: independent of them.
    assert sum(s["pool"] for s in report["strata"].values()) == result.report.eligible
    documents = read_documents(surrogate_dir(tmp_path))
    assert [d.doc_id for d in documents] == [r.doc_id for r in part]
    assert all(d.role == "surrogate" and d.p_incl is not None for d in documents)


def test_a_later_batch_adds_to_the_part_by_the_batch_rule(tmp_path: Path, kb: KB) -> None:
    """Batch 1 of the part draws from what batch 0 left: no document twice, ``p_incl`` of the
    remaining, and the batch rule's weights (``read_design``) sum to the pool's size exactly;
    a part the pool cannot add to is refused before anything is written."""
    run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS, surrogate=8)
    second = run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS, extend=True, surrogate=10)
    assert second.surrogate_docs == 10
    part = read_manifest(surrogate_dir(tmp_path))
    assert Counter(r.batch for r in part) == {0: 8, 1: 10}
    assert len({r.doc_id for r in part}) == 18
    report = json.loads(report_path(surrogate_dir(tmp_path), 1).read_text(encoding="utf-8"))
    for name, stratum in report["strata"].items():
        drawn = [r for r in part if r.batch == 1 and r.stratum == name]
        assert stratum["drawn"] == len(drawn)
        assert stratum["remaining"] == stratum["pool"] - sum(
            r.batch == 0 and r.stratum == name for r in part
        )
        if drawn:
            assert drawn[0].p_incl == pytest.approx(len(drawn) / stratum["remaining"])
    # Per batch, Σ 1/p_incl is the size of what it drew from (the strata it reached); the
    # batch rule's weights (α_b: the batch's share of the part) then sum to
    # α_0·S_0 + α_1·(n_0 + S_1), which is the pool's size when both batches reach every stratum.
    sums = [sum(1 / r.p_incl for r in part if r.batch == b) for b in (0, 1)]
    for b, total in enumerate(sums):
        batch_report = json.loads(
            report_path(surrogate_dir(tmp_path), b).read_text(encoding="utf-8")
        )
        reached = [s for s in batch_report["strata"].values() if s["drawn"]]
        assert total == pytest.approx(sum(s.get("remaining", s["pool"]) for s in reached))
    design = read_design(read_documents(surrogate_dir(tmp_path)))
    assert design is not None
    alpha = (8 / 18, 10 / 18)
    assert design.population_docs == pytest.approx(alpha[0] * sums[0] + alpha[1] * (8 + sums[1]))
    # The rest of the pool, then nothing left: refused before the people's batch is written.
    run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS, extend=True, surrogate=100)
    manifest = (tmp_path / "manifest.csv").read_bytes()
    with pytest.raises(GoldloopError, match="every document is in the surrogate part already"):
        run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS, extend=True, surrogate=5)
    assert (tmp_path / "manifest.csv").read_bytes() == manifest


def test_the_draw_is_proportional_to_the_strata_and_seeded() -> None:
    cuts = Boundaries((2000.0, 2010.0), 1.0, frozenset())
    docs = [
        PoolDoc(f"d{i}", str(i), {}, 1990 if i < 30 else 2020, 400, f"h{i}", ()) for i in range(40)
    ]
    first = draw_surrogate(docs, cuts, 8, seed=1, p_phase1=1.0)
    assert Counter(d.stratum for d in first) == {"y0-none": 6, "y2-none": 2}
    assert {d.p_incl for d in first} == {6 / 30, 2 / 10}
    again = draw_surrogate(docs, cuts, 8, seed=1, p_phase1=1.0)
    assert [d.doc.doc_id for d in again] == [d.doc.doc_id for d in first]
    everything = draw_surrogate(docs, cuts, 100, seed=1, p_phase1=0.5)
    assert len(everything) == 40 and {d.p_incl for d in everything} == {0.5}
