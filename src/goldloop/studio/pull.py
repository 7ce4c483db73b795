"""``pull``: verified gold from Label Studio, with verdicts and the verification sidecar.

The project (and its ``-double`` twin) is exported once through the project layer; the pure
reading (verdicts, hits, counts) lives in :mod:`goldloop.studio.verify` and is re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldloop.atomic import atomic_write_json
from goldloop.gold import write_gold
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Connection, StudioError
from goldloop.studio.verify import (
    COUNTS,
    SLICES,
    PullResult,
    Tally,
    annotators,
    summary_rows,
    verify,
)

# The reading moved to ``verify``; these names stay importable from here (README, DESIGN).
__all__ = [
    "COUNTS", "SLICES", "PullResult", "Tally", "annotators", "export_tasks", "per_annotator_path",
    "pull", "sidecar_path", "summary_rows", "verify", "write_verified",
]  # fmt: skip


def export_tasks(
    connection: Connection, client: Any, name: str
) -> tuple[list[str], list[dict[str, Any]]]:
    """All tasks of ``name`` and ``name-double`` (when it exists), with predictions and emails."""
    found = projects.find_projects(connection, client, [name, projects.double_name(name)])
    if name not in found:
        raise StudioError(f"{connection.url}: no Label Studio project titled {name!r}")
    tasks: list[dict[str, Any]] = []
    for project in found.values():
        tasks += projects.export_project(connection, client, project)
    return list(found), tasks


def write_verified(out: Path, result: PullResult) -> None:
    """The gold file and ``<out>.verification.json``, each written atomically."""
    write_gold(out, result.documents)
    atomic_write_json(sidecar_path(out), result.sidecar())


def sidecar_path(out: Path) -> Path:
    return out.with_name(out.name + ".verification.json")


def per_annotator_path(out: Path, email: str) -> Path:
    return out.with_name(f"{out.stem}.{email}{out.suffix}")


def pull(
    connection: Connection,
    client: Any,
    name: str,
    kb: KB,
    out: Path,
    *,
    annotator: str | None = None,
    per_annotator: bool = False,
) -> tuple[PullResult, dict[str, Path]]:
    """Export ``name`` (and its ``-double`` twin), write the verified gold, and one file per person."""
    titles, tasks = export_tasks(connection, client, name)
    result = verify(tasks, kb, annotator=annotator)
    result.projects = titles
    write_verified(out, result)
    written: dict[str, Path] = {}
    if per_annotator:
        for email in annotators(tasks):
            person = verify(tasks, kb, annotator=email)
            person.projects = titles
            written[email] = per_annotator_path(out, email)
            write_verified(written[email], person)
    return result, written
