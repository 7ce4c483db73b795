"""``pull``: verified gold from Label Studio, with verdicts and the verification sidecar.

The project (and its ``-double`` twin) is exported once through the project layer; the pure
reading (verdicts, hits, counts) lives in :mod:`goldloop.studio.verify` and is re-exported here.
The exported tasks are kept beside the gold (:mod:`goldloop.studio.mirror`): ``since`` re-reads
only the tasks changed since then, and the backend's live gold does the same per event; both
then write through :func:`write_campaign`, so every way of pulling gives the same files. Writers
of one gold file take its lock (:mod:`goldloop.gold_lock`) first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldloop.atomic import atomic_write_json
from goldloop.gold import write_gold
from goldloop.gold_lock import gold_lock
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Connection, StudioError
from goldloop.studio.mirror import (
    Mirror,
    catch_up,
    mirror_path,
    read_campaign,
    read_mirror,
    write_mirror,
)
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
    "COUNTS", "SLICES", "PullResult", "Tally", "annotators", "campaign_titles", "export_tasks",
    "per_annotator_path", "pull", "sidecar_path", "summary_rows", "verified", "verify",
    "write_campaign", "write_verified",
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


def campaign_titles(name: str) -> list[str]:
    """The projects whose tasks make the gold of campaign ``name``, in pull's order."""
    return [name, projects.double_name(name)]


def verified(mirror: Mirror, kb: KB, *, annotator: str | None = None) -> PullResult:
    """Pull's rules over the campaign's tasks as read: the verified gold and the sidecar."""
    result = verify(mirror.all_tasks(), kb, annotator=annotator)
    result.projects = mirror.titles()
    return result


def write_campaign(
    out: Path,
    mirror: Mirror,
    kb: KB,
    *,
    annotator: str | None = None,
    per_annotator: bool = False,
) -> tuple[PullResult, dict[str, Path]]:
    """Write the gold, its sidecar, one file per person and the mirror (hold the gold's lock)."""
    if mirror.name not in mirror.projects:
        raise StudioError(f"no Label Studio project titled {mirror.name!r}")
    result = verified(mirror, kb, annotator=annotator)
    write_verified(out, result)
    written: dict[str, Path] = {}
    if per_annotator:
        for email in annotators(mirror.all_tasks()):
            written[email] = per_annotator_path(out, email)
            write_verified(written[email], verified(mirror, kb, annotator=email))
    write_mirror(mirror_path(out), mirror)
    return result, written


def pull(
    connection: Connection,
    client: Any,
    name: str,
    kb: KB,
    out: Path,
    *,
    annotator: str | None = None,
    per_annotator: bool = False,
    since: bool = False,
    redis_url: str | None = None,
) -> tuple[PullResult, dict[str, Path]]:
    """Export ``name`` (and its ``-double`` twin), write the verified gold, and one file per person.

    ``since``: re-read only the tasks changed since the last pull into ``out`` (everything when
    there was none). ``redis_url``: the gold's lock is held in Redis (shared with the backend).
    """
    with gold_lock(out, redis_url):
        mirror = read_mirror(mirror_path(out), name) if since else None
        if mirror is None:
            mirror = read_campaign(connection, client, name, campaign_titles(name))
        else:
            catch_up(connection, client, mirror, campaign_titles(name))
        if name not in mirror.projects:
            raise StudioError(f"{connection.url}: no Label Studio project titled {name!r}")
        return write_campaign(out, mirror, kb, annotator=annotator, per_annotator=per_annotator)
