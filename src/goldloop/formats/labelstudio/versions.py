"""Two annotators' versions of a double task: when they agree, and who kept a hit.

Two versions agree when they hold the same regions: the same span exactly, with the same folded
relation and direction. ``verify`` decides with it whether a double task is agreed; the
curation prediction (``goldloop.studio.curation``) says with it who kept each region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from goldloop.formats.gold import Hit

HitKey = tuple[int, int, str, str | None]


def hit_key(hit: Hit) -> HitKey:
    """What two versions must share for a region to agree: span, folded relation and direction."""
    return hit.a, hit.b, hit.entity_id, hit.direction


def versions_agree(first: Sequence[Hit], second: Sequence[Hit]) -> bool:
    return sorted(map(hit_key, first)) == sorted(map(hit_key, second))


def kept_by(hit: Hit, versions: Mapping[str, Sequence[Hit]]) -> list[str]:
    """The annotators whose version holds ``hit`` (same span, relation and direction)."""
    key = hit_key(hit)
    return [email for email, hits in versions.items() if key in set(map(hit_key, hits))]
