"""The ``goldloop`` command: a thin door onto the library; each command group has its own module."""

from __future__ import annotations

import logging
import sys

import typer

from goldloop import __version__, parse_cache
from goldloop.cli import agree as agree_commands
from goldloop.cli import annotate as annotate_commands
from goldloop.cli import backend as backend_commands
from goldloop.cli import baselines as baselines_commands
from goldloop.cli import gold as gold_commands
from goldloop.cli import kb as kb_commands
from goldloop.cli import pool as pool_commands
from goldloop.cli import precision as precision_commands
from goldloop.cli import sample as sample_commands
from goldloop.cli import score as score_commands
from goldloop.cli import studio as studio_commands
from goldloop.cli.common import err_console
from goldloop.errors import GoldloopError

app = typer.Typer(
    name="goldloop",
    help="Build a human-verified gold set of relation mentions, and score systems on it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# In the order of the loop: KB and files, sampling, pre-annotation, Label Studio, analysis.
app.add_typer(kb_commands.app, name="kb")
app.add_typer(gold_commands.app, name="gold")
app.command("sample")(sample_commands.sample)
app.command("audit")(sample_commands.audit)
app.command("stats")(sample_commands.stats)
app.command("annotate")(annotate_commands.annotate)
studio_commands.register(app)
app.command("backend")(backend_commands.backend)
app.command("agree")(agree_commands.agree)
app.command("score")(score_commands.score)
app.command("baselines")(baselines_commands.baselines)
app.add_typer(precision_commands.app, name="precision")
app.command("pool")(pool_commands.pool)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"goldloop {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details to stderr."),
    no_parse_cache: bool = typer.Option(
        False,
        "--no-parse-cache",
        help="Parse every text again instead of reading the parse cache (and do not write it).",
    ),
) -> None:
    parse_cache.set_enabled(not no_parse_cache)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def main() -> None:
    """Entry point: a library error prints one line and exits with its code, never a traceback."""
    try:
        app()
    except GoldloopError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
