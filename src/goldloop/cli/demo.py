"""``goldloop demo``: the loop on the bundled demo corpus, ending in a Label Studio to open."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from goldloop.cli.common import (
    KbOption,
    console,
    err_console,
    invoked_as,
    key_value_table,
    open_kb,
    settings,
)
from goldloop.errors import CheckFailed
from goldloop.studio import server


def demo(
    ctx: typer.Context,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Run headless: verify the pushed tasks, stop Label Studio, exit 0/1."
        ),
    ] = False,
    kb: KbOption = None,
) -> None:
    """Sample the demo corpus, pre-annotate it, start Label Studio and push: ready to annotate."""
    from goldloop.llm.base import Provider
    from goldloop.studio.demo import PROJECT, check_pushed, next_commands, pick_annotator, run_demo

    knowledge = open_kb(kb)
    read = settings(ctx)
    home = server.studio_home(read)
    annotator = pick_annotator(knowledge, read)
    with console.status(
        f"sampling, pre-annotating ({annotator.tag}), starting Label Studio, pushing"
    ):
        run = run_demo(knowledge, annotator, settings=read)
    creds = server.credentials(home)
    pushed = sum(p.created for p in run.push.projects)
    console.print(
        key_value_table(
            "goldloop demo",
            [
                ("sample", run.sample_dir),
                ("documents (primary + double)", len(run.documents)),
                ("pre-annotator", run.annotator),
                (
                    "candidates",
                    f"{sum(len(h) for h in run.candidates.hits.values())} in {run.gold_path}",
                ),
                ("tasks created now", pushed),
                ("projects", ", ".join(p.title for p in run.push.projects)),
                ("Label Studio", run.state.url),
                ("login", f"{creds.username} / {creds.password}"),
            ],
        )
    )
    if check:
        problems = check_pushed(run, knowledge)
        server.stop(home)
        for problem in problems:
            err_console.print(f"[red]check:[/] {problem}")
        console.print("demo check: " + ("FAILED" if problems else "ok") + "; Label Studio stopped")
        if problems:
            raise CheckFailed()
        return
    program = invoked_as(sys.argv[0], read.environ.get("PATH", ""))
    console.print(
        f"Open {run.state.url}, log in, and verify the tasks of '{PROJECT}'. Then:\n"
        + "\n".join(f"  {command}" for command in next_commands(run, program)),
        soft_wrap=True,  # commands stay on one line, to copy and paste
        markup=False,
        highlight=False,
    )
    if program != "goldloop":
        bin_dir = Path(program).parent
        console.print(
            f"(goldloop is not on your PATH: `source {bin_dir}/activate` puts it there for this "
            "shell)",
            soft_wrap=True,
            markup=False,
        )
    if not isinstance(annotator, Provider):  # as the backend's Suggester decides
        console.print(
            "Interactive suggestions (goldloop backend, Auto-Annotation) need a provider key: "
            "without one the KB can only name what the lexical pre-annotation already marked."
        )
