"""``goldloop curate``: send the double tasks whose two annotators disagree to ``NAME-curate``."""

from __future__ import annotations

import typer

from goldloop.cli.common import (
    KbOption,
    UrlOption,
    console,
    key_value_table,
    open_kb,
    print_whole,
    settings,
)
from goldloop.cli.loop import Project


def curate_command(
    ctx: typer.Context, project: Project, url: UrlOption = None, kb: KbOption = None
) -> None:
    """Push each disputed task of NAME-double, once, to NAME-curate, pre-filled for the curator."""
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.curate import curate

    knowledge = open_kb(kb)
    studio = connect(resolve_connection(url, settings=settings(ctx)))
    report = curate(studio, project, knowledge)
    if report.project_id is None:
        console.print(f"{project} has no double tasks ({report.double_project}): nothing to curate")
        return
    console.print(
        key_value_table(
            f"curate → {studio.connection.url}",
            [
                ("double project", report.double_project),
                ("double tasks", report.double_tasks),
                *(
                    [("blind documents (with and without candidates)", report.blind_documents)]
                    if report.blind_documents is not None
                    else []
                ),
                ("with fewer than two annotators", report.fewer_than_two),
                ("agreed (to the gold as they are)", report.agreed),
                ("disputed", report.disputed),
                ("curate project", f"{report.curate_project} (id {report.project_id})"),
                ("curate tasks created", report.created),
                ("already in the curate project", report.already_present),
                ("model version (pre-fill)", report.model_version or "none (no disputes)"),
            ],
        )
    )
    if report.model_version:
        print_whole(f"curation tag of {report.curate_project}", report.model_version)
