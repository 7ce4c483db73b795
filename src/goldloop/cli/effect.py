"""``goldloop effect``: what pre-annotation saves and anchors, from the campaign's blind documents."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from goldloop.cli.common import (
    KbOption,
    UrlOption,
    console,
    figures_table,
    open_studio,
)
from goldloop.cli.loop import Project
from goldloop.cli.score import SeedOption
from goldloop.cli.status import CapMinutes
from goldloop.errors import DesignRefused, GoldloopError
from goldloop.files.atomic import atomic_write_together, json_text
from goldloop.studio.effort import IDLE_CAP_MINUTES

if TYPE_CHECKING:
    from goldloop.scoring.effect import Crossing
    from goldloop.studio.campaign_effect import CampaignEffect

LEGEND = (
    "pre: the annotation with the pre-annotator's candidates; blind: without (another person, "
    "the same documents); minutes per final-gold mention; recall against the final gold; "
    "corpus figures (weights 1/p_incl) with stratified bootstrap 95% intervals; the JSON says "
    "what each estimates"
)


def effect_command(
    ctx: typer.Context,
    project: Project,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="The report, every figure (default: NAME.effect.json)."),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option(
            "--png",
            help="Chart: minutes per mention and recall, with and without "
            "(default: NAME.effect.png).",
        ),
    ] = None,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=1, help="Document bootstrap resamples.")
    ] = 1000,
    seed: SeedOption = 0,
    cap_minutes: CapMinutes = IDLE_CAP_MINUTES,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Minutes per mention and recall with and without pre-annotation, the anchoring it causes
    and the agreement between the two conditions, from the blind documents (sample --n-blind)."""
    from goldloop.scoring.effect import effect_png
    from goldloop.studio.campaign_effect import campaign_effect

    # Always both, named as effort names its own; written together once every figure is known,
    # so a run that fails leaves the last good pair as it was.
    target = json_out or Path(f"{project}.effect.json")
    chart = png or Path(f"{project}.effect.png")
    door = open_studio(ctx, {"--json": target, "--png": chart}, kb, url)
    try:
        effect = campaign_effect(
            door.export(project),
            door.kb,
            cap_minutes=cap_minutes,
            bootstrap=bootstrap,
            seed=seed,
        )
    except DesignRefused as exc:
        # effect has no way to score without the design: the campaign's tasks must be mended.
        # The message names the campaign already (studio.campaign_agreement.campaign_design's source).
        raise GoldloopError(
            f"{exc.message}; effect weighs documents by 1/p_incl, so "
            "every task of the campaign needs its p_incl, or none"
        ) from None
    atomic_write_together({target: json_text(effect.to_dict()), chart: effect_png(effect.report)})
    console.print(effect_table(effect))
    warning = crossing_warning(effect.report.crossing)
    if warning:
        console.print(warning)
    console.print(f"report: {target}; chart: {chart}")


def effect_table(effect: CampaignEffect) -> Any:
    """One row per figure: its value and interval (the JSON also says what each estimates)."""
    from goldloop.scoring.effect import FIGURES

    report, docs = effect.report, effect.documents
    title = (
        f"effect of pre-annotation in {effect.project}: {len(docs.paired)} of "
        f"{docs.blind_documents} blind documents paired ({report.timed_pairs} timed)"
    )
    rows = [
        [name, _num(figure.value), _interval(figure.interval)]
        for name, figure in report.figures.items()
        if name in FIGURES
    ]
    rows += [
        [f"alpha_u_{kind} (sample)", _num(alpha.value), _interval(alpha.interval)]
        for kind, alpha in (("spans", report.alpha_spans), ("relations", report.alpha_relations))
    ]
    return figures_table(title, ("figure", "value", "95% interval"), rows, legend=LEGEND)


def crossing_warning(crossing: Crossing) -> str:
    """One line when the person and the condition are confounded."""
    if crossing.crossed is not False:
        return ""
    who = [
        f"{', '.join(people)} only {condition}"
        for people, condition in (
            (crossing.only_with_candidates, "with candidates"),
            (crossing.only_without_candidates, "without"),
        )
        if people
    ]
    return (
        f"warning: people are not crossed ({'; '.join(who)}): the effect of the person and of "
        "the candidates are confounded; give each person documents in both conditions"
    )


def _num(value: object) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _interval(bounds: list[float | None] | None) -> str:
    if not bounds or bounds[0] is None or bounds[1] is None:
        return "n/a"
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"
