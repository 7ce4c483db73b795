"""The core mention type: one mention of a KB relation in a document, by code points.

A span is ``[a, b)`` in code points of the document's Python string (as Label Studio 1.23 and
every interchange format goldloop writes count them), ``surface == text[a:b]``; the relation is
its KB id, with the label it was shown under and its direction where known. The records that
speak of one mention build on it: a gold file's hits convert both ways
(``formats.gold.Hit.mention`` / ``Hit.from_mention``: a hit sits inside its document, so it
carries no ``doc_id``), scoring's folded gold mentions (``scoring.regimes``), a precision study's
judged mentions, the judge's claims. A system's prediction (``scoring.inputs.Prediction``) is the
same place, document and span, with an id that may be missing (the system abstained).
"""

from __future__ import annotations

from dataclasses import dataclass


def mention_key(doc_id: str, a: int, b: int, entity_id: str) -> str:
    """A mention's identity in files (verdicts, labels): document, span and KB id."""
    return f"{doc_id}|{a}-{b}|{entity_id}"


@dataclass(frozen=True)
class Mention:
    """One mention: ``doc_id``, the code-point span ``[a, b)``, the KB id, the surface, and
    optionally the label shown for the relation and the direction."""

    doc_id: str
    a: int
    b: int
    entity_id: str
    surface: str
    label: str | None = None
    direction: str | None = None

    @property
    def key(self) -> str:
        return mention_key(self.doc_id, self.a, self.b, self.entity_id)
