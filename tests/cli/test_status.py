"""``goldloop status``'s view: the corpus figures stand beside the sample's when the double tasks
carry the design, whole at 80 columns, and are absent when they do not."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from goldloop.cli.status import status_view
from goldloop.formats.gold import Document, Hit
from goldloop.formats.labelstudio.verify import Curation, Tally
from goldloop.kb import KB
from goldloop.scoring.agreement import agreement
from goldloop.scoring.completeness import estimate_completeness
from goldloop.scoring.design import CorpusFigures
from goldloop.studio.campaign import KappaSection
from goldloop.studio.campaign_agreement import DoubleTasks
from goldloop.studio.effort import figures
from goldloop.studio.status import (
    AnnotatorWork,
    Finish,
    RoleCounts,
    StatusCuration,
    StatusReport,
    Verdicts,
)

TEXT = "IL-6 activates STAT3."


def _report(kb: KB) -> StatusReport:
    """A campaign's status whose two annotators marked the same span, without a design."""
    relation = kb.lookup("activates")
    assert relation is not None
    hit = Hit(a=5, b=14, surface="activates", entity_id=relation.entity_id)
    versions = [[Document(doc_id="pmid:1", text=TEXT, ground_truth=[hit])] for _ in range(2)]
    kept_by = {"both": 0, "one": 0, "neither": 0}
    return StatusReport(
        projects={"primary": "campaign", "double": "campaign-double"},
        roles={role: RoleCounts(1, 1, 0, 0, 2, 0, 0) for role in ("primary", "double")},
        annotators={"alice@example.org": AnnotatorWork(2, 2, 0, 0)},
        verdicts=Verdicts(Tally(candidates=2, accept=2), Tally(candidates=2, accept=2), Tally()),
        decided={"single": 1, "agreed": 1, "curated": 0},
        curation=StatusCuration(Curation(0, 0, [], 0, kept_by), disputes_not_pushed=0),
        agreement=KappaSection(
            agreement(*versions, kb), DoubleTasks("campaign-double", 1, 1, 0, 0), None
        ),
        completeness=estimate_completeness([({(5, 14)}, {(5, 14)})]),
        effort=figures([]),
        finish=Finish(0, None, None, None, None),
    )


def _corpus(values: dict[str, float | None]) -> CorpusFigures:
    return CorpusFigures(values, {}, n_docs=1, n_strata=1, population_docs=2.0, weights="1/p_incl")


def _render(report: StatusReport) -> str:
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(status_view("campaign", report, Path("campaign.status.json")))
    return console.export_text()


def test_corpus_rows_appear_only_with_the_design(kb: KB) -> None:
    report = _report(kb)
    assert report.agreement is not None and report.completeness is not None
    plain = _render(report)
    assert "corpus" not in plain
    with_design = replace(
        report,
        agreement=replace(
            report.agreement,
            corpus=_corpus({"span_f1_lenient": 0.8125, "kappa_entity_id_folded": 0.4}),
        ),
        completeness=replace(
            report.completeness, corpus=_corpus({"recall_both": 0.9375, "n_mentions": 123.5})
        ),
    )
    shown = _render(with_design)
    lines = shown.splitlines()
    assert any(
        "corpus span F1 lenient / κ folded" in line and "0.812 / 0.400" in line for line in lines
    )
    assert any(
        "corpus recall (both) / mentions" in line and "0.938 / 123.500" in line for line in lines
    )
    assert all(len(line.rstrip()) <= 80 for line in lines)


def test_without_a_double_project_the_agreement_rows_say_n_a(kb: KB) -> None:
    shown = _render(replace(_report(kb), agreement=None, completeness=None))
    for row in ("span F1 lenient / labelled", "κ relation (folded)", "estimated recall"):
        assert any(row in line and "n/a" in line for line in shown.splitlines()), row
