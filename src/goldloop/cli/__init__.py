"""The ``goldloop`` command: a thin door onto the library; its commands are listed in
:mod:`goldloop.cli.commands`, each in its own module."""

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
from goldloop.cli.commands import CommandTable
from goldloop.cli.common import ReaderGone, err_console, fit_consoles
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
    # The commands are cli.commands' table, each module imported only when its command is used.
    cls=CommandTable,
)


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
    # A reader that stops reading (`| head`) ends what is printed, not the run (help included).
    stdout, sys.stdout = sys.stdout, ReaderGone(sys.stdout)
    try:
        code = app(standalone_mode=False)
    except DesignRefused as exc:
        # Raised here only by the commands that read a design, each with its --design option.
        _fail(f"--design: {exc.message}; 'ignore' scores with equal weights", exc.exit_code)
    except SettingError as exc:
        _fail(f"--{exc.setting.replace('_', '-')}: {exc.message}", exc.exit_code)
    except GoldloopError as exc:
        if str(exc):
            _fail(str(exc), exc.exit_code)
        sys.exit(exc.exit_code)  # a check whose report, already printed, says it all
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
    finally:
        sys.stdout = stdout
    if code == EXIT_INTERRUPTED:
        _fail("interrupted", EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> NoReturn:
    # Click's own errors repeat option values too: a URL's password is masked in every line.
    line = escape(mask_credentials(message))
    err_console.print(f"[bold red]error:[/] {line}", highlight=False, soft_wrap=True)
    sys.exit(code)
