"""``goldloop plan``: where a corpus figure's interval stands, and the next batch that narrows it
most per annotator-minute (``goldloop.scoring.plan``); and the one line ``status --plan`` shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from goldloop.cli.common import (
    KbOption,
    UrlOption,
    check_outputs,
    console,
    figures_table,
    key_value_table,
    open_kb,
    open_studio,
)
from goldloop.cli.score import PreAnnotationsOption, SurrogateOption, surrogate_files
from goldloop.errors import GoldloopError, SettingError

if TYPE_CHECKING:
    from goldloop.scoring.plan import BatchPlan

PLAN_FILE = Path("plan.json")
DEFAULT_METRIC = "f1"


# Long only by its signature: typer reads each option from it (the body is under 80 lines).
def plan(
    ctx: typer.Context,
    gold: Annotated[Path, typer.Option("--gold", help="The pulled gold (with its design).")],
    sample: Annotated[
        Path, typer.Option("--sample", help="The sample dir the gold's documents were drawn into.")
    ],
    system: Annotated[
        str, typer.Option("--system", help="NAME=PATH of the predictions whose figure to narrow.")
    ],
    metric: Annotated[
        str, typer.Option("--metric", help="f1, precision, recall or entity_accuracy (corpus).")
    ] = DEFAULT_METRIC,
    half_width: Annotated[
        float | None,
        typer.Option(
            "--half-width", help="Target half-width of the anytime-valid 95% interval, e.g. 0.03."
        ),
    ] = None,
    budget_minutes: Annotated[
        float | None,
        typer.Option("--budget-minutes", help="Annotator-minutes of the next batch instead."),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project", help="Read minutes per document from this campaign's lead times."
        ),
    ] = None,
    minutes_per_document: Annotated[
        float | None,
        typer.Option(
            "--minutes-per-document",
            min=0.01,
            help="Minutes per document where none are measured yet (stated, not measured).",
        ),
    ] = None,
    usd_per_document: Annotated[
        float | None,
        typer.Option("--usd-per-document", min=0, help="Pre-annotation cost per document."),
    ] = None,
    match: Annotated[str, typer.Option("--match", help="Span matching: overlap or exact.")] = (
        "overlap"
    ),
    surrogate: SurrogateOption = None,
    pre_annotations: PreAnnotationsOption = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="The plan file to write.")] = PLAN_FILE,
    kb: KbOption = None,
    url: UrlOption = None,
) -> None:
    """The corpus figure now (fixed-size and anytime-valid intervals), whether the target is
    reached, and the next batch per stratum with its minutes; writes the plan for
    `sample --extend --plan`."""
    from goldloop.cli.named import named_files
    from goldloop.sample.planned import describe, sample_state
    from goldloop.scoring.plan import METRICS, BudgetTooSmall, NoEffortRecord, Target, plan_batch
    from goldloop.scoring.score_files import read_scored_gold

    if metric not in METRICS:
        raise SettingError("metric", f"must be one of {', '.join(METRICS)}, got {metric!r}")
    if (half_width is None) == (budget_minutes is None):
        raise GoldloopError("give one target: --half-width or --budget-minutes")
    if half_width is not None and not 0 < half_width < 1:
        raise SettingError("half_width", f"must lie in (0, 1), got {half_width}")
    if budget_minutes is not None and budget_minutes <= 0:
        raise SettingError("budget_minutes", f"must be > 0, got {budget_minutes}")
    [(name, path)] = named_files([system], "--system")
    files = surrogate_files(surrogate, pre_annotations)
    inputs = {"--gold": gold, "--sample": sample, "--system": path,
              "--surrogate": surrogate, "--pre-annotations": pre_annotations}  # fmt: skip
    if project is not None:
        door = open_studio(ctx, {"--out": out}, kb, url)
        check_outputs({"--out": out}, inputs)
        knowledge = door.kb
    else:
        check_outputs({"--out": out}, {**inputs, "--kb": kb})
        knowledge = open_kb(kb)
    state = sample_state(sample)
    documents = read_scored_gold(gold, knowledge)
    labelled = _labelled(documents, (name, path), knowledge, metric, match, files, str(gold), state)
    spent: dict[str, float] = {}
    if project is not None:
        from goldloop.studio.effort import effort_rows, minutes_by_document

        spent = minutes_by_document(effort_rows(door.export(project), door.kb))
    try:
        made = plan_batch(
            labelled,
            state.remaining,
            [spent.get(d.doc_id) for d in documents],
            Target(half_width, budget_minutes),
            stated_minutes=minutes_per_document,
            usd_per_document=usd_per_document,
        )
    except BudgetTooSmall as exc:
        raise SettingError("budget_minutes", str(exc)) from exc
    except NoEffortRecord as exc:
        raise GoldloopError(
            f"{exc}: give --project to read the campaign's lead times, or --minutes-per-document"
        ) from exc
    data = {
        "sample": describe(state),
        "gold": str(gold),
        "system": {"name": name, "path": str(path)},
        "metric": metric,
        "match": match,
        "surrogate": None
        if files is None
        else {"part": str(files[0]), "pre_annotations": str(files[1])},
        **made.to_dict(),
    }
    _print_plan(name, metric, made)
    if made.next_batch is None:
        console.print(
            "target reached: stop here and publish the anytime-valid interval; no plan written"
            if made.reached
            else "every document of the sample's pool is drawn: no batch left to plan"
        )
        return
    from goldloop.files.atomic import atomic_write_json

    atomic_write_json(out, data)
    console.print(f"plan: {out}; next: goldloop sample --extend --plan {out} --out {sample} ...")


def _print_plan(name: str, metric: str, made: BatchPlan) -> None:
    now, target, batch = made.standing, made.target, made.next_batch
    goal = (
        f"±{target.half_width:g} (anytime-valid)"
        if target.half_width is not None
        else f"{target.budget_minutes:g} minutes"
    )
    rows: list[tuple[str, object]] = [
        (f"corpus {metric} of {name} (estimate)", f"{now.value:.4f}"),
        ("human documents", now.n_docs),
        ("fixed-size 95% half-width (one look)", f"{now.half_width:.4f}"),
        ("anytime-valid 95% half-width (any look)", f"{now.anytime_half_width:.4f}"),
        ("target", goal),
        ("reached", "yes" if made.reached else "no"),
    ]
    if batch is not None:
        usd = "n/a" if batch.llm_usd is None else f"{batch.llm_usd:.2f}"
        rows += [
            ("next batch: documents", batch.documents),
            ("next batch: annotator-minutes", f"{batch.minutes:.1f}"),
            ("next batch: LLM cost (USD)", usd),
            ("expected half-width after it (anytime)", f"{batch.expected_anytime_half_width:.4f}"),
            ("expected half-width after it (fixed-size)", f"{batch.expected_half_width:.4f}"),
        ]
    console.print(key_value_table("plan", rows))
    planned = batch.by_stratum if batch is not None else {}
    console.print(
        figures_table(
            "strata",
            ("stratum", "left", "labelled", "spread", "min/doc", "minutes from", "next"),
            [
                [s.name, s.remaining, s.labelled, f"{s.spread:.3f}", f"{s.minutes:.2f}",
                 s.minutes_from, planned.get(s.name, 0)]
                for s in made.strata
            ],
            legend="spread: of the figure's per-document contributions; next: documents the plan "
            "draws there (where they narrow the interval most per minute, never none)",
        )
    )  # fmt: skip


def plan_line(plan_file: Path, documents: list[Any], kb: Any) -> tuple[str, dict[str, Any]]:
    """The one line ``status --plan`` shows, and its JSON: the target, the anytime-valid
    half-width on the campaign's gold now, and the next step."""
    from goldloop.sample.planned import PlanRefused, sample_state
    from goldloop.scoring.confseq import TUNED_AT
    from goldloop.scoring.plan import standing

    try:
        data = json.loads(plan_file.read_text(encoding="utf-8"))
        system, metric, target = data["system"], data["metric"], data["target"]
        made_after = data["sample"]["batches"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise GoldloopError(
            f"--plan {plan_file}: not a plan written by goldloop plan ({exc})"
        ) from exc
    parts = data.get("surrogate")
    files = None if not parts else (Path(parts["part"]), Path(parts["pre_annotations"]))
    labelled = _labelled(
        documents, (system["name"], Path(system["path"])), kb, metric,
        data.get("match", "overlap"), files, "the campaign's gold",
    )  # fmt: skip
    now = standing(labelled, tuned_at=data.get("anytime_tuned_at", TUNED_AT))
    goal = target.get("half_width")
    reached = goal is not None and bool(now.anytime_half_width <= goal)
    try:
        drawn = sample_state(data["sample"]["dir"]).batches > made_after
    except PlanRefused:
        drawn = False
    if reached:
        step = "stop: the target is reached (publish the anytime-valid interval)"
    elif drawn:
        step = "label the planned batch, pull, then goldloop plan again"
    else:
        step = f"goldloop sample --extend --plan {plan_file} ({data['next_batch']['documents']} documents)"
    aim = f"±{goal:g}" if goal is not None else f"{target['budget_minutes']:g} minutes"
    line = (
        f"plan: corpus {metric} of {system['name']} {now.value:.3f}, anytime-valid ±"
        f"{now.anytime_half_width:.3f} (fixed-size ±{now.half_width:.3f}, {now.n_docs} documents);"
        f" target {aim}: {step}"
    )
    return line, {**now.to_dict(), "target": target, "reached": reached, "next_step": step}


def _labelled(
    documents: list[Any],
    system: tuple[str, Path],
    kb: Any,
    metric: str,
    match: str,
    files: tuple[Path, Path] | None,
    source: str,
    state: Any = None,
) -> Any:
    """The gold's :class:`goldloop.scoring.plan.Labelled` for the system: read over the
    surrogate part's documents too when ``files`` (part, pre-annotations) are given."""
    from goldloop.scoring.inputs import read_predictions
    from goldloop.scoring.plan import gold_contributions
    from goldloop.scoring.ppi_inputs import read_surrogate

    parts = None if files is None else read_surrogate(files[0], files[1], documents, kb)
    ours = {d.doc_id for d in documents}
    scored = documents + ([] if parts is None else
                          [d for d in parts.documents if d.doc_id not in ours])  # fmt: skip
    predictions = read_predictions(system[1], scored, name=system[0], kb=kb)
    return gold_contributions(
        documents, predictions, kb, metric, match_mode=match, source=source, sample=state,
        parts=parts,
    )  # fmt: skip
