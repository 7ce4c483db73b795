"""BRAT standoff: a folder with ``<name>.txt`` (the text, written byte for byte: CRLF stays) and
``<name>.ann`` per document, and ``goldloop.json`` (each file name's ``doc_id`` and document
fields, in gold order).

Offsets are code points over the ``.txt`` as written (BRAT's server slices Python ``str``). A hit
is a text-bound annotation ``T`` of type ``Predicate``; its direction an attribute ``A``
(``Direction``), its KB id a normalisation ``N`` (``Reference T1 goldloop:<id>`` with the label),
its other fields a note ``#`` (``AnnotatorNotes``, JSON). A span across a line break is written as
BRAT writes one: fragments split at the break, their texts joined by a space.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_files
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

SIDE_FILE = "goldloop.json"
EXTENSIONS = (".txt", ".ann")
# The normalisation database goldloop's ids are written under.
KB_DB = "goldloop"
LINE_BREAK = re.compile(r"[\r\n]+")
# Dots too: a name holds none, so the ".N" that parts two documents' names is never a name.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_OFFSETS = re.compile(r"(\d+) (\d+)")


def ann_lines(document: Document, counts: dict[str, int]) -> str:
    """The ``.ann`` file of one document."""
    lines: list[str] = []
    notes = 0
    for k, hit in enumerate(document.ground_truth):
        a, b = span_out(document, hit, k)
        t = f"T{k + 1}"
        fragments = _fragments(document.text, a, b)
        if fragments[0][0] != a or fragments[-1][1] != b:
            raise FormatError(
                f"document {document.doc_id}: hit {k}: a span that begins or ends with a line "
                "break has no BRAT form (its fragments leave the break out)"
            )
        if len(fragments) > 1:
            counts["spans split at line breaks"] = counts.get("spans split at line breaks", 0) + 1
        offsets = ";".join(f"{start} {end}" for start, end in fragments)
        surface = " ".join(document.text[start:end] for start, end in fragments)
        lines.append(f"{t}\t{MENTION_TYPE} {offsets}\t{surface}")
        fields = hit_fields(hit)
        direction = fields.pop("direction", None)
        label = fields.pop("label", None)
        if direction is not None:
            lines.append(f"A{k + 1}\tDirection {t} {direction}")
        lines.append(f"N{k + 1}\tReference {t} {KB_DB}:{hit.entity_id}\t{label or ''}")
        if fields:
            notes += 1
            lines.append(f"#{notes}\tAnnotatorNotes {t}\t{json.dumps(fields, ensure_ascii=False)}")
    return "".join(line + "\n" for line in lines)


def file_names(documents: list[Document]) -> list[str]:
    """Each document's file name (without ``.txt``/``.ann``), unique by construction: the doc id
    with every character but letters, digits, ``_`` and ``-`` made ``_``, then ``.2``, ``.3``, ...
    on a name taken (in any case: a folder may not tell case apart)."""
    taken: set[str] = set()
    names = []
    for document in documents:
        base = _UNSAFE.sub("_", document.doc_id) or "doc"
        name, n = base, 1
        while name.casefold() in taken:
            n += 1
            name = f"{base}.{n}"
        taken.add(name.casefold())
        names.append(name)
    return names


def folder_files(documents: list[Document]) -> list[str]:
    """Every file :func:`write` puts in the folder."""
    return [SIDE_FILE, *(f"{name}{ext}" for name in file_names(documents) for ext in EXTENSIONS)]


def write(folder: Path, documents: list[Document]) -> dict[str, int]:
    """Write the folder; every file is built in memory first, so a bad hit writes nothing."""
    counts: dict[str, int] = {}
    names: dict[str, dict[str, Any]] = {}
    files: list[tuple[str, str, str]] = []
    for name, document in zip(file_names(documents), documents, strict=True):
        names[name] = {"doc_id": document.doc_id, **document_fields(document)}
        files.append((name, document.text, ann_lines(document, counts)))
    # Bytes, so that no newline translation touches a CR or an LF.
    contents = {SIDE_FILE: json.dumps({"documents": names}, ensure_ascii=False, indent=1).encode()}
    for name, text, ann in files:
        contents[f"{name}.txt"] = text.encode("utf-8")
        contents[f"{name}.ann"] = ann.encode("utf-8")
    atomic_write_files(folder, contents)
    return counts


def read(folder: Path, type_map: TypeMap, counts: ImportCounts) -> list[dict[str, Any]]:
    """A BRAT folder as gold items: the side file's documents in its order when it is there, else
    every ``.ann`` by name (its ``doc_id`` the file name)."""
    if not folder.is_dir():
        raise FormatError(f"{folder}: a BRAT corpus is a folder of .txt and .ann files")
    side = folder / SIDE_FILE
    known = _side_file(folder, side) if side.exists() else {}
    names = list(known) or sorted(p.stem for p in folder.glob("*.ann"))
    if not names:
        raise FormatError(f"{folder}: no .ann files")
    return [_read_document(folder, name, known.get(name), type_map, counts) for name in names]


def _read_document(
    folder: Path, name: str, fields: dict[str, Any] | None, type_map: TypeMap, counts: ImportCounts
) -> dict[str, Any]:
    text = _read_exact(_corpus_file(folder, f"{name}.txt"))
    ann_path = _corpus_file(folder, f"{name}.ann")
    spans: dict[str, tuple[int, int, str]] = {}  # T id → a, b, type
    carried: dict[str, dict[str, Any]] = {}
    ids: dict[str, list[str]] = {}
    for number, line in enumerate(_read_exact(ann_path).split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        where = f"{ann_path}: line {number}"
        key, _, rest = line.partition("\t")
        head, _, tail = rest.partition("\t")
        if key.startswith("T"):
            spans[key] = _text_bound(where, text, head, tail, counts)
        elif key.startswith(("A", "M")):
            parts = head.split(" ")
            if len(parts) < 2:
                raise FormatError(f"{where}: an attribute needs a name and an annotation: {line!r}")
            name_, target = parts[0], parts[1]
            value: Any = parts[2] if len(parts) > 2 else True
            carried.setdefault(target, {})["direction" if name_ == "Direction" else name_] = value
        elif key.startswith("N"):
            parts = head.split(" ")
            if len(parts) != 3 or ":" not in parts[2]:
                raise FormatError(f"{where}: a normalisation reads 'Reference T1 DB:ID': {line!r}")
            db, _, entity = parts[2].partition(":")
            ids.setdefault(parts[1], []).append(entity if db == KB_DB else parts[2])
            if db == KB_DB and tail:
                carried.setdefault(parts[1], {})["label"] = tail
        elif key.startswith("#"):
            target = head.split(" ")[-1]
            carried.setdefault(target, {}).update(_note(tail))
        elif key.startswith(("R", "E", "*")):
            counts.by_format["relations and events not imported"] += 1
        else:
            raise FormatError(f"{where}: not a BRAT annotation line: {line!r}")
    hits = []
    for t, (a, b, kind) in spans.items():
        hit = settle_hit(a, b, text, ids.get(t, []), kind, carried.get(t, {}), type_map, counts)
        if hit is not None:
            hits.append(hit)
    counts.documents += 1
    document = {"doc_id": name, **(fields or {})}
    return {**document, "text": text, "ground_truth": hits}


def _side_file(folder: Path, side: Path) -> dict[str, dict[str, Any]]:
    """The side file's documents: each file name's document fields."""
    try:
        value = jsonl.loads(_read_exact(_corpus_file(folder, SIDE_FILE)))
    except ValueError as exc:
        raise FormatError(f"{side}: not valid JSON: {exc}") from None
    documents = value.get("documents") if isinstance(value, dict) else None
    if not isinstance(documents, dict) or not all(isinstance(v, dict) for v in documents.values()):
        raise FormatError(
            f"{side}: not a goldloop BRAT side file: expected "
            '{"documents": {file name: {doc_id, fields}}}'
        )
    return documents


def _corpus_file(folder: Path, name: str) -> Path:
    """``folder / name``, which must lie in the corpus folder: a name (``../x``) or a link that
    leads out of it is refused, so an import reads no file but the corpus's."""
    path = folder / name
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise FormatError(f"{path}: cannot read: {exc}") from None
    if not inside:
        raise FormatError(
            f"{path}: lies outside the corpus folder {folder} (a name or a link leads out of it)"
        )
    return path


def _text_bound(
    where: str, text: str, head: str, surface: str, counts: ImportCounts
) -> tuple[int, int, str]:
    kind, _, offsets = head.partition(" ")
    fragments = []
    for part in offsets.split(";"):
        match = _OFFSETS.fullmatch(part.strip())
        if match is None:
            raise FormatError(f"{where}: offsets must be 'start end' integers, got {part!r}")
        fragments.append((int(match[1]), int(match[2])))
    for start, end in fragments:
        span_in(where, text, start, end, None)
    joined = " ".join(text[start:end] for start, end in fragments)
    if joined != surface:
        raise FormatError(
            f"{where}: the annotation's text {surface!r} differs from the .txt at {offsets}: {joined!r}"
        )
    if len(fragments) > 1:
        counts.by_format["fragmented spans joined"] += 1
    return fragments[0][0], fragments[-1][1], kind


def _note(note: str) -> dict[str, Any]:
    """goldloop's notes are a JSON object of fields; any other note is kept as ``note``."""
    try:
        value = jsonl.loads(note)
    except ValueError:
        return {"note": note}
    return value if isinstance(value, dict) else {"note": note}


def _fragments(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """``[a, b)`` cut at runs of line breaks (BRAT's annotation line holds no line break)."""
    out, start = [], a
    for match in LINE_BREAK.finditer(text, a, b):
        if match.start() > start:
            out.append((start, match.start()))
        start = match.end()
    if start < b or not out:
        out.append((start, b))
    return out


def _read_exact(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not UTF-8: {exc}") from None
