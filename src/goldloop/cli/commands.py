"""Every ``goldloop`` command, one line each, and the group that imports a command's module only
when that command runs or shows its help.

A new command is one :class:`Entry` in :data:`COMMANDS`; its module imports heavy libraries
(spaCy, numpy, the Label Studio client, the provider SDKs) inside the functions that use them,
so ``goldloop --version`` and every ``--help`` start in a blink (tests/cli/test_commands.py
checks it, benchmarks/startup.py measures it).
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

import typer
from typer._click import Command
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo

# typer's own default, which the root app keeps: a command's callback shows a short traceback.
_PRETTY_EXCEPTIONS_SHORT = True


class Entry(NamedTuple):
    """One command: its name, ``"module:attr"`` (a command function or a ``typer.Typer`` group)
    and the one line the root ``--help`` lists for it."""

    name: str
    target: str
    help: str


# In the order of the loop: KB and files, sampling, pre-annotation, Label Studio, analysis.
COMMANDS: tuple[Entry, ...] = (
    Entry("kb", "goldloop.cli.kb:app", "Check and derive relation KBs."),
    Entry("gold", "goldloop.cli.gold:app", "Validate and describe gold JSON files."),
    Entry(
        "export",
        "goldloop.cli.interchange:export",
        "Write a gold file in one of the field's formats, every offset checked against its text.",
    ),
    Entry(
        "import",
        "goldloop.cli.interchange:import_",
        "Read a corpus as gold (or as candidates for `push --candidates`); ids fold through the "
        "KB, unmapped types are counted and listed. Writes <out>.report.json beside it.",
    ),
    Entry(
        "sample",
        "goldloop.cli.sample:sample",
        "Draw a stratified batch of eligible abstracts into a sample dir (manifest, texts, "
        "report).",
    ),
    Entry(
        "audit",
        "goldloop.cli.sample:audit",
        "Re-check eligibility, density vs length, gold gaps, label concentration and coverage.",
    ),
    Entry(
        "stats",
        "goldloop.cli.sample:stats",
        "Corpus, KB, sample and gold statistics in one dataset_stats.json (a section per input).",
    ),
    Entry(
        "annotate",
        "goldloop.cli.annotate:annotate",
        "Pre-annotate documents: the model quotes surfaces, goldloop resolves and checks them.",
    ),
    Entry(
        "studio",
        "goldloop.cli.studio:app",
        "Run a local Label Studio for the loop (its own environment, SQLite, loopback).",
    ),
    Entry(
        "label-config",
        "goldloop.cli.studio:label_config",
        "Generate the Label Studio labeling config from the KB.",
    ),
    Entry(
        "push",
        "goldloop.cli.loop:push_command",
        "Push documents as tasks and candidates as predictions (A, B, review); only what is "
        "missing.",
    ),
    Entry(
        "pull",
        "goldloop.cli.loop:pull_command",
        "Pull verified annotations (curated, else agreed, else primary) into gold with verdicts.",
    ),
    Entry(
        "sync",
        "goldloop.cli.loop:sync_command",
        "Push what is missing, then pull what was verified (safe to run from cron while people "
        "work).",
    ),
    Entry(
        "curate",
        "goldloop.cli.curate:curate_command",
        "Push each disputed task of NAME-double, once, to NAME-curate, pre-filled for the curator.",
    ),
    Entry(
        "sheet",
        "goldloop.cli.sheet:app",
        "The review sheet: export candidates to a TSV, fill in verdicts, import verified gold.",
    ),
    Entry(
        "status",
        "goldloop.cli.status:status_command",
        "Tasks per project, work per annotator, verdicts, κ and the time left; a table and JSON.",
    ),
    Entry(
        "effort",
        "goldloop.cli.status:effort_command",
        "Minutes per document and per verified mention, by annotator, pre-annotator, correction "
        "rate and length, from Label Studio's lead_time.",
    ),
    Entry(
        "plan",
        "goldloop.cli.plan:plan",
        "The corpus figure now (fixed-size and anytime-valid intervals), whether the target is "
        "reached, and the next batch per stratum with its minutes; writes the plan for `sample "
        "--extend --plan`.",
    ),
    Entry(
        "effect",
        "goldloop.cli.effect:effect_command",
        "Minutes per mention and recall with and without pre-annotation, the anchoring it causes "
        "and the agreement between the two conditions, from the blind documents (sample "
        "--n-blind).",
    ),
    Entry(
        "demo",
        "goldloop.cli.demo:demo",
        "Sample the demo corpus, pre-annotate it, start Label Studio and push: ready to annotate.",
    ),
    Entry(
        "backend",
        "goldloop.cli.backend:backend",
        "Serve Label Studio's ML backend protocol: pre-annotation on demand, interactive "
        "suggestions, and the live gold, set by environment.",
    ),
    Entry(
        "agree",
        "goldloop.cli.agree:agree",
        "Span F1 (strict, lenient, labelled, per relation), α_u, and κ on relation (raw and "
        "KB-folded) and direction, over documents both annotated, and the corpus "
        "(design-weighted) κ beside them.",
    ),
    Entry(
        "score",
        "goldloop.cli.score:score",
        "Score systems on a gold file: detection P/R/F1, entity accuracy, nervaluate schemas, "
        "linking-only accuracy and coverage, direction, slices and bootstrap intervals; beside "
        "them, the corpus (design-weighted) figures.",
    ),
    Entry(
        "baselines",
        "goldloop.cli.baselines:baselines",
        "Run baselines on the gold and score them (lexical, encoder: both regimes; llm: "
        "linking-only).",
    ),
    Entry(
        "precision",
        "goldloop.cli.precision:app",
        "Precision without gold: an LLM judge corrected by a labelled sample (PPI).",
    ),
    Entry(
        "pool",
        "goldloop.cli.pool:pool",
        "Each run's share of the pool of everything any run found (after KB folding); with the "
        "documents' p_incl, also on the corpus.",
    ),
    Entry(
        "datasheet",
        "goldloop.cli.publish:datasheet_command",
        "The gold set's datasheet: what it is, how it was drawn, who annotated it and how, its "
        "agreement, corrections, completeness, effort and effect with their intervals, the "
        "systems scored on it, its limits and how to cite it; a section without its inputs says "
        "so.",
    ),
    Entry(
        "report",
        "goldloop.cli.publish:report_command",
        "One self-contained HTML page of the campaign (no request leaves it): status, agreement, "
        "effort, effect, scores and the datasheet, with charts and sortable tables.",
    ),
)


def load(entry: Entry, *, markup: Any = "rich") -> Command:
    """The click command of ``entry``, its module imported now; built as ``app.command`` and
    ``app.add_typer`` would have built it."""
    module, _, attr = entry.target.partition(":")
    target = getattr(importlib.import_module(module), attr)
    if isinstance(target, typer.Typer):
        return get_group_from_info(
            TyperInfo(target, name=entry.name, cls=SubcommandTable),
            pretty_exceptions_short=_PRETTY_EXCEPTIONS_SHORT,
            suggest_commands=True,
            rich_markup_mode=markup,
        )
    return get_command_from_info(
        CommandInfo(name=entry.name, callback=target),
        pretty_exceptions_short=_PRETTY_EXCEPTIONS_SHORT,
        rich_markup_mode=markup,
    )


class _HelpIsBool(TyperGroup):
    def get_help_option(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        # typer coerces an option's value through pydantic unless it is a bool already, and a
        # group's --help, when a command's is given, has the value None: importing pydantic for
        # it was half the start of `goldloop CMD --help` over typer's own.
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option


class SubcommandTable(_HelpIsBool):
    """A command with sub-commands (``goldloop studio``, ``kb``, ...), as typer builds it."""


class CommandTable(_HelpIsBool):
    """The root group over :data:`COMMANDS`: a command's module is imported when the command is
    resolved (to run it or show its own help); the root's help lists the table's lines."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._entries = {entry.name: entry for entry in COMMANDS}
        self._loaded: dict[str, Any] = {}
        # Only the names: typer suggests a close one for a mistyped command from these keys.
        self.commands = dict.fromkeys(self._entries)  # type: ignore[assignment]
        self._listing = False

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return list(self._entries)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:  # type: ignore[override]
        entry = self._entries.get(cmd_name)
        if entry is None:
            return None
        if self._listing:
            # The root's help shows a name and a line: a stand-in, nothing imported.
            return TyperCommand(name=entry.name, help=entry.help)
        if cmd_name not in self._loaded:
            self._loaded[cmd_name] = load(entry, markup=self.rich_markup_mode)
        return self._loaded[cmd_name]

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:  # type: ignore[override]
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
