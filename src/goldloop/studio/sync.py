"""``sync``: push what is missing, then pull what was verified; safe to run while people annotate."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import PUSHED_ROLES, campaign_titles
from goldloop.formats.labelstudio.verify import PullResult
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio
from goldloop.studio.pull import pull
from goldloop.studio.push import Candidates, PushReport, push
from goldloop.studio.review import review_tag
from goldloop.text.parsing import Parsing


class PrefillChange(GoldloopError):
    """A sync whose candidates differ from those the campaign was pushed with (it would switch
    the projects' pre-fill, e.g. drop annotator B, while people annotate)."""

    def __init__(self, title: str, current: str, given: str | None) -> None:
        self.title, self.current, self.given = title, current, given
        super().__init__(
            f"Label Studio project {title!r} pre-fills from {current}; these candidates would "
            f"{'give ' + given if given else 'give new tasks no pre-fill'}: sync with the "
            "candidates the campaign was pushed with, or push to change them"
        )


@dataclass
class SyncReport:
    push: PushReport
    pull: PullResult


def sync(
    studio: Studio,
    documents: Sequence[Document],
    name: str,
    kb: KB,
    out: Path,
    *,
    a: Candidates | None = None,
    b: Candidates | None = None,
    roles: Iterable[str] | None = None,
    annotator: str | None = None,
    parsing: Parsing = Parsing(),
) -> SyncReport:
    """Push the missing documents, then write the verified gold and its sidecar to ``out``.

    The campaign's pre-fill stays as push set it: candidates giving another review tag (or none)
    raise :class:`PrefillChange` before anything is sent.
    """
    check_prefill(studio, name, a, b)
    pushed = push(studio, documents, name, kb, a=a, b=b, roles=roles, parsing=parsing)
    pulled, _ = pull(studio, name, kb, out, annotator=annotator, parsing=parsing)
    return SyncReport(pushed, pulled)


def check_prefill(studio: Studio, name: str, a: Candidates | None, b: Candidates | None) -> None:
    """Raise :class:`PrefillChange` when a pushed project pre-fills from another review tag."""
    given = review_tag(a.tag, b.tag if b else None) if a else None
    titles = [campaign_titles(name)[role] for role in PUSHED_ROLES]
    for title, project in projects.find_projects(studio, titles).items():
        if project.model_version and project.model_version != given:
            raise PrefillChange(title, project.model_version, given)
