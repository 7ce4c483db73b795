"""A campaign's sidecar sections: κ before curation and completeness, with corpus figures when
the tasks carry the design (no Label Studio needed; the whole pull: test_pull.py)."""

from __future__ import annotations

from typing import Any

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.scoring.agreement import agreement, corpus_agreement
from goldloop.scoring.design import read_design
from goldloop.studio.agreement import DoubleTasks, double_completeness
from goldloop.studio.campaign import CORPUS_BOOTSTRAP, kappa_section
from tests.studio.conftest import FIRST, SECOND, TEXTS, hits


def test_the_sidecar_sections_carry_corpus_figures_when_the_tasks_carry_the_design(kb: KB) -> None:
    def documents(rows: list[tuple[str, str, str, str]], p: dict[str, float | None]) -> list[Any]:
        return [
            Document(doc_id=d, text=text, ground_truth=hits(rows, d), p_incl=p[d])
            for d, text in TEXTS.items()
        ]

    design = {"pmid:1": 0.5, "pmid:2": 0.25, "pmid:3": 1.0}
    first, second = documents(FIRST, design), documents(SECOND, design)
    double = DoubleTasks("x-double", 3, 3, 0, 0)
    section = kappa_section(first, second, double, kb)
    weights = read_design(first)
    assert weights is not None and weights.weights.tolist() == [2.0, 4.0, 1.0]
    report = agreement(first, second, kb)
    shared = list(zip(first, second, strict=True))
    expected = corpus_agreement(
        report, list(TEXTS), kb, weights, CORPUS_BOOTSTRAP, 0, shared=shared
    )
    assert section["corpus"] == expected
    assert section["corpus"]["population_docs"] == 7.0
    completeness = double_completeness(first, second).to_dict()["corpus"]
    assert completeness is not None and completeness["population_docs"] == 7.0
    # One task without p_incl: no design, no corpus figures (the sidecar cannot be told to
    # ignore it), and the sample figures are unchanged.
    mixed = {**design, "pmid:3": None}
    first, second = documents(FIRST, mixed), documents(SECOND, mixed)
    assert kappa_section(first, second, double, kb)["corpus"] is None
    assert double_completeness(first, second).corpus is None
