"""``goldloop push``, ``pull`` and ``sync``: the loop between gold files and Label Studio."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import Progress

from goldloop.cli.common import (
    DEFAULT_ROLES,
    KbOption,
    RolesOption,
    UrlOption,
    check_outputs,
    console,
    kb_inputs,
    key_value_table,
    open_kb,
    parse_roles,
    parsing,
    print_whole,
    settings,
)
from goldloop.errors import GoldloopError
from goldloop.files.beside import verification_path
from goldloop.kb import KB

if TYPE_CHECKING:
    from goldloop.formats.labelstudio.verify import PullResult
    from goldloop.studio.push import Candidates, PushReport

Sample = Annotated[Path, typer.Option("--sample", help="Sample dir or documents JSONL.")]
Project = Annotated[
    str,
    typer.Option(
        "--project",
        help="Label Studio project name (role double goes to NAME-double, disputes to NAME-curate).",
    ),
]
CandidatesA = Annotated[
    Path | None,
    typer.Option("--candidates", help="Gold file of annotator A's hits (e.g. gold.llm-a.json)."),
]
CandidatesB = Annotated[
    Path | None, typer.Option("--other", help="Gold file of annotator B's hits.")
]
TagA = Annotated[
    str | None, typer.Option("--candidates-tag", help="A's tag (default: the hits' annotator).")
]
TagB = Annotated[
    str | None, typer.Option("--other-tag", help="B's tag (default: the hits' annotator).")
]
Out = Annotated[
    Path,
    typer.Option("--out", help="Verified gold JSON to write (sidecar: <out>.verification.json)."),
]
Annotator = Annotated[
    str | None, typer.Option("--annotator", help="Take this person's annotations (email).")
]


def push_command(
    ctx: typer.Context,
    sample: Sample,
    project: Project,
    candidates: CandidatesA = None,
    other: CandidatesB = None,
    candidates_tag: TagA = None,
    other_tag: TagB = None,
    roles: RolesOption = DEFAULT_ROLES,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Push documents as tasks and candidates as predictions (A, B, review); only what is missing."""
    from goldloop.formats.documents import read_documents
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.push import push, task_count

    wanted_roles = parse_roles(roles)
    knowledge = open_kb(kb)
    documents = read_documents(sample)
    a, b = _candidates(knowledge, candidates, candidates_tag, other, other_tag)
    studio = connect(resolve_connection(url, settings=settings(ctx)))
    with Progress(console=console, transient=True) as progress:
        total = task_count(documents, project, wanted_roles)
        bar = progress.add_task("pushing", total=total)
        report = push(
            studio, documents, project, knowledge, a=a, b=b, roles=wanted_roles,
            progress=lambda n: progress.advance(bar, n), parsing=parsing(ctx),
        )  # fmt: skip
    _print_push(report, studio.connection.url)


def pull_command(
    ctx: typer.Context,
    project: Project,
    out: Out,
    annotator: Annotator = None,
    per_annotator: Annotated[
        bool, typer.Option("--per-annotator", help="Also write <out-stem>.<email>.json per person.")
    ] = False,
    since: Annotated[
        bool,
        typer.Option(
            "--since",
            help="Re-read only the tasks changed since the last pull into --out (<out>.tasks.json).",
        ),
    ] = False,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Pull verified annotations (curated, else agreed, else primary) into gold with verdicts."""
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.pull import pull

    check_outputs(pull_outputs("--out", out), kb_inputs(kb))
    knowledge = open_kb(kb)
    read = settings(ctx)
    result, written = pull(
        connect(resolve_connection(url, settings=read)),
        project,
        knowledge,
        out,
        annotator=annotator,
        per_annotator=per_annotator,
        since=since,
        redis_url=read.redis_url,
        parsing=parsing(ctx),
    )
    _print_pull(result, out)
    for email, path in written.items():
        console.print(f"{email}: {path}")


def sync_command(
    ctx: typer.Context,
    sample: Sample,
    project: Project,
    out: Out,
    candidates: CandidatesA = None,
    other: CandidatesB = None,
    candidates_tag: TagA = None,
    other_tag: TagB = None,
    roles: RolesOption = DEFAULT_ROLES,
    annotator: Annotator = None,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Push what is missing, then pull what was verified (safe to run from cron while people work)."""
    from goldloop.formats.documents import input_files, read_documents
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.sync import PrefillChange, sync

    wanted_roles = parse_roles(roles)
    check_outputs(
        pull_outputs("--out", out),
        {
            "--sample": input_files(sample),
            "--candidates": candidates,
            "--other": other,
            **kb_inputs(kb),
        },
    )
    knowledge = open_kb(kb)
    documents = read_documents(sample)
    a, b = _candidates(knowledge, candidates, candidates_tag, other, other_tag)
    studio = connect(resolve_connection(url, settings=settings(ctx)))
    try:
        report = sync(
            studio, documents, project, knowledge, out, a=a, b=b,
            roles=wanted_roles, annotator=annotator, parsing=parsing(ctx),
        )  # fmt: skip
    except PrefillChange as exc:
        raise GoldloopError(
            f"--candidates/--other: project {exc.title!r} pre-fills from {exc.current}, these "
            f"give {exc.given or 'no pre-fill'}; sync with the --candidates and --other it was "
            "pushed with (push changes the pre-fill)"
        ) from exc
    _print_push(report.push, studio.connection.url)
    _print_pull(report.pull, out)


def pull_outputs(option: str, out: Path) -> dict[str, Path]:
    """Every file a pull into ``out`` writes, by the option that names it."""
    from goldloop.studio.pull import companions

    return {option: out} | {f"{option} (its {what})": p for what, p in companions(out).items()}


def _candidates(
    kb: KB, a_path: Path | None, a_tag: str | None, b_path: Path | None, b_tag: str | None
) -> tuple[Candidates | None, Candidates | None]:
    from goldloop.studio.push import Candidates

    if b_path is not None and a_path is None:
        raise GoldloopError("--other needs --candidates: a second annotator (B) needs a first (A)")
    a = Candidates.from_gold(a_path, kb, a_tag) if a_path else None
    b = Candidates.from_gold(b_path, kb, b_tag) if b_path else None
    return a, b


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
        if done.model_version:
            # The title of the ML backend's connection in Label Studio: copied, so never wrapped.
            print_whole(f"review tag of {done.title} (the ML backend's title)", done.model_version)
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
    from goldloop.formats.labelstudio.verify import summary_rows

    console.print(
        key_value_table(
            f"pull → {out} (sidecar {verification_path(out).name})", summary_rows(result)
        )
    )
