"""Decoded answers, stored in the parse cache beside the parses they were checked on.

Decoding an answer (:mod:`goldloop.llm.decode`) depends only on the document's text, the answer, the
KB, the parse and goldloop's own code, so its outcome (the hits, the item count, the rejections)
is kept like a parse, and a later run over the same text and answer reads it back instead of
loading the parse and checking again: an ``annotate`` re-run (after a crash, say: the answers
come from the response cache), the backend asked again for a task, a second project holding the
same abstract. The lexical annotator's answer is a function of the parse, so its entries are
keyed by the text alone; an LLM's by the text and the answer's text.

An entry is stored under the parse's pipeline (:meth:`goldloop.text.parse_cache.ParseCache.put_answers`);
its kind names all else the outcome depends on: the source, the annotator tag, the KB's sha256,
``verbal_only``, the pipes that ran, and the sha256 of the source of the modules that decide it
(:data:`DECIDING_MODULES`), so an upgrade or an edit of any of them is a miss, never a stale
answer. Only decoded documents are stored: a failure (truncated, unparsable, failed) is decided
again each time. Entries share the parse cache's file, bound, eviction and switches.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import TypeAdapter

from goldloop import __version__
from goldloop.files import jsonl
from goldloop.formats.gold import Document, Hit
from goldloop.llm.decode import DocumentResult, Rejection
from goldloop.text.nlp import load_nlp
from goldloop.text.parse_cache import ParseCache, open_cache, pipeline_id, text_key
from goldloop.text.parsing import Parsing

if TYPE_CHECKING:
    from spacy.language import Language

    from goldloop.kb import KB

# The modules whose code decides a decoded answer: reading an LLM's answer, detection, verb
# labels, the checks, occurrences, KB lookup and folding, the hit model.
DECIDING_MODULES = (
    "goldloop.llm.answer",
    "goldloop.llm.prompt",
    "goldloop.llm.decode",
    "goldloop.text.nlp",
    "goldloop.text.detector",
    "goldloop.kb.verb_forms",
    "goldloop.text.lexical",
    "goldloop.text.resolve",
    "goldloop.kb",
    "goldloop.formats.gold",
    __name__,
)

_HITS = TypeAdapter(list[Hit])
_fingerprint: str | None = None
_fingerprint_lock = threading.Lock()


def code_fingerprint() -> str:
    """The sha256 of the source of :data:`DECIDING_MODULES` (read once per process); where a
    module's source cannot be read (a frozen install), goldloop's version stands for it."""
    global _fingerprint
    with _fingerprint_lock:
        if _fingerprint is None:
            digest = hashlib.sha256()
            for name in DECIDING_MODULES:
                digest.update(name.encode() + b"\0" + _source(name) + b"\0")
            _fingerprint = digest.hexdigest()
        return _fingerprint


def _source(module: str) -> bytes:
    path = importlib.import_module(module).__file__
    try:
        return Path(path or "").read_bytes()
    except OSError:
        return f"goldloop {__version__}".encode()


class DecodedStore:
    """The stored outcomes of one annotator over one KB, pipeline and ``verbal_only``."""

    def __init__(
        self,
        cache: ParseCache,
        nlp: Language,
        source: Literal["lexical", "llm"],
        annotator_tag: str,
        kb: KB,
        verbal_only: bool,
    ) -> None:
        self.cache = cache
        self.pipeline = pipeline_id(nlp)
        self.kind = (
            f"{source} {annotator_tag} kb-{kb.sha256} verbal-{int(verbal_only)} "
            f"pipes-{','.join(nlp.pipe_names)} code-{code_fingerprint()[:16]}"
        )

    @classmethod
    def open(
        cls,
        parsing: Parsing,
        source: Literal["lexical", "llm"],
        annotator_tag: str,
        kb: KB,
        verbal_only: bool,
    ) -> DecodedStore | None:
        """The store in ``parsing``'s parse cache (None when it has none)."""
        cache = open_cache(parsing)
        if cache is None:
            return None
        return cls(cache, load_nlp(parsing.models), source, annotator_tag, kb, verbal_only)

    @staticmethod
    def key(text: str, answer: str | None = None) -> bytes:
        """An entry's key: the text's parse key, and the answer's text when there is one."""
        key = text_key(text)
        if answer is None:
            return key
        return hashlib.sha256(key + answer.encode("utf-8", "surrogatepass")).digest()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored outcomes of these :meth:`key`s."""
        return self.cache.get_answers(self.pipeline, self.kind, keys)

    def put_many(self, entries: Iterable[tuple[bytes, bytes]]) -> None:
        """Store ``(key, dump(result))`` pairs."""
        self.cache.put_answers(self.pipeline, self.kind, entries)

    @staticmethod
    def dump(result: DocumentResult) -> bytes:
        """A decoded result as stored: hits, item count, rejections (the document, its usage and
        whether its answer was cached are the caller's)."""
        assert result.document is not None and result.failure is None, "only decoded documents"
        stored = {
            "items": result.items,
            "hits": [hit.to_json() for hit in result.document.ground_truth],
            "rejections": [r.to_dict() for r in result.rejections],
        }
        return json.dumps(stored, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @staticmethod
    def load(
        document: Document,
        blob: bytes,
        usage: dict[str, int] | None = None,
        cached: bool = False,
    ) -> DocumentResult | None:
        """The result :meth:`dump` stored, for ``document`` (its doc_id in the rejections); None
        when the entry is not one :meth:`dump` could have written for this text (a damaged or
        tampered file): the caller decodes the answer again, as on a miss."""
        try:
            stored = jsonl.loads(blob)
            hits = _HITS.validate_python(stored["hits"])
            items, rejections = stored["items"], stored["rejections"]
            fits = all(0 <= h.a < h.b <= len(document.text) for h in hits) and all(
                document.text[h.a : h.b] == h.surface for h in hits
            )
            shaped = _is_count(items) and all(
                isinstance(r, dict) and isinstance(r.get("reasons"), list) for r in rejections
            )
        except (ValueError, KeyError, TypeError):  # pydantic's ValidationError is a ValueError
            return None
        if not (fits and shaped):
            return None
        return DocumentResult(
            document.doc_id,
            document.model_copy(update={"ground_truth": hits}),
            items=items,
            # As stored (their doc_id and reasons among the fields, in place): the same dict back.
            rejections=[Rejection(r, document.doc_id, r["reasons"]) for r in rejections],
            usage=dict(usage or {}),
            cached=cached,
        )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
