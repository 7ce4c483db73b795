"""A campaign's sidecar sections: κ before curation and completeness, with corpus figures when
the tasks carry the design (no Label Studio needed; the whole pull: test_pull.py)."""

from __future__ import annotations

from typing import Any

import pytest

from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import Campaign
from goldloop.kb import KB
from goldloop.scoring.agreement import agreement, corpus_agreement
from goldloop.scoring.design import part_design
from goldloop.studio.campaign import CORPUS_BOOTSTRAP, kappa_section
from goldloop.studio.campaign_agreement import DoubleTasks, double_completeness
from tests.studio.conftest import FIRST, SECOND, TEXTS, hits


def drawn(p_incl: dict[str, float | None]) -> Campaign:
    """A campaign whose three texts are double tasks and ``pmid:4`` a primary task, all of batch
    0, each with ``p_incl`` as given (the task data push sends)."""

    def task(i: int, doc_id: str, role: str) -> dict[str, Any]:
        text = TEXTS.get(doc_id, "Insulin stimulates glucose uptake.")
        data = {"doc_id": doc_id, "text": text, "role": role, "batch": 0, "p_incl": p_incl[doc_id]}
        return {"id": i, "data": data, "annotations": []}

    return Campaign(
        "x",
        tasks={
            "primary": [task(1, "pmid:4", "primary")],
            "double": [task(i, d, "double") for i, d in enumerate(TEXTS, start=2)],
        },
    )


def test_the_sidecar_sections_carry_corpus_figures_when_the_tasks_carry_the_design(kb: KB) -> None:
    def documents(rows: list[tuple[str, str, str, str]]) -> list[Any]:
        return [
            Document(doc_id=d, text=text, ground_truth=hits(rows, d)) for d, text in TEXTS.items()
        ]

    design = {"pmid:1": 0.5, "pmid:2": 0.25, "pmid:3": 1.0, "pmid:4": 0.5}
    first, second = documents(FIRST), documents(SECOND)
    double = DoubleTasks("x-double", 3, 3, 0, 0)
    section = kappa_section(first, second, double, kb, drawn(design))
    # The double documents are 3 of the batch's 4 drawn documents: each weighs 1/p × 4/3.
    weights = part_design(
        [Document(doc_id=d, text="", p_incl=p, batch=0) for d, p in design.items()], list(TEXTS)
    )
    assert weights is not None
    assert weights.weights.tolist() == pytest.approx([8 / 3, 16 / 3, 4 / 3])
    report = agreement(first, second, kb)
    shared = list(zip(first, second, strict=True))
    expected = corpus_agreement(
        report, list(TEXTS), kb, weights, CORPUS_BOOTSTRAP, 0, shared=shared
    )
    assert section.corpus == expected
    assert section.corpus.population_docs == pytest.approx(28 / 3)
    completeness = double_completeness(first, second, drawn(design)).to_dict()["corpus"]
    assert completeness is not None
    assert completeness["population_docs"] == pytest.approx(28 / 3)
    # One task without p_incl (here the primary one, which no double document is): no design,
    # no corpus figures (the sidecar cannot be told to ignore it), the sample figures unchanged.
    mixed = drawn({**design, "pmid:4": None})
    assert kappa_section(first, second, double, kb, mixed).corpus is None
    assert double_completeness(first, second, mixed).corpus is None


def test_the_kappa_section_is_the_report_without_its_confusion_then_the_tasks_then_corpus(
    kb: KB,
) -> None:
    first = [Document(doc_id=d, text=t, ground_truth=hits(FIRST, d)) for d, t in TEXTS.items()]
    second = [Document(doc_id=d, text=t, ground_truth=hits(SECOND, d)) for d, t in TEXTS.items()]
    double = DoubleTasks("x-double", 3, 3, 0, 0)
    design = {"pmid:1": 0.5, "pmid:2": 0.25, "pmid:3": 1.0, "pmid:4": 0.5}
    data = kappa_section(first, second, double, kb, drawn(design)).to_dict()
    report = agreement(first, second, kb).to_dict()
    del report["confusion"]
    assert list(data) == [*report, *double.to_dict(), "corpus"]
    assert list(report)[:3] == ["n_docs_shared", "n_pairs", "n_span_matched"]
    assert data["compared_tasks"] == 3 and data["project"] == "x-double"
    assert {k: data[k] for k in report} == report
