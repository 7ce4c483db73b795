"""``goldloop agree``: span F1, α_u and Cohen's κ between two annotators."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    UrlOption,
    check_outputs,
    console,
    err_console,
    figures_table,
    kb_inputs,
    key_value_table,
    open_kb,
    settings,
)
from goldloop.cli.score import BootstrapOption, DesignOption, SeedOption, design_mode
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_json
from goldloop.kb import KB

if TYPE_CHECKING:
    from goldloop.scoring.agreement import AgreementReport
    from goldloop.scoring.design import CorpusFigures
    from goldloop.scoring.span_agreement import SpanAgreement
    from goldloop.studio.campaign_agreement import BlindAgreement, CampaignAgreement, RoleAgreements

TOP_DISAGREEMENTS = 15
TOP_RELATIONS = 10
# The κ report's own keys (the table before the span figures).
KAPPA_KEYS = (
    "n_docs_shared", "n_pairs", "n_span_matched", "n_only_a", "n_only_b", "kappa_entity_id",
    "kappa_entity_id_folded", "n_direction_pairs", "kappa_direction",
)  # fmt: skip
KAPPA_LEGEND = (
    "n_docs_shared: documents both annotated; n_pairs: spans compared (pairs plus spans only one "
    "side marked); n_span_matched: spans both marked (any overlap); n_only_a / n_only_b: spans "
    "only A / only B marked; kappa_entity_id: Cohen's κ on the relation as written "
    "(undefined over one category); kappa_entity_id_folded: the same after KB folding; "
    "n_direction_pairs: matched spans whose folded relation agrees; kappa_direction: κ on their direction"
)


# Long only by its signature: typer reads each option from it (the body is under 80 lines).
def agree(
    ctx: typer.Context,
    gold: Annotated[Path | None, typer.Option("--gold", help="Annotator A's gold JSON.")] = None,
    other: Annotated[Path | None, typer.Option("--other", help="Annotator B's gold JSON.")] = None,
    studio_project: Annotated[
        str | None,
        typer.Option(
            "--studio-project",
            help="Compare the two annotations per task of the Label Studio project NAME-double.",
        ),
    ] = None,
    url: UrlOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Report JSON (default: <gold>.agreement.json or <NAME>.agreement.json).",
        ),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option(
            "--png", help="Per relation span F1 chart (default: the report's name with .png)."
        ),
    ] = None,
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    design: DesignOption = "use",
) -> None:
    """Span F1 (strict, lenient, labelled, per relation), α_u, and κ on relation (raw and
    KB-folded) and direction, over documents both annotated, and the corpus (design-weighted) κ
    beside them."""
    from goldloop.formats.gold import read_gold
    from goldloop.scoring.agreement import agreement, shared_corpus_agreement
    from goldloop.scoring.design import NO_DESIGN, read_design
    from goldloop.scoring.span_agreement import write_relation_chart

    files = gold is not None and other is not None
    if files == (studio_project is not None) or (gold is None) != (other is None):
        raise GoldloopError("give --gold A --other B, or --studio-project NAME")
    the_kb = open_kb(kb, equivalences)
    roles: RoleAgreements | None = None
    blind: BlindAgreement | None = None
    compared: str | None = None  # the tasks compared, printed after the report is written
    if gold is not None and other is not None:
        target = out or gold.with_name(gold.name + ".agreement.json")
        chart = png or target.with_suffix(".png")
        check_outputs(
            {"--out": target, "--png": chart},
            {"--gold": gold, "--other": other, **kb_inputs(kb, equivalences)},
        )
        # Read without folding: the raw κ compares ids as the annotators wrote them.
        documents, others = read_gold(gold).documents, read_gold(other).documents
        report = agreement(documents, others, the_kb)
        data = report.to_dict()
        title = f"agreement {gold.name} (A) vs {other.name} (B)"
        # Weighed by the design A's file carries.
        corpus = shared_corpus_agreement(
            report,
            documents,
            others,
            the_kb,
            lambda shared: read_design(shared, design_mode(design), gold),
            bootstrap,
            seed,
        )
        data["corpus"] = None if corpus is None else corpus.to_dict()
    else:
        target = out or Path(f"{studio_project}.agreement.json")
        chart = png or target.with_suffix(".png")
        check_outputs({"--out": target, "--png": chart}, kb_inputs(kb, equivalences))
        found = agreement_of_campaign(
            ctx, str(studio_project), url, the_kb, design_mode(design), bootstrap, seed
        )
        report, roles, blind, corpus, double = (
            found.report, found.roles, found.blind, found.corpus, found.double
        )  # fmt: skip
        data = found.to_dict()
        title = f"agreement in {double.project}: first vs second annotation per task"
        compared = (
            f"{double.compared} of {double.tasks} task(s) compared; "
            f"{double.fewer_than_two} with fewer than two annotations, "
            f"{double.extra_annotations} annotation(s) beyond the second not used"
        )
    if report.spans is not None:
        write_relation_chart(report.spans.per_relation, _names(the_kb), chart)
    atomic_write_json(target, data)
    if compared is not None:
        console.print(compared)
    show_report(report, the_kb, title)
    if corpus is not None:
        console.print(corpus_line(corpus))
    elif not report.n_docs_shared:
        # Not a failure (two people's parts may not overlap yet), but every figure is
        # undefined, and the design is not the reason.
        err_console.print(
            f"no document both annotated: {report.n_docs_only_a} only A annotated, "
            f"{report.n_docs_only_b} only B; every figure is undefined"
        )
    else:
        err_console.print(NO_DESIGN)
    if roles is not None:
        show_roles(roles, blind)
    console.print(f"report: {target}\nchart: {chart}")


def agreement_of_campaign(
    ctx: typer.Context,
    name: str,
    url: str | None,
    kb: KB,
    design: str,
    bootstrap: int,
    seed: int,
) -> CampaignAgreement:
    """The campaign's agreement, its projects exported from Label Studio."""
    from goldloop.studio.campaign_agreement import campaign_agreement
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.project import export_campaign

    studio = connect(resolve_connection(url, settings=settings(ctx)))
    # NAME too: its tasks are part of the draw the double documents' design is read from
    # (studio.campaign_agreement.campaign_design), and hold the blind documents' copies to pair.
    campaign = export_campaign(
        studio,
        name,
        roles=("primary", "double", "curate", "blind"),
        need=("double",),
    )
    return campaign_agreement(campaign, kb, design=design, bootstrap=bootstrap, seed=seed)


def show_report(report: AgreementReport, kb: KB, title: str) -> None:
    data = report.to_dict()
    rows = [(key, _fmt(data[key])) for key in KAPPA_KEYS]
    console.print(key_value_table(title, rows, legend=KAPPA_LEGEND))
    if report.spans is not None:
        show_spans(report.spans, kb)
    if report.n_docs_only_a or report.n_docs_only_b:
        console.print(
            f"[yellow]not compared:[/] {report.n_docs_only_a} document(s) only A annotated, "
            f"{report.n_docs_only_b} only B annotated"
        )
    cells = [
        (count, a, b) for a, row in report.confusion.items() for b, count in row.items() if a != b
    ]
    if not cells:
        return
    top = sorted(cells, key=lambda c: (-c[0], c[1], c[2]))[:TOP_DISAGREEMENTS]
    console.print(
        figures_table(
            "most frequent disagreements (folded)",
            ("A", "B", "spans"),
            [[_name(a, kb), _name(b, kb), count] for count, a, b in top],
            names=2,
            legend="A / B: the relation each side gave a span (∅: the other side marked no span "
            "there); spans: how many spans",
        )
    )


def show_roles(roles: RoleAgreements, blind: BlindAgreement | None = None) -> None:
    """Who agrees with whom: each person against the pre-annotation shown and the curator, and
    with blind documents the annotation with candidates against the one without."""
    rows = [("pre-annotation shown", who, r) for who, r in roles.person_pre_annotation.items()]
    rows += [("curator", who, r) for who, r in roles.curator_person.items()]
    rows += [
        (f"pre-annotator {tag}", who, r)
        for who, by_tag in roles.person_pre_annotator.items()
        for tag, r in by_tag.items()
    ]
    rows.sort(key=lambda row: (row[0], row[1]))
    if blind is not None and blind.report is not None:
        rows.append(
            ("blind documents: with candidates", f"without ({blind.project})", blind.report)
        )
    cells = []
    for a, b, report in rows:
        spans = report.spans
        assert spans is not None  # agreement() always computes them
        cells.append(
            [
                a,
                b,
                report.n_docs_shared,
                _fmt(spans.span_f1["lenient"].f1),
                _fmt(spans.span_f1_labelled["lenient"].f1),
                _fmt(spans.alpha_spans.value),
            ]
        )
    if cells:
        console.print(
            figures_table(
                "who agrees with whom (span F1 lenient, labelled)",
                ("A", "B", "docs", "F1", "labelled F1", "α_u spans"),
                cells,
                names=2,
                legend="docs: documents both annotated; F1: lenient span F1 (any shared "
                "character); labelled F1: also the same relation and direction; α_u spans: "
                "Krippendorff's unitizing alpha of the spans (chance-corrected)",
            )
        )


def show_spans(spans: SpanAgreement, kb: KB) -> None:
    """Span F1 and α_u with their intervals, incomplete positions, the most marked relations."""
    from goldloop.scoring.span_agreement import Figure

    figures: list[tuple[str, Figure]] = [
        *((f"span F1 {mode}", figure) for mode, figure in spans.span_f1.items()),
        *((f"labelled F1 {mode}", figure) for mode, figure in spans.span_f1_labelled.items()),
    ]
    cells: list[list[object]] = [
        [name, _fmt(f.f1), _interval(f.interval), _fmt(f.precision), _fmt(f.recall)]
        for name, f in figures
    ]
    for name, alpha in (("α_u spans", spans.alpha_spans), ("α_u relations", spans.alpha_relations)):
        cells.append([name, _fmt(alpha.value), _interval(alpha.interval), "", ""])
    console.print(
        figures_table(
            "span agreement over the shared documents (sample)",
            ("figure", "value", "interval", "precision", "recall"),
            cells,
            legend="strict: the same offsets; lenient: any shared character; labelled: also the "
            "same relation and direction; interval: 95%, resampling documents; precision: B's "
            "spans paired / B's spans, recall: A's spans paired / A's spans (blank for α_u); "
            "α_u: Krippendorff's unitizing alpha, chance-corrected over the characters",
        )
    )
    console.print(
        f"incomplete: {_count(spans.only_a)} span(s) only A marked, {_count(spans.only_b)} only B "
        "(κ pairs them with ∅)"
    )
    if not spans.per_relation:
        return
    console.print(
        figures_table(
            f"per relation, the {TOP_RELATIONS} most marked",
            ("relation", "A", "B", "F1 strict", "F1 lenient", "interval"),
            [
                [
                    _name(row.key, kb),
                    _count(row.n_a),
                    _count(row.n_b),
                    _fmt(row.f1_strict),
                    _fmt(row.f1_lenient),
                    _interval(row.interval_lenient),
                ]
                for row in spans.per_relation[:TOP_RELATIONS]
            ],
            legend="A / B: spans each side marked with this relation (folded); F1 strict / "
            "lenient: as above; interval: 95% of F1 lenient, resampling documents",
        )
    )


def _names(kb: KB) -> dict[str, str]:
    return {relation.entity_id: relation.label for relation in kb}


def _count(value: float) -> str:
    """A count, held as a float because weighted counts may be fractional."""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _interval(interval: list[float | None]) -> str:
    low, high = interval if interval else (None, None)
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def corpus_line(corpus: CorpusFigures) -> str:
    """The corpus span F1s and κ figures with their intervals, and what the documents stand for."""
    figures = []
    for key in (
        "span_f1_lenient",
        "span_f1_labelled_lenient",
        "kappa_entity_id_folded",
        "kappa_entity_id",
        "kappa_direction",
    ):
        if key in corpus.values:
            low, high = corpus.intervals.get(key, [None, None])
            interval = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
            figures.append(f"{key} {_fmt(corpus.values[key])}{interval}")
    return (
        f"corpus ({corpus.n_docs} documents standing for {corpus.population_docs:.0f}): "
        + ", ".join(figures)
    )


def _name(entity_id: str, kb: KB) -> str:
    from goldloop.scoring.agreement import NONE

    relation = kb.get(entity_id)
    return entity_id if entity_id == NONE or relation is None else f"{relation.label} ({entity_id})"


def _fmt(value: object) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
