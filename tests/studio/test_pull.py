"""``goldloop pull`` on a curated campaign (real Label Studio): per document the curated
annotation, else the agreed one, else the primary rule; exact sources, hits and counts, κ before
curation (cross-checked against the same versions given as files) and the curator's changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.agreement import agreement
from goldloop.scoring.completeness import estimate_completeness
from goldloop.studio.pull import pull
from tests.studio.campaign_data import (
    ACTIVATES,
    ALICE,
    BOB,
    INHIBITS,
    PHOSPHORYLATES,
    REDUCES,
    REGULATES,
    STIMULATES,
    SUPPRESSES,
    Campaign,
    documents,
    span,
)

pytestmark = pytest.mark.studio


@pytest.fixture(scope="module")
def pulled(
    kb: KB, campaign: Campaign, label_studio: Any, tmp_path_factory
) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("pull") / "gold.json"
    pull(label_studio.studio, campaign.name, kb, out)
    return out, json.loads(out.with_name(out.name + ".verification.json").read_text())


def test_pull_takes_curated_then_agreed_then_primary(kb: KB, campaign: Campaign, pulled) -> None:
    out, _ = pulled
    gold = read_gold(out, kb)
    alice, bob, carol = (campaign.email(p) for p in ("alice", "bob", "carol"))
    admin = campaign.email("admin")
    got = sorted(
        (d.doc_id, h.surface, h.entity_id, h.direction, h.verdict, h.source, h.annotator,
         h.model_extra["decided"], tuple(h.model_extra.get("kept_by", ())), h.surface_anchored)
        for d in gold.documents for h in d.ground_truth
    )  # fmt: skip
    assert got == sorted([
        ("pmid:10", "phosphorylates", PHOSPHORYLATES, "forward", "accept", "human", admin, "single", (), True),
        ("pmid:11", "activates", ACTIVATES, "forward", "accept", "human", alice, "agreed", (), True),
        ("pmid:12", "inhibits STAT3", INHIBITS, "forward", "fix", "human", carol, "curated", (bob,), True),
        ("pmid:12", "regulates", REGULATES, "forward", "accept", "human", carol, "curated", (alice, bob), True),
        ("pmid:13", "activates", REGULATES, "forward", "fix", "human", carol, "curated", (bob,), False),
        ("pmid:14", "stimulates", STIMULATES, "forward", "accept", "human", alice, "single", (), True),
        ("pmid:15", "reduces", REDUCES, "forward", "accept", "human", carol, "curated", (alice, bob), True),
        ("pmid:16", "suppresses", SUPPRESSES, "forward", "accept", "human", alice, "single", (), True),
    ])  # fmt: skip
    widened = next(h for d in gold.documents if d.doc_id == "pmid:12" for h in d.ground_truth)
    assert (widened.a, widened.b) == span("pmid:12", "inhibits STAT3")
    assert widened.model_extra.get("fixed_boundary") is True
    # The dispute notes carol kept as pre-filled are the curation's, not hers: not in the gold.
    assert not any("note" in (h.model_extra or {}) for d in gold.documents for h in d.ground_truth)


def test_sidecar_counts_curation_and_kappa_before_it(kb: KB, campaign: Campaign, pulled) -> None:
    _, sidecar = pulled
    assert sidecar["projects"] == [
        campaign.name,
        f"{campaign.name}-double",
        f"{campaign.name}-curate",
    ]
    assert sidecar["decided"] == {"single": 3, "agreed": 1, "curated": 3}
    assert sidecar["verified_by"] == sorted(
        campaign.email(p) for p in ("admin", "alice", "bob", "carol")
    )
    assert sidecar["curation"] == {
        "disputed_tasks": 4,
        "curated_tasks": 3,
        "awaiting_curation": ["pmid:14"],
        # pmid:12 drops alice's span, pmid:13 takes bob's relation, pmid:15 drops alice's region
        "regions_changed_by_curator": 3,
        "curated_hits_kept_by": {"both": 2, "one": 2, "neither": 0},
    }
    assert {k: sidecar[k] for k in ("candidates", "accept", "fix", "reject", "added")} == {
        "candidates": 8, "accept": 6, "fix": 2, "reject": 0, "added": 0,
    }  # fmt: skip
    both = {d: rows for d, rows in ALICE.items() if d in BOB}
    expected = agreement(documents(both), documents(BOB), kb).to_dict()
    expected.pop("confusion")
    kappa = sidecar["agreement_before_curation"]
    assert {k: kappa[k] for k in expected} == expected
    assert (kappa["compared_tasks"], kappa["tasks_with_fewer_than_two_annotations"]) == (5, 1)
    spans = [
        ({span(d, r[0]) for r in ALICE[d]}, {span(d, r[0]) for r in BOB[d]}) for d in sorted(both)
    ]
    assert sidecar["completeness"] == json.loads(json.dumps(estimate_completeness(spans).to_dict()))
    assert (sidecar["completeness"]["n1"], sidecar["completeness"]["n2"]) == (7, 6)
    effort = sidecar["effort"]  # its figures are checked in test_effort
    assert (effort["overall"]["annotations"], effort["capped_annotations"]) == (15, 1)
