"""``pull``: verified gold from Label Studio, with verdicts and the verification sidecar.

The campaign's projects (``NAME``, and ``NAME-double`` and ``NAME-curate`` when they exist) are
exported once through the project layer; the pure reading (per document: curated, else agreed,
else the primary annotation; verdicts, hits, counts, κ before curation, effort) lives in
:mod:`goldloop.formats.labelstudio.verify` and :mod:`goldloop.studio.campaign`. Then every kept or added hit
gets ``surface_anchored`` from the same test pre-annotation uses
(:func:`goldloop.text.nlp.surface_anchored`), one parse per pulled document.

The exported tasks are kept beside the gold (:mod:`goldloop.studio.mirror`): ``since`` re-reads
only the tasks changed since then, and the backend's live gold does the same per event; every
way of pulling then writes through :func:`write_campaign`, so all give the same files. Writers
of one gold file take its lock (:mod:`goldloop.files.gold_lock`) first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from goldloop.files.atomic import atomic_write_together, json_text
from goldloop.files.beside import verification_path
from goldloop.files.gold_lock import gold_lock
from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import campaign_titles, check_campaign, double_name
from goldloop.formats.labelstudio.verify import PullResult, annotators
from goldloop.heap import paused_gc
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.campaign import verify_campaign
from goldloop.studio.connection import Studio
from goldloop.studio.mirror import (
    Mirror,
    catch_up,
    mirror_path,
    mirror_text,
    read_campaign,
    read_mirror,
)
from goldloop.text.parsing import Parsing


def export_tasks(studio: Studio, name: str) -> tuple[list[str], list[dict[str, Any]]]:
    """All tasks of ``name`` and ``name-double`` (when it exists), with predictions and emails."""
    found = projects.find_projects(studio, [name, double_name(name)])
    check_campaign(name, found, f"{studio.connection.url}: ")
    tasks: list[dict[str, Any]] = []
    for project in found.values():
        tasks += projects.export_project(studio, project)
    return list(found), tasks


def verified_files(out: Path, result: PullResult) -> dict[Path, str]:
    """The gold file and ``<out>.verification.json``, as written."""
    return {
        out: json_text([doc.to_json() for doc in result.documents]),
        verification_path(out): json_text(result.to_dict()),
    }


def companions(out: Path) -> dict[str, Path]:
    """The files a pull writes beside the gold ``out``, by what they are (outputs to check)."""
    return {"sidecar": verification_path(out), "task mirror": mirror_path(out)}


def per_annotator_path(out: Path, email: str) -> Path:
    return out.with_name(f"{out.stem}.{email}{out.suffix}")


def write_campaign(
    out: Path,
    mirror: Mirror,
    kb: KB,
    *,
    annotator: str | None = None,
    per_annotator: bool = False,
    parsing: Parsing = Parsing(),
) -> tuple[PullResult, dict[str, Path]]:
    """Pull's rules over the campaign's tasks as read: write the gold, its sidecar, one file per
    person and the mirror (the caller holds the gold's lock); ``parsing`` anchors the hits."""
    # Every task becomes documents and hits while the export is held: a collector pass would
    # walk the whole export again at each step.
    with paused_gc():
        campaign = mirror.campaign()
        check_campaign(mirror.name, campaign.titles.values())
        result = verify_campaign(campaign, kb, annotator=annotator)
        people: dict[str, PullResult] = {}
        if per_annotator:
            for email in annotators(
                campaign.of("primary") + campaign.of("double") + campaign.of("blind")
            ):
                people[email] = verify_campaign(campaign, kb, annotator=email)
        anchor([d for r in (result, *people.values()) for d in r.documents], kb, parsing)
        # One commit: a failure on any file (the mirror's folder unwritable) leaves all as they were.
        files = verified_files(out, result)
        written = {email: per_annotator_path(out, email) for email in people}
        for email, person in people.items():
            files |= verified_files(written[email], person)
        files[mirror_path(out)] = mirror_text(mirror)
        atomic_write_together(files)
        return result, written


def anchor(documents: Sequence[Document], kb: KB, parsing: Parsing = Parsing()) -> None:
    """Set ``surface_anchored`` on every hit; each distinct text with hits is parsed once."""
    from goldloop.text.nlp import parse_many, surface_anchored  # spaCy loads only to anchor hits

    texts = list(dict.fromkeys(doc.text for doc in documents if doc.ground_truth))
    parsed = dict(zip(texts, parse_many(texts, parsing), strict=True))
    for document in documents:
        for hit in document.ground_truth:
            relation = (kb.lookup(hit.label) if hit.label else None) or kb.get(hit.entity_id)
            hit.surface_anchored = (
                None
                if relation is None
                else surface_anchored(parsed[document.text], hit.a, hit.b, relation)
            )


def pull(
    studio: Studio,
    name: str,
    kb: KB,
    out: Path,
    *,
    annotator: str | None = None,
    per_annotator: bool = False,
    since: bool = False,
    redis_url: str | None = None,
    parsing: Parsing = Parsing(),
) -> tuple[PullResult, dict[str, Path]]:
    """Export the campaign ``name``, write the verified gold, and one file per person.

    ``since``: re-read only the tasks changed since the last pull into ``out`` (everything when
    there was none). ``redis_url``: the gold's lock is held in Redis (shared with the backend).
    ``parsing``: how the hits' texts are parsed to anchor them.
    """
    titles = list(campaign_titles(name).values())
    if since and read_mirror(mirror_path(out), name) is not None:
        # Read, update and write the mirror as one step: another writer may be at it too.
        with gold_lock(out, redis_url):
            mirror = read_mirror(mirror_path(out), name) or Mirror(name)
            catch_up(studio, mirror, titles)
            check_campaign(name, mirror.projects, f"{studio.connection.url}: ")
            return write_campaign(
                out, mirror, kb, annotator=annotator, per_annotator=per_annotator, parsing=parsing
            )
    # A full read needs no lock (nor leaves a lock file when it fails): only the write does.
    mirror = read_campaign(studio, name, titles)
    check_campaign(name, mirror.projects, f"{studio.connection.url}: ")
    with gold_lock(out, redis_url):
        return write_campaign(
            out, mirror, kb, annotator=annotator, per_annotator=per_annotator, parsing=parsing
        )
