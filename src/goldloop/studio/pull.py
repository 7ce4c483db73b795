"""``pull``: verified gold from Label Studio, with verdicts and the verification sidecar.

The campaign's projects (``NAME``, and ``NAME-double`` and ``NAME-curate`` when they exist) are
exported once through the project layer; the pure reading (per document: curated, else agreed,
else the primary annotation; verdicts, hits, counts, κ before curation, effort) lives in
:mod:`goldloop.studio.verify` and :mod:`goldloop.studio.campaign`. Then every kept or added hit
gets ``surface_anchored`` from the same test pre-annotation uses
(:func:`goldloop.nlp.surface_anchored`), one parse per pulled document.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from goldloop.atomic import atomic_write_json
from goldloop.gold import Document, write_gold
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.campaign import verify_campaign
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


def anchor(documents: Sequence[Document], kb: KB, *, nlp: Any = None) -> None:
    """Set ``surface_anchored`` on every hit; each distinct text with hits is parsed once."""
    from goldloop.nlp import parse_many, surface_anchored

    texts = list(dict.fromkeys(doc.text for doc in documents if doc.ground_truth))
    parsed = dict(zip(texts, parse_many(texts, nlp=nlp), strict=True))
    for document in documents:
        for hit in document.ground_truth:
            relation = (kb.lookup(hit.label) if hit.label else None) or kb.get(hit.entity_id)
            hit.surface_anchored = (
                None
                if relation is None
                else surface_anchored(parsed[document.text], hit.a, hit.b, relation)
            )


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
    """Export the campaign ``name``, write the verified gold, and one file per person."""
    campaign = projects.export_campaign(connection, client, name)
    result = verify_campaign(campaign, kb, annotator=annotator)
    people: dict[str, PullResult] = {}
    if per_annotator:
        for email in annotators(campaign.of("primary") + campaign.of("double")):
            people[email] = verify_campaign(campaign, kb, annotator=email)
    anchor([d for r in (result, *people.values()) for d in r.documents], kb)
    write_verified(out, result)
    written = {email: per_annotator_path(out, email) for email in people}
    for email, person in people.items():
        write_verified(written[email], person)
    return result, written
