"""``goldloop status`` and ``goldloop effort``: where a campaign stands, and the human time it took."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Group
from rich.live import Live
from rich.text import Text

from goldloop.cli.common import (
    KbOption,
    UrlOption,
    console,
    figures_table,
    key_value_table,
    open_studio,
)
from goldloop.cli.loop import Project
from goldloop.files.atomic import atomic_write_json, atomic_write_together, json_text
from goldloop.scoring.report import NOTHING_ANNOTATED
from goldloop.studio.effort import IDLE_CAP_MINUTES

if TYPE_CHECKING:
    from goldloop.scoring.agreement import AgreementReport
    from goldloop.scoring.completeness import Completeness
    from goldloop.scoring.design import CorpusFigures
    from goldloop.studio.effort import EffortFigures
    from goldloop.studio.status import StatusReport

CapMinutes = Annotated[
    float,
    typer.Option(
        "--cap-minutes",
        min=1,
        help="Minutes an annotation counts at most (longer: the task sat idle).",
    ),
]

IntervalOption = Annotated[
    float, typer.Option("--interval", min=0.01, help="Seconds between refreshes with --watch.")
]
RoundsOption = Annotated[
    int | None,
    typer.Option("--rounds", min=1, help="With --watch: stop after this many refreshes."),
]


def status_command(
    ctx: typer.Context,
    project: Project,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Status JSON (default: NAME.status.json).")
    ] = None,
    watch: Annotated[bool, typer.Option("--watch", help="Refresh until interrupted.")] = False,
    interval: IntervalOption = 30.0,
    rounds: RoundsOption = None,
    cap_minutes: CapMinutes = IDLE_CAP_MINUTES,
    plan: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            help="A plan file (goldloop plan): one more line, the target, the anytime-valid "
            "half-width now and the next step.",
        ),
    ] = None,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Tasks per project, work per annotator, verdicts, κ and the time left; a table and JSON."""
    from goldloop.studio.status import campaign_status

    target = out or Path(f"{project}.status.json")
    door = open_studio(ctx, {"--out": target}, kb, url)

    def refresh() -> Group:
        campaign = door.export(project)
        report = campaign_status(campaign, door.kb, cap_minutes=cap_minutes)
        data = report.to_dict()
        line = None
        if plan is not None:
            from goldloop.cli.plan import plan_line
            from goldloop.studio.campaign import verified_gold

            documents = verified_gold(campaign, door.kb).documents
            line, data["plan"] = plan_line(plan, documents, door.kb)
        atomic_write_json(target, data)
        view = status_view(project, report, target)
        return view if line is None else Group(view, Text(line))

    if not watch:
        console.print(refresh())
        return
    done = 0
    with Live(refresh(), console=console, auto_refresh=False) as live:
        done += 1
        while rounds is None or done < rounds:
            time.sleep(interval)
            live.update(refresh(), refresh=True)
            done += 1


def effort_command(
    ctx: typer.Context,
    project: Project,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Effort JSON (default: NAME.effort.json).")
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option("--png", help="Distribution and throughput chart (default: NAME.effort.png)."),
    ] = None,
    cap_minutes: CapMinutes = IDLE_CAP_MINUTES,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Minutes per document and per verified mention, by annotator, pre-annotator, correction rate
    and length, from Label Studio's lead_time."""
    from goldloop.studio.effort import effort_png, effort_report, effort_rows

    target = out or Path(f"{project}.effort.json")
    chart = png or Path(f"{project}.effort.png")
    door = open_studio(ctx, {"--out": target, "--png": chart}, kb, url)
    rows = effort_rows(door.export(project), door.kb, cap_minutes=cap_minutes)
    report = effort_report(rows, cap_minutes=cap_minutes)
    # Written together once the chart is drawn: a chart that fails leaves the last good pair.
    atomic_write_together({target: json_text(report.to_dict()), chart: effort_png(rows)})
    overall = report.overall
    console.print(
        key_value_table(
            f"effort in {project}",
            [
                ("annotations", overall.annotations),
                ("timed (lead_time recorded)", overall.timed),
                (f"capped at {cap_minutes:g} min (idle)", report.capped_annotations),
                ("minutes", _num(overall.minutes)),
                ("minutes per document", _num(overall.minutes_per_document)),
                ("minutes per verified mention", _num(overall.minutes_per_verified_mention)),
            ],
        )
    )
    groups = ("by_annotator", "by_pre_annotator", "by_correction_rate", "by_length")
    for group in groups:
        last = group == groups[-1]
        console.print(
            _figures_table(group.replace("_", " "), report.groups[group], EFFORT_LEGEND * last)
        )
    if not rows:
        console.print(f"{NOTHING_ANNOTATED}: no completed annotation in {project}")
    console.print(f"report: {target}; chart: {chart}")


def status_view(project: str, report: StatusReport, target: Path) -> Group:
    """The status report as tables (the JSON holds every figure)."""
    roles = figures_table(
        f"status of {project}",
        ("project", "tasks", "annotated", "partly", "skipped", "annotations", "needed",
         "no prediction"),
        [
            [f"{report.projects[role]} ({role})", row.tasks, row.annotated, row.partly_annotated,
             row.skipped, row.annotations, row.annotations_needed, row.without_prediction]
            for role, row in report.roles.items()
        ],
        legend="annotated: tasks with the annotations they need (two people on a double task); "
        "partly: double tasks with one; needed: annotations still to do; no prediction: tasks "
        "no pre-annotation reached (retrieve predictions again for them; a blind project's "
        "tasks have none by design; blank in an older status file)",
    )  # fmt: skip
    people = figures_table(
        "annotators",
        ("annotator", "tasks", "kept", "added", "deleted"),
        [
            [email, work.tasks, work.kept, work.added, work.deleted]
            for email, work in report.annotators.items()
        ],
        legend="kept: pre-filled regions accepted or fixed; added: regions no pre-annotator "
        "proposed; deleted: pre-filled regions removed",
    )
    verdicts, agreement, finish = report.verdicts, report.agreement, report.finish
    kappa = None if agreement is None else agreement.report
    completeness = report.completeness
    folded, direction = (None, None) if kappa is None else (
        kappa.kappa_entity_id_folded, kappa.kappa_direction
    )  # fmt: skip
    corpus = (
        None if agreement is None else agreement.corpus,
        None if completeness is None else completeness.corpus,
    )
    summary = [
        ("verdicts (accept / fix / reject / added)", f"{verdicts.all.accept} / {verdicts.all.fix} / {verdicts.all.reject} / {verdicts.all.added}"),
        ("correction rate (all): (fix + reject) / candidates", _num(verdicts.all.correction_rate)),
        ("correction rate (anchored)", _num(verdicts.anchored.correction_rate)),
        ("correction rate (paraphrase)", _num(verdicts.paraphrase.correction_rate)),
        ("decided (single / agreed / curated)", "{single} / {agreed} / {curated}".format(**report.decided)),
        ("span F1 lenient / labelled, double tasks", _span_f1(kappa)),
        ("κ relation (folded) on double tasks", _num(folded)),
        ("κ direction on double tasks", _num(direction)),
        ("estimated recall (first / second / both)", _recalls(completeness)),
        *_corpus_rows(*corpus),
        ("disputes awaiting curation", len(report.curation.curation.awaiting_curation)),
        ("annotations still needed", finish.annotations_needed),
        ("median minutes per document", _num(finish.median_minutes_per_document)),
        ("work minutes left", _num(finish.work_minutes_left)),
        ("hours left at this pace", _num(finish.hours_left_at_this_pace)),
        ("JSON", target),
    ]  # fmt: skip
    return Group(roles, people, key_value_table("so far", summary))


def _span_f1(kappa: AgreementReport | None) -> str:
    """The agreement section's headline span F1s (n/a without a double project)."""
    if kappa is None or kappa.spans is None:
        return _num(None)
    spans = kappa.spans
    return f"{_num(spans.span_f1['lenient'].f1)} / {_num(spans.span_f1_labelled['lenient'].f1)}"


def _figures_table(title: str, groups: dict[str, EffortFigures], legend: str = "") -> Group:
    return figures_table(
        title,
        ("", "annotations", "min/doc", "median", "mentions", "min/mention"),
        [
            [name, row.annotations, _num(row.minutes_per_document),
             _num(row.median_minutes_per_document), row.verified_mentions,
             _num(row.minutes_per_verified_mention)]
            for name, row in groups.items()
        ],
        legend=legend,
    )  # fmt: skip


EFFORT_LEGEND = (
    "min/doc: minutes an annotation was open (mean, capped), median: their median; mentions: "
    "verified mentions (accepted, fixed, added or proposed); min/mention: minutes per verified "
    "mention; correction rate: (fix + reject) / candidates of the annotation"
)


def _corpus_rows(
    agreement: CorpusFigures | None, completeness: CorpusFigures | None
) -> list[tuple[str, str]]:
    """The corpus (design-weighted) figures beside the sample's, when the tasks carry the design."""
    rows = []
    if agreement is not None:
        figures = agreement.values
        spans = f"{_num(figures.get('span_f1_lenient'))} / {_num(figures.get('kappa_entity_id_folded'))}"
        rows.append(("corpus span F1 lenient / κ folded, double tasks", spans))
    if completeness is not None:
        figures = completeness.values
        counts = f"{_num(figures.get('recall_both'))} / {_num(figures.get('n_mentions'))}"
        rows.append(("corpus recall (both) / mentions in the corpus", counts))
    return rows


def _recalls(completeness: Completeness | None) -> str:
    if completeness is None:
        return "n/a"
    recalls = (completeness.recall_1, completeness.recall_2, completeness.recall_both)
    return " / ".join(_num(recall) for recall in recalls)


def _num(value: object) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
