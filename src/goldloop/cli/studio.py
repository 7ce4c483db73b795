"""``goldloop studio``: install, start, stop and describe the embedded Label Studio."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.core import ParameterSource

from goldloop.cli.common import (
    KbOption,
    UrlOption,
    check_outputs,
    console,
    kb_inputs,
    key_value_table,
    open_kb,
    parsing,
    print_whole,
    settings,
)
from goldloop.cli.loop import pull_outputs
from goldloop.errors import CheckFailed, GoldloopError, mask_credentials
from goldloop.files.atomic import atomic_write_json, atomic_write_text
from goldloop.formats.labelstudio.tasks import campaign_titles
from goldloop.settings import HOME_ENV, Settings
from goldloop.studio import server
from goldloop.studio.label_config import render_label_config

app = typer.Typer(
    help="Run a local Label Studio for the loop (its own environment, SQLite, loopback).",
    no_args_is_help=True,
)


@app.command("install")
def install(ctx: typer.Context) -> None:
    """Install Label Studio into .goldloop/studio/venv (skipped when present or $GOLDLOOP_LABEL_STUDIO is set)."""
    read = settings(ctx)
    path = server.label_studio_executable(server.studio_home(read), chosen=read.studio_executable)
    console.print(f"Label Studio: {path}")


@app.command("start")
def start(
    ctx: typer.Context,
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
    from_command_line = ctx.get_parameter_source("database") is ParameterSource.COMMANDLINE
    if database and from_command_line and mask_credentials(database) != database:
        # A command line is visible to every user of the machine (ps) and kept in shell history.
        raise GoldloopError(
            f"--database {mask_credentials(database)}: a password never comes from the "
            "command line; set PGPASSWORD, or give the URL in GOLDLOOP_STUDIO_DATABASE"
        )
    with console.status(
        "starting Label Studio (the first start runs its migrations: a minute or two)"
    ):
        read = settings(ctx)
        home = server.studio_home(read)
        state = server.start(home, port=port, timeout=timeout, database=database, settings=read)
    _print_state(state, home, read)


@app.command("stop")
def stop(ctx: typer.Context) -> None:
    """Stop the embedded Label Studio by its recorded pid."""
    read = settings(ctx)
    stopped = server.stop(server.studio_home(read))
    console.print(f"{'stopped' if stopped else 'not running'} ({_home_line(read)})")


@app.command("status")
def status(ctx: typer.Context) -> None:
    """Say whether the embedded Label Studio runs, and where; exit 1 when it does not."""
    read = settings(ctx)
    home = server.studio_home(read)
    state = server.status(home)
    if state is None:
        console.print(f"not running ({_home_line(read)})")
        raise CheckFailed()
    _print_state(state, home, read)


@app.command("users")
def users(
    ctx: typer.Context,
    emails: Annotated[
        list[str], typer.Argument(help="E-mail of each annotator or curator to sign up.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the logins to this new JSON file (0600) instead of printing the passwords.",
        ),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Create Label Studio users, members of the organisation, each with a generated password
    (printed once, or written to --out, a new file); people who are users already are left as
    they are."""
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.users import add_users, signup_emails

    check_outputs({"--out": out})
    if out is not None and out.exists():
        # Its passwords were shown only once: replacing the file would lose them.
        raise GoldloopError(f"--out {out}: exists already (earlier logins); choose a new file")
    wanted = signup_emails(emails)  # before the server is asked anything
    studio = connect(resolve_connection(url, settings=settings(ctx)))
    added = add_users(studio, wanted)
    logins = [
        {"email": user.email, "password": user.password, "url": studio.connection.url}
        for user in added
        if user.password is not None
    ]
    if out is not None:
        atomic_write_json(out, logins, private=True)  # it holds passwords
    for user in added:
        if user.password is None:
            print_whole(user.email, "a user already (password unchanged)")
        elif out is None:
            print_whole(user.email, f"password {user.password}")
        else:
            print_whole(user.email, f"created; password in {out}")
    console.print(
        f"Each person logs in at {studio.connection.url} (the password is shown only now"
        f"{'' if out is None else ' and kept in ' + str(out)}: Account & Settings changes it)."
    )


def _home_line(read: Settings) -> str:
    """Which home a studio command used, and why: what ``status`` from a subfolder must say."""
    how = "$GOLDLOOP_HOME" if read.environ.get(HOME_ENV) else "found from the working directory"
    return f"home {read.home.resolve()}, {how}"


def _print_state(state: server.ServerState, home: Path, read: Settings) -> None:
    creds = server.credentials(home)
    console.print(
        key_value_table(
            "Label Studio",
            [
                ("url", state.url),
                ("home", _home_line(read).removeprefix("home ")),
                ("login", creds.username),
                ("password", creds.password),
                ("pid", state.pid),
                ("data dir", state.data_dir),
                ("database", state.database or "SQLite in the data dir"),
            ],
        )
    )
    print_whole("url", state.url)
    console.print("goldloop commands use this server when LABEL_STUDIO_URL is not set.")


def label_config(
    ctx: typer.Context,
    kb: KbOption = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the config.")
    ] = Path("label_config/relations.xml"),
) -> None:
    """Generate the Label Studio labeling config from the KB."""
    check_outputs({"--output": output}, kb_inputs(kb))
    knowledge = open_kb(kb)
    atomic_write_text(output, render_label_config(knowledge, models=parsing(ctx).models))
    console.print(
        f"wrote {output} ({len(knowledge.canonical_relations())} relations, KB {knowledge.tag})"
    )


@app.command("webhook")
def webhook(
    ctx: typer.Context,
    project: Annotated[
        str,
        typer.Option(
            "--project", help="Campaign NAME (its NAME-double and NAME-curate projects too)."
        ),
    ],
    url: Annotated[
        str, typer.Option("--url", help="The backend's URL, as Label Studio reaches it.")
    ],
    gold: Annotated[
        Path,
        typer.Option(
            "--gold", help="Gold file to pull into now (the backend's GOLDLOOP_GOLD names it)."
        ),
    ],
    studio_url: Annotated[
        str | None,
        typer.Option(
            "--studio-url",
            help="Label Studio URL (default: $LABEL_STUDIO_URL, else the embedded server).",
            show_default=False,
        ),
    ] = None,
    kb: KbOption = None,
) -> None:
    """Keep GOLD current: pull it once, then have Label Studio send the backend every annotation
    created, updated or deleted in the campaign (with $BASIC_AUTH_USER/$BASIC_AUTH_PASS)."""
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.pull import pull
    from goldloop.studio.webhooks import basic_auth_header, register_webhooks, webhook_url

    read = settings(ctx)
    auth = read.basic_auth()
    webhook_url(url)  # checked before the gold is written
    check_outputs(pull_outputs("--gold", gold), kb_inputs(kb))
    knowledge = open_kb(kb)
    studio = connect(resolve_connection(studio_url, settings=read))
    result, _ = pull(
        studio,
        project,
        knowledge,
        gold,
        redis_url=read.redis_url,
        parsing=parsing(ctx),
    )
    headers = basic_auth_header(*auth) if auth else None
    done = register_webhooks(studio, list(campaign_titles(project).values()), url, headers)
    rows: list[tuple[str, Any]] = [
        (f"{r.title} (id {r.project_id})", f"webhook {r.webhook_id} {r.outcome}") for r in done
    ]
    rows += [
        ("gold", f"{gold} ({len(result.documents)} verified documents)"),
        ("basic auth", "sent" if headers else "none (BASIC_AUTH_USER/PASS not set)"),
    ]
    console.print(key_value_table(f"webhooks → {url.rstrip('/')}/webhook", rows))
    console.print(
        f"Set GOLDLOOP_GOLD={project}={gold.resolve()} (the path as the backend sees it) and "
        "LABEL_STUDIO_URL/LABEL_STUDIO_API_KEY in the backend's environment."
    )
