"""The sample dir: ``manifest.csv`` plus ``texts.jsonl``, appended batch by batch, and its reader.

Rows once written keep their values: a new batch is appended by rewriting each file whole
through an atomic replace, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_open
from goldloop.files.csvfile import read_csv, table_text
from goldloop.files.jsonl import json_lines, json_object

if (
    TYPE_CHECKING
):  # `sample --help` reads this module: the gold's pydantic models load with documents
    from goldloop.formats.gold import Document

log = logging.getLogger(__name__)

MANIFEST = "manifest.csv"
TEXTS = "texts.jsonl"
ID_KINDS = ("pmid", "doi", "openalex", "mag", "pmcid")
MANIFEST_COLUMNS = (
    "doc_id", "doc_uid", *ID_KINDS, "publication_year", "n_chars", "n_mentions",
    "n_verb_mentions", "labels_detected", "stratum", "p_incl", "batch", "role", "text_sha1",
)  # fmt: skip
LABEL_SEPARATOR = "|"
# The role of a surrogate part's documents (``sample.surrogate``): pre-annotated, never pushed.
SURROGATE_ROLE = "surrogate"


class SampleDirError(GoldloopError):
    """A sample dir or documents JSONL is missing or malformed; the message names file and line."""


@dataclass(frozen=True)
class ManifestRow:
    """One drawn document, as written to ``manifest.csv``."""

    doc_id: str
    doc_uid: str
    ids: dict[str, str | None]
    publication_year: int | None
    n_chars: int
    n_mentions: int
    n_verb_mentions: int
    labels_detected: tuple[str, ...]
    stratum: str
    p_incl: float
    batch: int
    role: str
    text_sha1: str

    def to_csv(self) -> dict[str, str]:
        row = {
            "doc_id": self.doc_id,
            "doc_uid": self.doc_uid,
            "publication_year": "" if self.publication_year is None else str(self.publication_year),
            "n_chars": str(self.n_chars),
            "n_mentions": str(self.n_mentions),
            "n_verb_mentions": str(self.n_verb_mentions),
            "labels_detected": LABEL_SEPARATOR.join(self.labels_detected),
            "stratum": self.stratum,
            "p_incl": repr(self.p_incl),
            "batch": str(self.batch),
            "role": self.role,
            "text_sha1": self.text_sha1,
        }
        row.update({kind: self.ids.get(kind) or "" for kind in ID_KINDS})
        return row


def is_sample_dir(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()


def read_manifest(sample_dir: str | Path) -> list[ManifestRow]:
    """The manifest's rows in file order; a malformed row is an error naming file and line."""
    path = Path(sample_dir) / MANIFEST
    table = read_csv(path, required=MANIFEST_COLUMNS, error=SampleDirError)
    rows: list[ManifestRow] = []
    seen: dict[str, int] = {}
    for line, raw in table.rows:
        row = _manifest_row(path, line, raw)
        if row.doc_id in seen:
            message = f"doc_id {row.doc_id!r} repeats line {seen[row.doc_id]}"
            raise SampleDirError(f"{path}: line {line}: {message}")
        seen[row.doc_id] = line
        rows.append(row)
    return rows


def _manifest_row(path: Path, line: int, raw: dict[str, str]) -> ManifestRow:
    try:
        year = raw["publication_year"].strip()
        labels = raw["labels_detected"]
        return ManifestRow(
            doc_id=_required(raw, "doc_id"),
            doc_uid=raw["doc_uid"],
            ids={kind: raw[kind] or None for kind in ID_KINDS},
            publication_year=int(year) if year else None,
            n_chars=int(raw["n_chars"]),
            n_mentions=int(raw["n_mentions"]),
            n_verb_mentions=int(raw["n_verb_mentions"]),
            labels_detected=tuple(labels.split(LABEL_SEPARATOR)) if labels else (),
            stratum=raw["stratum"],
            p_incl=float(raw["p_incl"]),
            batch=int(raw["batch"]),
            role=_required(raw, "role"),
            text_sha1=raw["text_sha1"],
        )
    except (TypeError, ValueError) as exc:
        raise SampleDirError(f"{path}: line {line}: {exc}") from exc


def _required(raw: dict[str, str], column: str) -> str:
    value = (raw.get(column) or "").strip()
    if not value:
        raise ValueError(f"empty {column!r}")
    return value


def append_batch(sample_dir: str | Path, rows: list[ManifestRow], texts: dict[str, str]) -> None:
    """Append one batch: texts first, then the manifest rows that make them part of the sample."""
    directory = Path(sample_dir)
    directory.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"doc_id": r.doc_id, "text": texts[r.doc_id]}, ensure_ascii=False) for r in rows
    ]
    _append_lines(directory / TEXTS, lines)
    manifest = directory / MANIFEST
    text = table_text(
        MANIFEST_COLUMNS, (r.to_csv() for r in rows), spreadsheet=False,
        header=not manifest.exists(),
    )  # fmt: skip
    _append_lines(manifest, text.splitlines())


def _append_lines(path: Path, lines: Iterable[str]) -> None:
    old = path.read_bytes() if path.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    with atomic_open(path, "wb") as handle:
        handle.write(old)
        handle.write("".join(f"{line}\n" for line in lines).encode("utf-8"))


def read_texts(path: str | Path) -> dict[str, dict[str, Any]]:
    """A documents JSONL by ``doc_id``; each line needs string ``doc_id`` and ``text``."""
    file = Path(path)
    records: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    try:
        handle = file.open(encoding="utf-8")
    except OSError as exc:
        raise SampleDirError(f"{file}: cannot read: {exc.strerror or exc}") from exc
    with handle:
        try:
            for number, value in json_lines(file, handle, SampleDirError):
                record = _document_record(file, number, value)
                doc_id = record["doc_id"]
                if doc_id in records:
                    raise SampleDirError(
                        f"{file}: line {number}: doc_id {doc_id!r} repeats line {lines[doc_id]}"
                    )
                records[doc_id], lines[doc_id] = record, number
        except UnicodeDecodeError as exc:
            raise SampleDirError(f"{file}: not UTF-8 text: {exc}") from exc
    return records


def _document_record(file: Path, number: int, value: Any) -> dict[str, Any]:
    record = json_object(file, number, value, SampleDirError)
    for key in ("doc_id", "text"):
        if not isinstance(record.get(key), str) or (key == "doc_id" and not record[key].strip()):
            raise SampleDirError(f"{file}: line {number}: {key!r} must be a non-empty string")
    return record


def read_documents(path: str | Path) -> list[Document]:
    """Documents from a sample dir (manifest order, sampling fields filled) or a documents JSONL."""
    from pydantic import ValidationError

    from goldloop.formats.gold import Document

    source = Path(path)
    if source.is_dir():
        return _sample_documents(source)
    if not source.exists():
        raise SampleDirError(f"{source}: no such sample dir or documents JSONL")
    documents = []
    for doc_id, record in read_texts(source).items():
        try:
            documents.append(Document.model_validate(record))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise SampleDirError(
                f"{source}: document {doc_id!r}: {'.'.join(map(str, err['loc']))}: {err['msg']}"
            ) from exc
    return documents


def _sample_documents(directory: Path) -> list[Document]:
    from goldloop.formats.gold import Document

    if not (directory / MANIFEST).is_file():
        raise SampleDirError(f"{directory}: not a sample dir (no {MANIFEST})")
    rows = read_manifest(directory)
    texts = read_texts(directory / TEXTS)
    missing = [r.doc_id for r in rows if r.doc_id not in texts]
    if missing:
        raise SampleDirError(
            f"{directory / TEXTS}: no text for {len(missing)} manifest document(s),"
            f" first {missing[0]!r}"
        )
    orphans = len(texts) - len({r.doc_id for r in rows})
    if orphans:
        log.warning(
            "%s: %d text(s) without a manifest row (an interrupted batch) are not in the sample",
            directory / TEXTS,
            orphans,
        )
    return [
        Document(
            doc_id=r.doc_id,
            text=texts[r.doc_id]["text"],
            doc_uid=r.doc_uid,
            ids=dict(r.ids),
            role=r.role,
            batch=r.batch,
            p_incl=r.p_incl,
            stratum=r.stratum,
        )
        for r in rows
    ]
