"""What every format shares: a span's offsets out of and into a format's unit, with the
``text[a:b] == surface`` check on both sides; goldloop's fields carried as strings; the type map;
and the counts an import reports.

Every format here counts code points, the unit of a Python ``str`` and of goldloop's gold (the
``bioc`` package's validator checks ``text[offset:offset + length]`` on ``str``; BRAT's server and
spaCy slice ``str`` too). A format's unit differs from a gold offset only by a shift: PubTator
counts over ``title + " " + abstract``, and goldloop writes an empty title. A future format that
counts UTF-16 units or bytes converts here, and nowhere else.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.csvfile import read_csv
from goldloop.kb import KB

if TYPE_CHECKING:  # `goldloop export --help` reads the formats' names without the gold's models
    from goldloop.formats.gold import Document, Hit

# The hit fields every format carries in its own way; the others travel as carried fields.
SPAN_FIELDS = ("a", "b", "surface", "entity_id")
# The annotation type goldloop writes where a format needs one (BioC's ``type`` infon, BRAT's
# entity type, PubTator's type column): a predicate mention.
MENTION_TYPE = "Predicate"
# The carried field listing which of the others are JSON text (the rest are plain strings).
JSON_KEYS = "goldloop_json"


class FormatError(GoldloopError):
    """A file in an interchange format cannot be read or written; the message names file and line
    (or document and annotation)."""


def span_out(document: Document, hit: Hit, index: int, shift: int = 0) -> tuple[int, int]:
    """A gold hit's offsets in a format's unit, after checking the gold's own surface."""
    if document.text[hit.a : hit.b] != hit.surface:
        raise FormatError(
            f"document {document.doc_id}: hit {index}: surface {hit.surface!r} differs from "
            f"text[{hit.a}:{hit.b}] = {document.text[hit.a : hit.b]!r}"
        )
    return hit.a + shift, hit.b + shift


def span_in(
    where: str, text: str, start: int, end: int, surface: str | None, shift: int = 0
) -> tuple[int, int]:
    """Code-point offsets of a span given in a format's unit; the text there must be ``surface``
    (when the format gives one)."""
    a, b = start - shift, end - shift
    if not 0 <= a < b <= len(text):
        raise FormatError(
            f"{where}: span [{start}, {end}) must have end > start and lie inside the text "
            f"(length {len(text) + shift} in the format's offsets)"
        )
    if surface is not None and text[a:b] != surface:
        raise FormatError(
            f"{where}: the annotation's text {surface!r} differs from the document's text at "
            f"[{start}, {end}): {text[a:b]!r}"
        )
    return a, b


def hit_fields(hit: Hit) -> dict[str, Any]:
    """A hit's fields beyond its span and id, as written in gold."""
    return {k: v for k, v in hit.to_json().items() if k not in SPAN_FIELDS}


def document_fields(document: Document) -> dict[str, Any]:
    """A document's fields beyond its id, text and hits, as written in gold."""
    return {k: v for k, v in document.fields_json().items() if k not in ("doc_id", "text")}


def to_strings(fields: dict[str, Any]) -> dict[str, str]:
    """Fields as string values (BioC infons): strings as they are, for other tools to read; other
    values as JSON, listed under ``goldloop_json`` so that reading gives back the same types."""
    out: dict[str, str] = {}
    encoded: list[str] = []
    for key, value in fields.items():
        if isinstance(value, str):
            out[key] = value
        else:
            out[key] = json.dumps(value, ensure_ascii=False)
            encoded.append(key)
    if encoded:
        out[JSON_KEYS] = ",".join(encoded)
    return out


def from_strings(where: str, values: dict[str, str]) -> dict[str, Any]:
    """The inverse of :func:`to_strings`; values not listed as JSON stay strings."""
    out: dict[str, Any] = {k: v for k, v in values.items() if k != JSON_KEYS}
    for key in filter(None, values.get(JSON_KEYS, "").split(",")):
        try:
            out[key] = jsonl.loads(values[key])
        except (KeyError, json.JSONDecodeError) as exc:
            raise FormatError(
                f"{where}: field {key!r} is listed as JSON but is not: {exc}"
            ) from None
    return out


@dataclass
class ImportCounts:
    """What an import found: documents, hits and, per reason, annotations not taken."""

    documents: int = 0
    hits: int = 0
    unmapped_types: Counter[str] = field(default_factory=Counter)
    by_format: Counter[str] = field(default_factory=Counter)


@dataclass
class TypeMap:
    """A corpus's annotation types (or ids) → KB ids, from a CSV with ``type,entity_id``."""

    path: Path | None = None
    ids: dict[str, str] = field(default_factory=dict)

    def entity_id(self, ids: list[str], kind: str | None) -> str | None:
        """The KB id of an annotation: a mapped id, else its mapped type, else its own id."""
        if self.ids:
            for key in [*ids, kind]:
                if key is not None and key in self.ids:
                    return self.ids[key]
        return ids[0] if ids else None


def read_type_map(path: Path, kb: KB) -> TypeMap:
    """Read a type map; a KB id the KB does not have is refused, naming the file and line."""
    table = read_csv(path, required=("type", "entity_id"), error=FormatError)
    ids: dict[str, str] = {}
    for line, row in table.rows:
        kind, entity_id = row["type"].strip(), row["entity_id"].strip()
        if entity_id not in kb:
            raise FormatError(
                f"{path}: line {line}: entity_id {entity_id!r} is not in the KB {kb.path}"
            )
        if kind in ids and ids[kind] != entity_id:
            raise FormatError(f"{path}: line {line}: type {kind!r} is mapped twice")
        ids[kind] = entity_id
    return TypeMap(path, ids)


def settle_hit(
    a: int,
    b: int,
    text: str,
    ids: list[str],
    kind: str | None,
    carried: dict[str, Any],
    type_map: TypeMap,
    counts: ImportCounts,
) -> dict[str, Any] | None:
    """A read annotation as a gold hit, or ``None`` (counted under its type) when neither the type
    map nor the annotation gives it a KB id."""
    entity_id = type_map.entity_id(ids, kind)
    if entity_id is None:
        counts.unmapped_types[kind or "(no type)"] += 1
        return None
    counts.hits += 1
    return {**carried, "a": a, "b": b, "surface": text[a:b], "entity_id": entity_id}
