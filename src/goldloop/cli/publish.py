"""``goldloop datasheet`` and ``goldloop report``: everything to publish about a gold set, as a
datasheet (Markdown and JSON) and as one self-contained HTML page of the campaign."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from goldloop.cli.common import (
    KbOption,
    UrlOption,
    check_outputs,
    console,
    kb_inputs,
    open_kb,
    option_group,
    settings,
)
from goldloop.cli.named import named_files
from goldloop.cli.score import (
    BootstrapOption,
    DesignOption,
    PreAnnotationsOption,
    SeedOption,
    SurrogateOption,
    design_mode,
    surrogate_files,
)
from goldloop.cli.status import CapMinutes, IntervalOption, RoundsOption
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_text, atomic_write_together, json_text
from goldloop.formats.labelstudio.tasks import campaign_titles
from goldloop.studio.effort import IDLE_CAP_MINUTES

if TYPE_CHECKING:
    from goldloop.formats.labelstudio.tasks import Campaign
    from goldloop.kb import KB
    from goldloop.studio.datasheet import Datasheet
    from goldloop.studio.mirror import Mirror


def sources(
    ctx: typer.Context,
    project: Annotated[
        str | None,
        typer.Option("--project", help="The campaign NAME in Label Studio (its projects)."),
    ] = None,
    gold: Annotated[
        Path | None, typer.Option("--gold", help="The verified gold JSON (pull's).")
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option("--sample", help="The sample dir (manifest and sampling reports)."),
    ] = None,
    system: Annotated[
        list[str] | None,
        typer.Option("--system", help="NAME=PATH of a system's predictions to score; repeat."),
    ] = None,
    bootstrap: BootstrapOption = 1000,
    seed: SeedOption = 0,
    design: DesignOption = "use",
    cap_minutes: CapMinutes = IDLE_CAP_MINUTES,
    surrogate: SurrogateOption = None,
    pre_annotations: PreAnnotationsOption = None,
    plan: Annotated[
        Path | None,
        typer.Option("--plan", help="A plan file (goldloop plan): where its figure stands now."),
    ] = None,
    url: UrlOption = None,
    kb: KbOption = None,
) -> Sources:
    """The options both commands share: what the datasheet is made from."""
    if project is None and gold is None:
        raise GoldloopError("give --project NAME (a campaign), --gold GOLD, or both")
    systems = named_files(system or [], "--system")
    if systems and gold is None:
        raise GoldloopError("--system: give the --gold to score it on")
    parts = surrogate_files(surrogate, pre_annotations)
    inputs = {"--gold": gold, "--sample": sample, **kb_inputs(kb), "--plan": plan,
              "--system": [path for _, path in systems], "--surrogate": surrogate,
              "--pre-annotations": pre_annotations}  # fmt: skip
    return Sources(ctx, project, gold, sample, systems, bootstrap, seed, design_mode(design),
                   cap_minutes, url, kb, inputs, parts, plan)  # fmt: skip


@dataclass(frozen=True)
class Sources:
    """What :func:`sources` read: the inputs (``inputs``: by option, the files no output may
    be), and how to make the datasheet of them."""

    ctx: typer.Context
    project: str | None
    gold: Path | None
    sample: Path | None
    systems: list[tuple[str, Path]]
    bootstrap: int
    seed: int
    design: str
    cap_minutes: float
    url: str | None
    kb: Path | None
    inputs: dict[str, Any]
    surrogate: tuple[Path, Path] | None
    plan: Path | None

    def default(self, suffix: str) -> Path:
        """``NAME<suffix>`` for a campaign, else ``<gold><suffix>`` beside the gold."""
        if self.project is not None:
            return Path(f"{self.project}{suffix}")
        assert self.gold is not None
        return self.gold.with_name(self.gold.name + suffix)

    def mirror(self) -> tuple[Mirror | None, Callable[[Mirror], int]]:
        """The campaign's tasks as read now, and how to bring them up to date (the number of
        tasks re-read); none without ``--project``."""
        from goldloop.studio.connection import connect, resolve_connection
        from goldloop.studio.mirror import catch_up, read_campaign

        if self.project is None:
            return None, lambda _: 0
        studio = connect(resolve_connection(self.url, settings=settings(self.ctx)))
        titles = list(campaign_titles(self.project).values())

        def update(mirror: Mirror) -> int:
            return catch_up(studio, mirror, titles)

        mirror = read_campaign(studio, self.project, titles)
        if not mirror.projects:
            raise GoldloopError(
                f"{studio.connection.url}: no Label Studio project of {self.project!r}"
            )
        return mirror, update

    def datasheet(self, mirror: Mirror | None) -> Datasheet:
        from goldloop.studio.datasheet import DatasheetInputs, make_datasheet

        kb = open_kb(self.kb)
        campaign = None if mirror is None else mirror.campaign()
        inputs = DatasheetInputs(
            kb, campaign, self.gold, self.sample, self.systems, self.bootstrap, self.seed,
            self.cap_minutes, self.design, self.surrogate,
            None if self.plan is None else self.standing(self.plan, campaign, kb),
        )  # fmt: skip
        return make_datasheet(inputs)

    def standing(self, plan: Path, campaign: Campaign | None, kb: KB) -> dict[str, Any]:
        """The plan's standing on the campaign's gold (as ``status --plan`` reads it), else on
        ``--gold``, with its one line."""
        from goldloop.cli.plan import plan_line
        from goldloop.scoring.score_files import read_scored_gold
        from goldloop.studio.campaign import verify_campaign

        if campaign is not None:
            documents = verify_campaign(campaign, kb).documents
        else:
            assert self.gold is not None
            documents = read_scored_gold(self.gold, kb)
        line, data = plan_line(plan, documents, kb)
        return {**data, "line": line}


with_sources = option_group("read", sources)


@with_sources
def datasheet_command(
    read: Sources,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="The datasheet in Markdown (default: NAME.datasheet.md)."),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            help="The same as JSON, each command's report in its section (default: the "
            "Markdown's name with .json).",
        ),
    ] = None,
) -> None:
    """The gold set's datasheet: what it is, how it was drawn, who annotated it and how, its
    agreement, corrections, completeness, effort and effect with their intervals, the systems
    scored on it, its limits and how to cite it; a section without its inputs says so."""
    from goldloop.studio.datasheet import markdown

    target = out or read.default(".datasheet.md")
    data = json_out or target.with_suffix(".json")
    check_outputs({"--out": target, "--json": data}, read.inputs)
    sheet = read.datasheet(read.mirror()[0])
    # Written together: a run that fails leaves the last good pair as it was.
    atomic_write_together({target: markdown(sheet), data: json_text(sheet.to_dict())})
    missing = [s.title for s in sheet.sections if s.missing]
    console.print(f"datasheet: {target}; JSON: {data}")
    if missing:
        console.print(f"not available: {'; '.join(missing)}")


@with_sources
def report_command(
    read: Sources,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="The HTML page (default: NAME.report.html)."),
    ] = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Rewrite the page as work arrives, until interrupted.")
    ] = False,
    interval: IntervalOption = 30.0,
    rounds: RoundsOption = None,
) -> None:
    """One self-contained HTML page of the campaign (no request leaves it): status, agreement,
    effort, effect, scores and the datasheet, with charts and sortable tables."""
    from goldloop.studio.page import page_html

    target = out or read.default(".report.html")
    check_outputs({"--out": target}, read.inputs)
    if watch and read.project is None:
        raise GoldloopError("--watch: give --project NAME (the campaign whose work arrives)")
    mirror, update = read.mirror()
    atomic_write_text(target, page_html(read.datasheet(mirror)))
    console.print(f"page: {target}")
    looks = 1
    while watch and mirror is not None and (rounds is None or looks < rounds):
        time.sleep(interval)
        looks += 1
        if update(mirror):
            atomic_write_text(target, page_html(read.datasheet(mirror)))
            console.print(f"page: {target} (rewritten: work arrived)")
