"""PubTator's tab format: per document a title line ``ID|t|``, an abstract line ``ID|a|TEXT``, an
annotation line ``ID<TAB>start<TAB>end<TAB>surface<TAB>Predicate<TAB>KB id`` per hit, a blank line.

Offsets count code points over ``title + " " + abstract``; goldloop writes an empty title and the
whole text as the abstract, so a gold offset is the PubTator offset minus 1 (and a file with a
title reads as ``title + " " + abstract``). The format is line-based: a line break inside a text
(CR, LF, and every other character ``str.splitlines`` cuts at, as the ``bioc`` package's reader
does) is written as one space, so offsets stay, and the header comment ``#goldloop {...}`` before
the document records where each was, with the document and hit fields: goldloop's import puts them
back; other readers see spaces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_bytes
from goldloop.formats.gold import Document
from goldloop.interchange.spans import (
    MENTION_TYPE,
    FormatError,
    ImportCounts,
    TypeMap,
    document_fields,
    hit_fields,
    settle_hit,
    span_in,
    span_out,
)

HEADER = "#goldloop "
# Every character str.splitlines() breaks at: the bioc package's reader splits lines with it.
LINE_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_PASSAGE = re.compile(r"([^|\t]*)\|([ta])\|(.*)", re.DOTALL)


def document_lines(document: Document, counts: dict[str, int]) -> str:
    if LINE_BREAKS.search(document.doc_id) or "|" in document.doc_id or "\t" in document.doc_id:
        raise FormatError(
            f"document {document.doc_id!r}: a PubTator id holds no '|', tab or line break"
        )
    breaks: dict[str, list[int]] = {}
    for match in LINE_BREAKS.finditer(document.text):
        breaks.setdefault(match.group(), []).append(match.start())
    if breaks:
        counts["line breaks written as spaces"] = counts.get(
            "line breaks written as spaces", 0
        ) + sum(map(len, breaks.values()))
    flat = LINE_BREAKS.sub(" ", document.text)
    header = {
        "doc_id": document.doc_id,
        **document_fields(document),
        "hits": [hit_fields(hit) for hit in document.ground_truth],
    }
    if breaks:
        header["line_breaks"] = breaks
    lines = [
        # ASCII: a line separator in a field (a key of line_breaks) must not cut the line.
        HEADER + json.dumps(header),
        f"{document.doc_id}|t|",
        f"{document.doc_id}|a|{flat}",
    ]
    for k, hit in enumerate(document.ground_truth):
        start, end = span_out(document, hit, k, shift=1)
        lines.append(
            f"{document.doc_id}\t{start}\t{end}\t{flat[hit.a : hit.b]}\t{MENTION_TYPE}\t{hit.entity_id}"
        )
    return "".join(line + "\n" for line in lines) + "\n"


def write(path: Path, documents: list[Document]) -> dict[str, int]:
    counts: dict[str, int] = {}
    text = "".join(document_lines(document, counts) for document in documents)
    atomic_write_bytes(path, text.encode("utf-8"))
    return counts


def read(path: Path, type_map: TypeMap, counts: ImportCounts) -> list[dict[str, Any]]:
    try:
        raw = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not UTF-8: {exc}") from None
    items: list[dict[str, Any]] = []
    block: list[tuple[int, str]] = []
    # Split at LF only: a text may hold other characters str.splitlines() would cut at.
    for number, line in enumerate(raw.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            block.append((number, line))
        elif block:
            items.append(_document(path, block, type_map, counts))
            block = []
    if block:
        items.append(_document(path, block, type_map, counts))
    return items


def _document(
    path: Path, block: list[tuple[int, str]], type_map: TypeMap, counts: ImportCounts
) -> dict[str, Any]:
    header: dict[str, Any] = {}
    passages: dict[str, str] = {}
    doc_id: str | None = None
    annotations: list[tuple[int, list[str]]] = []
    name = str(path)  # formatted once: a Path formats slowly, and every line needs a name
    for number, line in block:
        if line.startswith(HEADER):
            header = _header(f"{name}: line {number}", line[len(HEADER) :])
            continue
        if line.startswith("#"):
            continue
        # A title or abstract line has '|' before any tab; an annotation line a tab first.
        match = _PASSAGE.fullmatch(line) if "|" in line.partition("\t")[0] else None
        if match:
            doc_id = doc_id or match[1]
            passages[match[2]] = match[3]
            continue
        columns = line.split("\t")
        if len(columns) < 4:
            raise FormatError(
                f"{name}: line {number}: not a PubTator title, abstract or annotation line: {line[:80]!r}"
            )
        annotations.append((number, columns))
    if doc_id is None:
        raise FormatError(
            f"{path}: line {block[0][0]}: a document without a title or abstract line"
        )
    title, abstract = passages.get("t", ""), passages.get("a", "")
    # Offsets count over title + " " + abstract; with an empty title the text is the abstract.
    text, shift = (f"{title} {abstract}", 0) if title else (abstract, 1)
    if header.get("line_breaks"):
        text = _restore_breaks(path, block[0][0], text, header["line_breaks"])
    carried_hits = header.get("hits", [])
    hits = []
    for k, (number, columns) in enumerate(annotations):
        where = f"{name}: line {number}"
        try:
            start, end = int(columns[1]), int(columns[2])
        except ValueError:
            raise FormatError(
                f"{where}: offsets must be integers, got {columns[1]!r} and {columns[2]!r}"
            ) from None
        # The surface may hold a tab: it is every column between the offsets and the last two.
        surface = "\t".join(columns[3:-2]) if len(columns) >= 6 else columns[3]
        kind = columns[-2] if len(columns) >= 6 else None
        ids = [columns[-1]] if len(columns) >= 6 and columns[-1] else []
        # Checked against the final text, its line breaks back: written as spaces, or as they are
        # (another tool's file).
        a, b = span_in(where, text, start, end, None, shift)
        if surface not in (text[a:b], LINE_BREAKS.sub(" ", text[a:b])):
            raise FormatError(
                f"{where}: the annotation's text {surface!r} differs from the document's text at "
                f"[{start}, {end}): {text[a:b]!r}"
            )
        carried = carried_hits[k] if k < len(carried_hits) else {}
        hit = settle_hit(a, b, text, ids, kind, carried, type_map, counts)
        if hit is not None:
            hits.append(hit)
    counts.documents += 1
    fields = {k: v for k, v in header.items() if k not in ("hits", "line_breaks", "doc_id")}
    return {"doc_id": header.get("doc_id", doc_id), **fields, "text": text, "ground_truth": hits}


def _header(where: str, raw: str) -> dict[str, Any]:
    """A ``#goldloop`` header as :func:`document_lines` writes it: an object whose ``doc_id`` is
    a string, ``hits`` a list of objects and ``line_breaks`` maps one line-break character to
    the positions (whole numbers) it stood at."""
    try:
        header = jsonl.loads(raw)
    except ValueError as exc:
        raise FormatError(f"{where}: the goldloop header is not JSON: {exc}") from None
    problem = _header_problem(header)
    if problem:
        raise FormatError(f"{where}: malformed goldloop header: {problem}")
    return header


def _header_problem(header: Any) -> str | None:
    """What makes ``header`` other than :func:`document_lines` writes one, else None."""
    if not isinstance(header, dict):
        return "it must be a JSON object"
    if not isinstance(header.get("doc_id", ""), str):
        return "doc_id must be a string"
    hits = header.get("hits", [])
    if not isinstance(hits, list) or not all(isinstance(hit, dict) for hit in hits):
        return "hits must be a list of objects"
    breaks = header.get("line_breaks", {})
    if not isinstance(breaks, dict):
        return "line_breaks must be an object"
    for char, positions in breaks.items():
        # One character each: a longer one would move every offset after it.
        if len(char) != 1 or not LINE_BREAKS.fullmatch(char):
            return f"line_breaks key {char!r} is not one line-break character"
        if not isinstance(positions, list) or any(type(p) is not int for p in positions):
            return f"line_breaks {char!r} must list whole numbers"
    return None


def _restore_breaks(path: Path, line: int, flat: str, breaks: dict[str, list[int]]) -> str:
    """The text with the line breaks the header recorded put back in place of their spaces."""
    chars = list(flat)
    for char, positions in breaks.items():
        for position in positions:
            if not 0 <= position < len(chars) or chars[position] != " ":
                held = repr(chars[position]) if 0 <= position < len(chars) else "nothing"
                raise FormatError(
                    f"{path}: line {line}: the header's line_breaks do not fit the text: "
                    f"position {position} holds {held}, not a space"
                )
            chars[position] = char
    return "".join(chars)
