"""``goldloop studio``: install, start, stop and describe the embedded Label Studio."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldloop.atomic import atomic_write_text
from goldloop.cli.common import KbOption, check_outputs, console, key_value_table, open_kb
from goldloop.studio import server
from goldloop.studio.label_config import render_label_config

app = typer.Typer(
    help="Run a local Label Studio for the loop (its own environment, SQLite, loopback).",
    no_args_is_help=True,
)


@app.command("install")
def install() -> None:
    """Install Label Studio into .goldloop/studio/venv (skipped when present or $GOLDLOOP_LABEL_STUDIO is set)."""
    path = server.label_studio_executable()
    console.print(f"Label Studio: {path}")


@app.command("start")
def start(
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, help="Loopback port (default: a free one)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds to wait for /health.")
    ] = server.START_TIMEOUT,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            envvar="GOLDLOOP_STUDIO_DATABASE",
            help="PostgreSQL for Label Studio: postgresql://user@host:port/name (a password from"
            " PGPASSWORD, or in the URL when given through GOLDLOOP_STUDIO_DATABASE)."
            " Default: SQLite in the data dir.",
        ),
    ] = None,
) -> None:
    """Start the embedded Label Studio (installing it when missing) and print its URL and login."""
    with console.status(
        "starting Label Studio (the first start runs its migrations: a minute or two)"
    ):
        state = server.start(port=port, timeout=timeout, database=database)
    _print_state(state)


@app.command("stop")
def stop() -> None:
    """Stop the embedded Label Studio by its recorded pid."""
    console.print("stopped" if server.stop() else "not running")


@app.command("status")
def status() -> None:
    """Say whether the embedded Label Studio runs, and where; exit 1 when it does not."""
    state = server.status()
    if state is None:
        console.print("not running")
        raise typer.Exit(1)
    _print_state(state)


def _print_state(state: server.ServerState) -> None:
    creds = server.credentials()
    console.print(
        key_value_table(
            "Label Studio",
            [
                ("url", state.url),
                ("login", creds.username),
                ("password", creds.password),
                ("pid", state.pid),
                ("data dir", state.data_dir),
                ("database", state.database or "SQLite in the data dir"),
            ],
        )
    )
    console.print("goldloop commands use this server when LABEL_STUDIO_URL is not set.")


def label_config(
    kb: KbOption = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the config.")
    ] = Path("label_config/relations.xml"),
) -> None:
    """Generate the Label Studio labeling config from the KB."""
    check_outputs({"--output": output}, {"--kb": kb})
    knowledge = open_kb(kb)
    atomic_write_text(output, render_label_config(knowledge))
    console.print(
        f"wrote {output} ({len(knowledge.canonical_relations())} relations, KB {knowledge.tag})"
    )
