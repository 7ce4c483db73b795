"""The lexical pre-annotator's decoded answers, stored in the parse cache beside the parses.

The lexical annotator answers from a text's parse, the KB and goldloop's own code alone, so what
it gave a text (its hits, its item count and its rejections) is kept like a parse: a later run
over the same text reads it back instead of loading the parse and detecting again (an
``annotate`` re-run, the backend asked again for a task, a second project holding the same
abstract). An entry is stored under the parse's pipeline and text key
(:meth:`goldloop.parse_cache.ParseCache.put_answers`); its kind names all else the answer
depends on: the annotator tag, the KB's sha256, ``verbal_only``, the pipes that ran, and the
sha256 of the source of the modules that decide the answer, so an upgrade or an edit of any of
them is a miss, never a stale answer. Answers share the parse cache's file, size bound,
eviction and switches (``--no-parse-cache``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from goldloop.decode import DocumentResult
from goldloop.gold import Document, Hit
from goldloop.parse_cache import ParseCache, pipeline_id

if TYPE_CHECKING:
    from spacy.language import Language

    from goldloop.kb import KB
    from goldloop.lexical import LexicalAnnotator

# The modules whose code decides a lexical answer: detection, verb labels, the decoder's checks,
# occurrences, KB lookup and the hit model.
DECIDING_MODULES = (
    "goldloop.nlp",
    "goldloop.verb_forms",
    "goldloop.lexical",
    "goldloop.decode",
    "goldloop.resolve",
    "goldloop.kb",
    "goldloop.gold",
    __name__,
)

_HITS = TypeAdapter(list[Hit])
_fingerprint: str | None = None
_fingerprint_lock = threading.Lock()


def code_fingerprint() -> str:
    """The sha256 of the source of :data:`DECIDING_MODULES` (read once per process)."""
    global _fingerprint
    with _fingerprint_lock:
        if _fingerprint is None:
            digest = hashlib.sha256()
            for name in DECIDING_MODULES:
                source = importlib.import_module(name).__file__
                assert source is not None, name
                digest.update(name.encode() + b"\0" + Path(source).read_bytes() + b"\0")
            _fingerprint = digest.hexdigest()
        return _fingerprint


class LexicalAnswers:
    """The stored answers of one lexical annotator over one pipeline and ``verbal_only``."""

    def __init__(
        self,
        cache: ParseCache,
        nlp: Language,
        annotator: LexicalAnnotator,
        kb: KB,
        verbal_only: bool,
    ) -> None:
        self.cache = cache
        self.pipeline = pipeline_id(nlp)
        self.kind = (
            f"lexical {annotator.tag} kb-{kb.sha256} verbal-{int(verbal_only)} "
            f"pipes-{','.join(nlp.pipe_names)} code-{code_fingerprint()[:16]}"
        )

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored answers of the texts with these :func:`~goldloop.parse_cache.text_key`s."""
        return self.cache.get_answers(self.pipeline, self.kind, keys)

    def put_many(self, entries: Iterable[tuple[bytes, bytes]]) -> None:
        """Store ``(text_key, dump(result))`` pairs."""
        self.cache.put_answers(self.pipeline, self.kind, entries)

    @staticmethod
    def dump(result: DocumentResult) -> bytes:
        """A decoded result as stored: hits, item count, rejections (the document is the caller's)."""
        hits = result.document.ground_truth if result.document is not None else []
        stored = {
            "items": result.items,
            "hits": [hit.to_json() for hit in hits],
            "rejections": result.rejections,
        }
        return json.dumps(stored, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @staticmethod
    def load(document: Document, blob: bytes) -> DocumentResult:
        """The result :meth:`dump` stored, for ``document`` (its own doc_id in the rejections)."""
        stored = json.loads(blob)
        hits = _HITS.validate_python(stored["hits"])
        return DocumentResult(
            document.doc_id,
            document.model_copy(update={"ground_truth": hits}),
            items=stored["items"],
            rejections=[{**r, "doc_id": document.doc_id} for r in stored["rejections"]],
        )
