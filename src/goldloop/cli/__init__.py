"""The ``goldloop`` command: a thin door onto the library; each command group has its own module."""

from __future__ import annotations

import logging
import os
import sys
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

# typer vendors click: its usage errors are raised from here when not in standalone mode.
from typer._click import exceptions as click_errors

from goldloop import __version__
from goldloop.cli import agree as agree_commands
from goldloop.cli import annotate as annotate_commands
from goldloop.cli import backend as backend_commands
from goldloop.cli import baselines as baselines_commands
from goldloop.cli import curate as curate_commands
from goldloop.cli import demo as demo_commands
from goldloop.cli import effect as effect_commands
from goldloop.cli import gold as gold_commands
from goldloop.cli import interchange as interchange_commands
from goldloop.cli import kb as kb_commands
from goldloop.cli import loop as loop_commands
from goldloop.cli import pool as pool_commands
from goldloop.cli import precision as precision_commands
from goldloop.cli import publish as publish_commands
from goldloop.cli import sample as sample_commands
from goldloop.cli import score as score_commands
from goldloop.cli import sheet as sheet_commands
from goldloop.cli import status as status_commands
from goldloop.cli import studio as studio_commands
from goldloop.cli.common import err_console, fit_consoles
from goldloop.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    DesignRefused,
    GoldloopError,
    SettingError,
    mask_credentials,
)
from goldloop.settings import Settings

app = typer.Typer(
    name="goldloop",
    help="Build a human-verified gold set of relation mentions, and score systems on it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Every command is registered here, in the order of the loop: KB and files, sampling,
# pre-annotation, Label Studio, analysis.
app.add_typer(kb_commands.app, name="kb")
app.add_typer(gold_commands.app, name="gold")
app.command("export")(interchange_commands.export)
app.command("import")(interchange_commands.import_)
app.command("sample")(sample_commands.sample)
app.command("audit")(sample_commands.audit)
app.command("stats")(sample_commands.stats)
app.command("annotate")(annotate_commands.annotate)
app.add_typer(studio_commands.app, name="studio")
app.command("label-config")(studio_commands.label_config)
app.command("push")(loop_commands.push_command)
app.command("pull")(loop_commands.pull_command)
app.command("sync")(loop_commands.sync_command)
app.command("curate")(curate_commands.curate_command)
app.add_typer(sheet_commands.app, name="sheet")
app.command("status")(status_commands.status_command)
app.command("effort")(status_commands.effort_command)
app.command("effect")(effect_commands.effect_command)
app.command("demo")(demo_commands.demo)
app.command("backend")(backend_commands.backend)
app.command("agree")(agree_commands.agree)
app.command("score")(score_commands.score)
app.command("baselines")(baselines_commands.baselines)
app.add_typer(precision_commands.app, name="precision")
app.command("pool")(pool_commands.pool)
app.command("datasheet")(publish_commands.datasheet_command)
app.command("report")(publish_commands.report_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"goldloop {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log progress details to stderr.")
    ] = False,
    no_parse_cache: Annotated[
        bool,
        typer.Option(
            "--no-parse-cache",
            help=(
                "Parse and decode every text again instead of reading the parse cache (its "
                "parses and decoded answers), and do not write it."
            ),
        ),
    ] = False,
) -> None:
    # The one reading of the environment for the command: passed down from here (cli.common's
    # ``settings`` and ``parsing``).
    read = Settings.from_env()
    ctx.obj = read.without_parse_cache() if no_parse_cache else read
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def main() -> None:
    """Entry point: every failure is one line on stderr and an exit code, never a traceback.

    Exit codes are :mod:`goldloop.errors`' (2 bad input or usage, 3 partial, 4 service, 5
    pending); 130 on Ctrl-C.
    """
    # Before the root command, whose options may fail to parse: every line goldloop prints.
    fit_consoles(os.environ)
    try:
        code = app(standalone_mode=False)
    except DesignRefused as exc:
        # Raised here only by the commands that read a design, each with its --design option.
        _fail(f"--design: {exc.message}; 'ignore' scores with equal weights", exc.exit_code)
    except SettingError as exc:
        _fail(f"--{exc.setting.replace('_', '-')}: {exc.message}", exc.exit_code)
    except GoldloopError as exc:
        _fail(str(exc), exc.exit_code)
    except click_errors.NoArgsIsHelpError as exc:
        typer.echo(exc.format_message())  # the help text
        sys.exit(exc.exit_code)
    except click_errors.ClickException as exc:
        command = (
            exc.ctx.command_path if isinstance(exc, click_errors.UsageError) and exc.ctx else ""
        )
        hint = f" (see `{command} --help`)" if command else ""
        _fail(f"{exc.format_message()}{hint}", exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _fail("interrupted", EXIT_INTERRUPTED)
    except OSError as exc:
        # A backstop: outputs are checked before work, but a disk can fill up on the way.
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}", EXIT_BAD_INPUT)
    if code == EXIT_INTERRUPTED:
        _fail("interrupted", EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> NoReturn:
    # Click's own errors repeat option values too: a URL's password is masked in every line.
    line = escape(mask_credentials(message))
    err_console.print(f"[bold red]error:[/] {line}", highlight=False, soft_wrap=True)
    sys.exit(code)
