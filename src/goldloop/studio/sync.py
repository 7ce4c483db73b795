"""``sync``: push what is missing, then pull what was verified; safe to run while people annotate."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.connection import Connection
from goldloop.studio.pull import PullResult, pull
from goldloop.studio.push import Candidates, PushReport, push


@dataclass
class SyncReport:
    push: PushReport
    pull: PullResult


def sync(
    connection: Connection,
    client: Any,
    documents: Sequence[Document],
    name: str,
    kb: KB,
    out: Path,
    *,
    a: Candidates | None = None,
    b: Candidates | None = None,
    roles: Iterable[str] | None = None,
    annotator: str | None = None,
) -> SyncReport:
    """Push the missing documents, then write the verified gold and its sidecar to ``out``."""
    pushed = push(connection, client, documents, name, kb, a=a, b=b, roles=roles)
    pulled, _ = pull(connection, client, name, kb, out, annotator=annotator)
    return SyncReport(pushed, pulled)
