"""The offline pre-annotator: KB labels found by the shared spaCy mention detector.

It needs no credentials and no network, so it is the default annotator when no provider key is
set. Its tag, ``lexical@<KB tag>``, names the KB version it matched against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldloop.kb import KB
from goldloop.text.detector import detect_mentions

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from goldloop.text.detector import DetectedMention


class LexicalAnnotator:
    """Wraps :func:`goldloop.text.detector.detect_mentions` behind the annotator interface."""

    name = "lexical"
    source = "lexical"

    def __init__(self, kb: KB) -> None:
        self.kb = kb
        self.model: str | None = None
        self.effort: str | None = None
        self.endpoint: str | None = None

    @property
    def tag(self) -> str:
        return f"lexical@{self.kb.tag}"

    def mentions(self, doc: Doc) -> list[DetectedMention]:
        return detect_mentions(doc, self.kb)
