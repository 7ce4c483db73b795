"""``goldloop push``, ``pull`` and ``sync``: the loop between gold files and Label Studio."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from rich.progress import Progress

from goldloop.cli.common import KB_OPTION, console, key_value_table, open_kb
from goldloop.kb import KB
from goldloop.sample import read_documents
from goldloop.studio.connection import connect, resolve_connection
from goldloop.studio.pull import PullResult, pull, sidecar_path, summary_rows
from goldloop.studio.push import Candidates, PushReport, push
from goldloop.studio.sync import sync

SAMPLE = typer.Option(..., "--sample", help="Sample dir or documents JSONL.")
PROJECT = typer.Option(
    ..., "--project", help="Label Studio project name (role double goes to NAME-double)."
)
CANDIDATES = typer.Option(
    None, "--candidates", help="Gold file of annotator A's hits (e.g. gold.llm-a.json)."
)
OTHER = typer.Option(None, "--other", help="Gold file of annotator B's hits.")
TAG_A = typer.Option(None, "--candidates-tag", help="A's tag (default: the hits' annotator).")
TAG_B = typer.Option(None, "--other-tag", help="B's tag (default: the hits' annotator).")
ROLES = typer.Option(
    "primary,double",
    "--roles",
    help="Comma-separated roles to push (documents without a role are kept).",
)
URL = typer.Option(
    None, "--url", help="Label Studio URL (default: $LABEL_STUDIO_URL, else the embedded server)."
)
OUT = typer.Option(
    ..., "--out", help="Verified gold JSON to write (sidecar: <out>.verification.json)."
)
ANNOTATOR = typer.Option(None, "--annotator", help="Take this person's annotations (email).")


def push_command(
    sample: Path = SAMPLE,
    project: str = PROJECT,
    candidates: Path | None = CANDIDATES,
    other: Path | None = OTHER,
    candidates_tag: str | None = TAG_A,
    other_tag: str | None = TAG_B,
    roles: str = ROLES,
    url: str | None = URL,
    kb: Path | None = KB_OPTION,
) -> None:
    """Push documents as tasks and candidates as predictions (A, B, review); only what is missing."""
    knowledge = open_kb(kb)
    documents = read_documents(sample)
    a, b = _candidates(knowledge, candidates, candidates_tag, other, other_tag)
    connection = resolve_connection(url)
    client = connect(connection)
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("pushing", total=len(documents))
        report = push(
            connection, client, documents, project, knowledge, a=a, b=b, roles=_roles(roles),
            progress=lambda n: progress.advance(bar, n),
        )  # fmt: skip
    _print_push(report, connection.url)


def pull_command(
    project: str = PROJECT,
    out: Path = OUT,
    annotator: str | None = ANNOTATOR,
    per_annotator: bool = typer.Option(
        False, "--per-annotator", help="Also write <out-stem>.<email>.json per person."
    ),
    since: bool = typer.Option(
        False,
        "--since",
        help="Re-read only the tasks changed since the last pull into --out (<out>.tasks.json).",
    ),
    url: str | None = URL,
    kb: Path | None = KB_OPTION,
) -> None:
    """Pull verified annotations into a gold file with verdicts, and its verification sidecar."""
    knowledge = open_kb(kb)
    connection = resolve_connection(url)
    result, written = pull(
        connection,
        connect(connection),
        project,
        knowledge,
        out,
        annotator=annotator,
        per_annotator=per_annotator,
        since=since,
        redis_url=os.environ.get("REDIS_URL"),
    )
    _print_pull(result, out)
    for email, path in written.items():
        console.print(f"{email}: {path}")


def sync_command(
    sample: Path = SAMPLE,
    project: str = PROJECT,
    out: Path = OUT,
    candidates: Path | None = CANDIDATES,
    other: Path | None = OTHER,
    candidates_tag: str | None = TAG_A,
    other_tag: str | None = TAG_B,
    roles: str = ROLES,
    annotator: str | None = ANNOTATOR,
    url: str | None = URL,
    kb: Path | None = KB_OPTION,
) -> None:
    """Push what is missing, then pull what was verified (safe to run from cron while people work)."""
    knowledge = open_kb(kb)
    documents = read_documents(sample)
    a, b = _candidates(knowledge, candidates, candidates_tag, other, other_tag)
    connection = resolve_connection(url)
    report = sync(
        connection, connect(connection), documents, project, knowledge, out, a=a, b=b,
        roles=_roles(roles), annotator=annotator,
    )  # fmt: skip
    _print_push(report.push, connection.url)
    _print_pull(report.pull, out)


def register(root: typer.Typer) -> None:
    root.command("push")(push_command)
    root.command("pull")(pull_command)
    root.command("sync")(sync_command)


def _candidates(
    kb: KB, a_path: Path | None, a_tag: str | None, b_path: Path | None, b_tag: str | None
) -> tuple[Candidates | None, Candidates | None]:
    a = Candidates.from_gold(a_path, kb, a_tag) if a_path else None
    b = Candidates.from_gold(b_path, kb, b_tag) if b_path else None
    return a, b


def _roles(roles: str) -> list[str]:
    return [r.strip() for r in roles.split(",") if r.strip()]


def _print_push(report: PushReport, url: str) -> None:
    for done in report.projects:
        rows: list[tuple[str, Any]] = [
            ("project", f"{done.title} (id {done.project_id})"),
            ("documents", done.documents),
            ("tasks created", done.created),
            ("already in the project", done.already_present),
            ("predictions sent with new tasks", done.predictions),
            ("predictions added to earlier tasks", done.predictions_added_to_existing),
            ("model version (pre-fill)", done.model_version or "none (no candidates)"),
        ]
        console.print(key_value_table(f"push → {url}", rows))
    if report.skipped_roles:
        console.print(
            "roles not pushed: "
            + ", ".join(f"{k} ({v})" for k, v in sorted(report.skipped_roles.items()))
        )
    if report.candidates_not_in_kb:
        console.print(
            f"[yellow]{report.candidates_not_in_kb} candidate hit(s) with ids not in the KB were not sent[/]"
        )


def _print_pull(result: PullResult, out: Path) -> None:
    console.print(
        key_value_table(f"pull → {out} (sidecar {sidecar_path(out).name})", summary_rows(result))
    )
