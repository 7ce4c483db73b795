"""The live gold: Label Studio's annotation webhooks keep each campaign's gold file current.

Label Studio posts a webhook once, with a 1 s timeout, and never retries; a deletion carries only
annotation ids. So :meth:`LiveGold.accept` only reads which tasks the event names and queues
them, and a worker thread does the rest: under the gold file's lock (:mod:`goldloop.files.gold_lock`)
it re-reads those tasks from Label Studio into the mirror beside the gold
(:mod:`goldloop.studio.mirror`) and rewrites the gold with pull's own code
(:func:`goldloop.studio.pull.write_campaign`). An event is only "these tasks changed": the order
of events and duplicates cannot matter. A deleted annotation is mapped to its task by the
mirror's annotation index; an id the mirror does not know, or an event from a project the mirror
lacks, makes the worker catch up with every change since the last read (as ``pull --since``).
Events queued while one is processed are handled together. A batch that still fails after
retries (Label Studio down) leaves the campaign marked stale: its next event catches up first.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldloop.files.gold_lock import gold_lock
from goldloop.formats.labelstudio.tasks import campaign_titles
from goldloop.kb import KB
from goldloop.studio.connection import Connection, Studio, connect
from goldloop.studio.mirror import (
    catch_up,
    mirror_path,
    read_campaign,
    read_mirror,
    refresh_tasks,
)
from goldloop.studio.pull import write_campaign
from goldloop.text.parsing import Parsing

log = logging.getLogger("goldloop.backend")

ACTIONS = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED")
RETRY_DELAYS_S = (2.0, 10.0, 30.0)


@dataclass(frozen=True)
class Change:
    """What one event says changed: tasks by id, or annotations (deleted) by id."""

    campaign: str
    title: str
    project_id: int | None
    task_ids: frozenset[int] = frozenset()
    annotation_ids: frozenset[int] = frozenset()
    catch_up: bool = False


def read_event(payload: Mapping[str, Any], campaigns: Iterable[str]) -> Change | str:
    """The change a webhook payload announces, or why it is ignored."""
    action = payload.get("action")
    if action not in ACTIONS:
        return f"not an annotation event ({action})"
    project = payload.get("project")
    title = project.get("title") if isinstance(project, dict) else None
    if not isinstance(title, str):
        return "the event names no project title (its webhook sends no payload)"
    campaign = next((c for c in campaigns if title in campaign_titles(c).values()), None)
    if campaign is None:
        return f"no gold file is set for project {title!r}"
    project_id = project.get("id") if isinstance(project, dict) else None
    if action == "ANNOTATIONS_DELETED":
        deleted = _ids(payload.get("annotations"))
        return Change(campaign, title, _int(project_id), annotation_ids=deleted)
    tasks = set(_ids(payload.get("task")))
    for annotation in _listed(payload.get("annotation")):
        if isinstance(annotation.get("task"), int):
            tasks.add(annotation["task"])
    if not tasks:
        return "the event names no task"
    return Change(campaign, title, _int(project_id), task_ids=frozenset(tasks))


@dataclass
class LiveGold:
    """The queue and the worker that keep ``gold`` (a file per campaign name) current."""

    gold: dict[str, Path]
    kb: KB
    connection: Connection | None
    redis_url: str | None = None
    parsing: Parsing = field(default_factory=Parsing)  # how pulled hits are parsed to anchor
    retry_delays_s: tuple[float, ...] = RETRY_DELAYS_S
    _stale: set[str] = field(default_factory=set, repr=False)
    _queue: queue.Queue[Change] = field(default_factory=queue.Queue, repr=False)
    _busy: threading.Event = field(default_factory=threading.Event, repr=False)
    _studio: Studio | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def accept(self, payload: Mapping[str, Any]) -> str:
        """Queue what the event changed (returns at once): ``queued`` or why it is ignored."""
        if self.connection is None:
            return "ignored: set LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY for the live gold"
        change = read_event(payload, self.gold)
        if isinstance(change, str):
            log.info("webhook %s ignored: %s", payload.get("action"), change)
            return f"ignored: {change}"
        self._start()
        self._busy.set()
        self._queue.put(change)
        return "queued"

    def wait_idle(self, timeout_s: float = 60.0) -> bool:
        """Whether every queued change was written within ``timeout_s`` (tests, benchmarks)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self._busy.is_set() and self._queue.empty():
                return True
            time.sleep(0.02)
        return False

    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._work, name="goldloop-live-gold", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        while True:
            changes = [self._queue.get()]
            self._busy.set()
            while True:
                try:
                    changes.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            by_campaign: dict[str, list[Change]] = {}
            for change in changes:
                by_campaign.setdefault(change.campaign, []).append(change)
            for campaign, batch in by_campaign.items():
                self._apply_with_retries(campaign, batch)
            if self._queue.empty():
                self._busy.clear()

    def _apply_with_retries(self, campaign: str, changes: list[Change]) -> None:
        if campaign in self._stale:  # an earlier batch was given up on: its tasks are unknown
            changes = [*changes, Change(campaign, campaign, None, catch_up=True)]
        for delay in (*self.retry_delays_s, None):
            try:
                self.apply(campaign, changes)
                self._stale.discard(campaign)
                return
            except Exception as exc:  # the worker must outlive any one failure
                self._studio = None
                if delay is None:
                    self._stale.add(campaign)
                    log.error(
                        "live gold %s: gave up (%s); its next event (or `goldloop pull --since`) "
                        "catches up",
                        campaign,
                        exc,
                    )
                    return
                log.warning("live gold %s: %s; retrying in %g s", campaign, exc, delay)
                time.sleep(delay)
                # The failed batch may have been half read: catch up with everything instead.
                changes = [Change(campaign, campaign, None, catch_up=True)]

    def apply(self, campaign: str, changes: list[Change]) -> None:
        """Re-read what ``changes`` name and rewrite ``campaign``'s gold, under its lock."""
        assert self.connection is not None
        if self._studio is None:
            self._studio = connect(self.connection)
        studio, out = self._studio, self.gold[campaign]
        titles = list(campaign_titles(campaign).values())
        with gold_lock(out, self.redis_url):
            mirror = read_mirror(mirror_path(out), campaign)
            if mirror is None:
                mirror = read_campaign(studio, campaign, titles)
            else:
                stale = False
                tasks: dict[str, set[int]] = {}
                for change in changes:
                    known = mirror.projects.get(change.title)
                    if change.catch_up or known is None or known.id != change.project_id:
                        stale = True
                        continue
                    tasks.setdefault(change.title, set()).update(change.task_ids)
                    for annotation_id in change.annotation_ids:
                        where = mirror.task_of_annotation(annotation_id)
                        if where is None:
                            stale = True
                        else:
                            tasks.setdefault(where[0], set()).add(where[1])
                for title, ids in tasks.items():
                    refresh_tasks(studio, mirror, title, ids)
                if stale:
                    catch_up(studio, mirror, titles)
            write_campaign(out, mirror, self.kb, parsing=self.parsing)
        log.info("live gold %s: %d event(s) applied to %s", campaign, len(changes), out)


def _listed(value: object) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict)]


def _ids(value: object) -> frozenset[int]:
    return frozenset(item["id"] for item in _listed(value) if isinstance(item.get("id"), int))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None
