"""Gold JSON files: typed documents and hits, reading (list and legacy forms), validation, writing.

Offsets are code-point indices into ``text``, half-open ``[a, b)``. Unknown fields are kept on
read and written back unchanged. With a KB, a non-canonical ``entity_id`` is folded onto its
canonical id with the direction flipped, and counted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, ValidationError

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_json
from goldloop.formats.mention import Mention
from goldloop.heap import paused_gc
from goldloop.kb import DIRECTIONS, KB

Direction = Literal["forward", "inverse", "symmetric", "na"]
Source = Literal["llm", "lexical", "human", "legacy"]
Verdict = Literal["accept", "fix", "added", "proposed"]
FLAGS = ("label_canonicalized", "direction_coerced", "occurrence_fallback")
# Optional fields written only when they carry a value.
_OPTIONAL = (
    "label", "direction", "annotator", "source", "surface_anchored", "confidence",
    "subject_text", "object_text", "subject_span", "object_span", "verdict", "proposed_by",
)  # fmt: skip


class GoldError(GoldloopError):
    """A gold file is invalid; the message names the file, document and hit."""


class Hit(BaseModel):
    """One mention as a gold file holds it: a span of the document text linked to a canonical KB
    id, with how it was made (annotator, source, flags, verdict...).

    It is the core :class:`~goldloop.formats.mention.Mention` without ``doc_id`` (the hit sits in
    its :class:`Document`); :meth:`mention` and :meth:`from_mention` are the one conversion. It
    stays a pydantic model because it is what validates a gold file's hit and keeps its unknown
    fields.
    """

    model_config = ConfigDict(extra="allow")

    # Strict, as every number a gold holds: "185" or true is a broken file, not a number to guess.
    a: StrictInt
    b: StrictInt
    entity_id: str
    surface: str = ""
    label: str | None = None
    direction: Direction | None = None
    annotator: str | None = None
    source: Source | None = None
    surface_anchored: bool | None = None
    label_canonicalized: bool = False
    direction_coerced: bool = False
    occurrence_fallback: bool = False
    confidence: StrictFloat | None = None  # an integer is taken too; a string or true is not
    subject_text: str | None = None
    object_text: str | None = None
    subject_span: tuple[StrictInt, StrictInt] | None = None
    object_span: tuple[StrictInt, StrictInt] | None = None
    verdict: Verdict | None = None
    # A ``proposed`` hit: what proposed it (``kb`` or an LLM's tag), when the proposal said.
    proposed_by: str | None = None

    def mention(self, doc_id: str) -> Mention:
        """This hit as the core mention of document ``doc_id``."""
        return Mention(
            doc_id, self.a, self.b, self.entity_id, self.surface, self.label, self.direction
        )

    @classmethod
    def from_mention(cls, mention: Mention, **fields: Any) -> Hit:
        """A hit of ``mention`` (its ``doc_id`` stays with the document), with the hit's own
        ``fields`` (annotator, source, flags, ...); validated like any hit."""
        return cls(
            a=mention.a,
            b=mention.b,
            surface=mention.surface,
            entity_id=mention.entity_id,
            label=mention.label,
            direction=mention.direction,
            **fields,
        )

    def to_json(self) -> dict[str, Any]:
        """The file form: required fields and ``surface`` always, optional ones when set."""
        out: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "surface": self.surface,
            "entity_id": self.entity_id,
        }
        for name in _OPTIONAL:
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if isinstance(value, tuple) else value
        out.update({flag: True for flag in FLAGS if getattr(self, flag)})
        out.update(self.model_extra or {})
        return out


class Document(BaseModel):
    """One abstract with its hits (``ground_truth``); sampling metadata is optional."""

    model_config = ConfigDict(extra="allow")

    doc_id: str
    text: str
    doc_uid: str | None = None
    ids: dict[str, Any] | None = None
    role: str | None = None
    # Strict as the hits' offsets: p_incl "0.5" or true, batch "1", is a broken file.
    batch: StrictInt | None = None
    p_incl: StrictFloat | None = None
    stratum: str | None = None
    ground_truth: list[Hit] = []

    def to_json(self) -> dict[str, Any]:
        return {**self.fields_json(), "ground_truth": [hit.to_json() for hit in self.ground_truth]}

    def fields_json(self) -> dict[str, Any]:
        """The file form without the hits."""
        out: dict[str, Any] = {"doc_id": self.doc_id}
        for name in ("doc_uid", "ids"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out["text"] = self.text
        for name in ("role", "batch", "p_incl", "stratum"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out.update(self.model_extra or {})
        return out


@dataclass
class GoldStats:
    """What reading a gold file found, for ``goldloop gold check``."""

    documents: int = 0
    hits: int = 0
    legacy_documents: int = 0
    folded_to_canonical: int = 0
    direction_coerced: int = 0
    not_in_kb: Counter[str] = field(default_factory=Counter)
    # The first hit whose id is not in the KB: file, document, hit and the id.
    first_not_in_kb: str | None = None
    by_source: Counter[str] = field(default_factory=Counter)
    by_direction: Counter[str] = field(default_factory=Counter)
    by_role: Counter[str] = field(default_factory=Counter)


@dataclass
class GoldFile:
    path: Path
    documents: list[Document]
    stats: GoldStats


def read_gold(path: str | Path, kb: KB | None = None) -> GoldFile:
    """Read and validate a gold file: a list of documents, or a legacy single-object ``*.gt.json``."""
    gold_path = Path(path)
    try:
        data = jsonl.loads(gold_path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise GoldError(f"{gold_path}: cannot read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GoldError(f"{gold_path}: not valid JSON: {exc}") from exc
    return gold_from_data(gold_path, data, kb)


def gold_from_data(path: Path, data: Any, kb: KB | None = None) -> GoldFile:
    """Validate gold data already in memory (a file's parsed JSON, or documents an importer built
    from another format); ``path`` is the file that errors name."""
    with paused_gc():
        return _gold_from_data(path, data, kb)


def _gold_from_data(gold_path: Path, data: Any, kb: KB | None) -> GoldFile:
    legacy = isinstance(data, dict)
    if legacy:
        items = [data]
    elif isinstance(data, list):
        items = data
    else:
        raise GoldError(f"{gold_path}: expected a list of documents or one legacy object")
    stats = GoldStats()
    documents: list[Document] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        document = _read_document(gold_path, index, item, kb, stats, legacy)
        if document.doc_id in seen:
            raise GoldError(
                f"{gold_path}: document {index}: doc_id {document.doc_id!r} repeats document {seen[document.doc_id]}"
            )
        seen[document.doc_id] = index
        documents.append(document)
    return GoldFile(gold_path, documents, stats)


def hits_by_span(hits: Iterable[Hit]) -> dict[tuple[int, int], Hit]:
    """One hit per span, the first: a review region (Label Studio's or a review sheet's row)
    stands for one span."""
    spans: dict[tuple[int, int], Hit] = {}
    for hit in hits:
        spans.setdefault((hit.a, hit.b), hit)
    return spans


def checked_document(where: str, **fields: Any) -> Document:
    """A document from values read elsewhere than a gold file (a Label Studio task's data), by
    the gold's rules (its numbers strict): a bad value is a :class:`GoldError` naming ``where``
    and the field, never a validation traceback."""
    try:
        return Document(**fields)
    except ValidationError as exc:
        raise GoldError(f"{where}: {_first_error(exc)}") from None


def write_gold(path: str | Path, documents: list[Document]) -> None:
    """Write documents as a gold JSON list, atomically."""
    atomic_write_json(path, [doc.to_json() for doc in documents])


def _read_document(
    path: Path, index: int, item: Any, kb: KB | None, stats: GoldStats, legacy_file: bool
) -> Document:
    where = f"{path}: document {index}"
    if not isinstance(item, dict):
        raise GoldError(f"{where}: expected an object, got {type(item).__name__}")
    item = dict(item)
    legacy = legacy_file and "doc_id" not in item
    if not legacy and not isinstance(item.get("doc_id"), str):
        raise GoldError(f"{where}: 'doc_id' must be a string (it is {_kind(item.get('doc_id'))})")
    if legacy:
        # pelinker's *.gt.json has no doc_id; its spans carry the document's position as itext.
        item["doc_id"] = f"legacy:{index}"
        stats.legacy_documents += 1
    where = f"{path}: document {index} ({item['doc_id']})"
    text = item.get("text")
    if not isinstance(text, str):
        raise GoldError(f"{where}: 'text' must be a string")
    raw_hits = item.pop("ground_truth", None) or []
    if not isinstance(raw_hits, list):
        raise GoldError(f"{where}: 'ground_truth' must be a list")
    try:
        document = Document.model_validate(item)
    except ValidationError as exc:
        raise GoldError(f"{where}: {_first_error(exc)}") from exc
    document.ground_truth = [
        _read_hit(f"{where}: hit {k}", text, raw, legacy, kb, stats)
        for k, raw in enumerate(raw_hits)
    ]
    stats.documents += 1
    if document.role:
        stats.by_role[document.role] += 1
    return document


def _read_hit(
    where: str, text: str, raw: Any, legacy: bool, kb: KB | None, stats: GoldStats
) -> Hit:
    if not isinstance(raw, dict):
        raise GoldError(f"{where}: expected an object")
    raw = dict(raw)
    if legacy:
        raw.setdefault("source", "legacy")
    direction = raw.get("direction")
    if direction is not None and direction not in DIRECTIONS:
        raise GoldError(
            f"{where}: unknown direction {direction!r} (known: {', '.join(DIRECTIONS)})"
        )
    try:
        hit = Hit.model_validate(raw)
    except ValidationError as exc:
        raise GoldError(f"{where}: {_first_error(exc)}") from exc
    if not 0 <= hit.a < hit.b <= len(text):
        raise GoldError(
            f"{where}: span [{hit.a}, {hit.b}) must have b > a and lie inside the text (length {len(text)})"
        )
    surface = text[hit.a : hit.b]
    if "surface" in raw and raw["surface"] != surface:
        raise GoldError(
            f"{where}: surface {raw['surface']!r} differs from text[{hit.a}:{hit.b}] = {surface!r}"
        )
    # Assigned only when they change: a pydantic attribute assignment costs as much as reading
    # the rest of the hit (an import of 80,000 hits).
    if hit.surface != surface:
        hit.surface = surface
    if kb is not None:
        if hit.entity_id in kb:
            folded = kb.fold(hit.entity_id, hit.direction)
            if folded.label_canonicalized:
                stats.folded_to_canonical += 1
                hit.label_canonicalized = True
            if folded.direction_coerced:
                stats.direction_coerced += 1
                hit.direction_coerced = True
            if folded.entity_id != hit.entity_id:
                hit.entity_id = folded.entity_id
            if folded.direction != hit.direction:
                hit.direction = folded.direction  # type: ignore[assignment]
        else:
            stats.not_in_kb[hit.entity_id] += 1
            stats.first_not_in_kb = stats.first_not_in_kb or f"{where}: {hit.entity_id!r}"
    stats.hits += 1
    stats.by_source[hit.source or "unknown"] += 1
    stats.by_direction[hit.direction or "absent"] += 1
    return hit


def _kind(value: Any) -> str:
    return "missing" if value is None else f"{type(value).__name__} {value!r}"


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    location = ".".join(str(part) for part in err["loc"]) or "value"
    given = f" (got {err['input']!r:.80})" if err["type"] != "missing" else ""
    return f"{location}: {err['msg']}{given}"
