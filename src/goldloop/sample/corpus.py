"""Reading a corpus table in a stream: TSV/CSV (optionally gzipped, read by ``goldloop.files.csvfile``),
JSONL, or Parquet.

Each row becomes a ``CorpusRecord`` with its identifiers normalised and its ``doc_id`` built
from the first identifier present, in the order pmid, doi, openalex, mag, pmcid, then the
corpus-declared id column. Rows are read lazily, so a corpus larger than memory works.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from goldloop.errors import GoldloopError
from goldloop.files.csvfile import open_csv
from goldloop.files.jsonl import json_lines, json_object
from goldloop.formats.sampledir import ID_KINDS

TEXT_COLUMNS = ("abstract", "summary", "text")
YEAR_COLUMNS = ("publication_year", "year", "pub_year", "publication_date")
ID_COLUMNS = ("doc_id", "id")
PARQUET_BATCH_ROWS = 2048
_MISSING = {"", "nan", "none", "null", "na", "n/a"}
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_URL_PREFIXES = {
    "doi": ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"),
    "openalex": ("https://openalex.org/",),
}


class CorpusError(GoldloopError):
    """A corpus file cannot be read: missing, corrupt, or without the columns sampling needs."""


@dataclass(frozen=True)
class CorpusColumns:
    """Which columns of a corpus hold the text, the year and a declared identifier."""

    text: str | None = None
    year: str | None = None
    id_column: str | None = None


@dataclass
class CorpusRecord:
    """One corpus row; ``doc_id`` is ``None`` when the row has no identifier.

    Read-only by convention, not frozen: a frozen dataclass sets each field through
    ``object.__setattr__``, which costs more per row than the gate's cheaper checks together.
    """

    row: int
    doc_id: str | None
    doc_uid: str | None
    ids: dict[str, str | None]
    year: int | None
    text: str

    @cached_property
    def text_sha1(self) -> str:
        return text_sha1(self.text)


def text_sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_Key = TypeVar("_Key", str, int)


@dataclass(frozen=True)
class _Layout(Generic[_Key]):
    """Where each value is in a row: column names, or their indexes for rows read as lists."""

    text: _Key
    year: _Key | None
    ids: dict[str, _Key]  # kind -> column, in precedence order
    declared: str | None

    def indexed(self: _Layout[str], header: Sequence[str]) -> _Layout[int]:
        place = {name: i for i, name in enumerate(header)}
        return _Layout(
            text=place[self.text],
            year=None if self.year is None else place[self.year],
            ids={kind: place[column] for kind, column in self.ids.items()},
            declared=self.declared,
        )


def read_corpus(
    path: str | Path, columns: CorpusColumns = CorpusColumns(), *, strict: bool = True
) -> Iterator[CorpusRecord]:
    """Stream a corpus's rows as records; a bad file or missing column raises ``CorpusError``.

    ``strict`` (sampling) requires a year column and an identifier column; without it both are
    optional (an excluded corpus may match on text hashes alone).
    """
    source = Path(path)
    if not source.is_file():
        raise CorpusError(f"{source}: no such corpus file")
    suffixes = [s.lower() for s in source.suffixes[-2:]]
    kind = suffixes[-2] if suffixes[-1:] == [".gz"] and len(suffixes) == 2 else suffixes[-1]
    if kind == ".parquet":
        yield from _read_parquet(source, columns, strict)
    elif kind in (".tsv", ".csv", ".jsonl"):
        with _corrupt_gzip_guard(source):
            yield from _read_text_table(source, kind, columns, strict)
    else:
        known = ".tsv, .tsv.gz, .csv, .csv.gz, .jsonl, .jsonl.gz, .parquet"
        raise CorpusError(f"{source}: unknown corpus format {''.join(suffixes)!r} (known: {known})")


@contextmanager
def _corrupt_gzip_guard(source: Path) -> Iterator[None]:
    try:
        yield
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CorpusError(f"{source}: corrupt or truncated gzip data: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{source}: not UTF-8 text: {exc}") from exc


def _read_text_table(
    source: Path, kind: str, columns: CorpusColumns, strict: bool
) -> Iterator[CorpusRecord]:
    if kind == ".jsonl":
        opener = gzip.open if source.suffix.lower() == ".gz" else open
        with opener(source, "rt", encoding="utf-8", newline="") as handle:
            yield from _read_jsonl(source, handle, columns, strict)
        return
    with open_csv(source, error=CorpusError) as reader:
        layout = _layout(source, reader.columns, columns, strict).indexed(reader.columns)
        for number, (_, fields) in enumerate(reader.rows(), start=1):
            yield _record(layout, number, fields.__getitem__)


def _read_jsonl(
    source: Path, handle: IO[str], columns: CorpusColumns, strict: bool
) -> Iterator[CorpusRecord]:
    layout: _Layout[str] | None = None
    records = json_lines(source, handle, CorpusError)
    for number, (line, value) in enumerate(records, start=1):
        raw = json_object(source, line, value, CorpusError)
        if layout is None:
            layout = _layout(source, list(raw), columns, strict)
        yield _record(layout, number, raw.get)


def _read_parquet(source: Path, columns: CorpusColumns, strict: bool) -> Iterator[CorpusRecord]:
    try:
        import pyarrow.parquet as pq  # pyarrow (the parquet extra) loads only for parquet
    except ImportError as exc:
        raise CorpusError(
            f"{source}: reading Parquet needs pyarrow: pip install 'goldloop[parquet]'"
        ) from exc
    try:
        parquet = pq.ParquetFile(source)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid/OSError family
        raise CorpusError(f"{source}: not a readable Parquet file: {exc}") from exc
    layout = _layout(source, list(parquet.schema_arrow.names), columns, strict)
    wanted = [c for c in (layout.text, layout.year, *layout.ids.values()) if c]
    number = 0
    for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted):
        for raw in batch.to_pylist():
            number += 1
            yield _record(layout, number, raw.get)


def _layout(
    source: Path, header: Sequence[str], columns: CorpusColumns, strict: bool
) -> _Layout[str]:
    by_name = {name.strip().casefold(): name for name in header}

    def find(
        explicit: str | None, candidates: Sequence[str], what: str, required: bool
    ) -> str | None:
        if explicit is not None:
            if explicit not in header:
                raise CorpusError(
                    f"{source}: no column {explicit!r} for the {what} (columns: {_list(header)})"
                )
            return explicit
        for candidate in candidates:
            if candidate in by_name:
                return by_name[candidate]
        if required:
            raise CorpusError(
                f"{source}: no {what} column (looked for {', '.join(candidates)};"
                f" columns: {_list(header)})"
            )
        return None

    text = find(columns.text, TEXT_COLUMNS, "text", True)
    year = find(columns.year, YEAR_COLUMNS, "year", strict)
    declared = find(columns.id_column, ID_COLUMNS, "identifier", False)
    ids = {kind: by_name[kind] for kind in ID_KINDS if kind in by_name}
    if strict and not ids and declared is None:
        raise CorpusError(
            f"{source}: no identifier column (looked for {', '.join((*ID_KINDS, *ID_COLUMNS))};"
            f" columns: {_list(header)})"
        )
    if declared is not None:
        ids.setdefault(declared, declared)
    assert text is not None
    return _Layout(text=text, year=year or None, ids=ids, declared=declared)


def _list(header: Sequence[str]) -> str:
    return ", ".join(header) if header else "none"


def _record(layout: _Layout[Any], number: int, get: Callable[[Any], Any]) -> CorpusRecord:
    """The record of one row, whose values ``get`` returns by the layout's column keys."""
    ids: dict[str, str | None] = dict.fromkeys(ID_KINDS)
    doc_id = doc_uid = None
    for kind, column in layout.ids.items():  # in precedence order
        value = _identifier(kind, get(column))
        if kind in ids:
            ids[kind] = value
        if value and doc_id is None:
            doc_uid = value
            # A column already named doc_id holds finished ids; any other column names the kind.
            doc_id = value if kind == "doc_id" else f"{kind}:{value}"
    text = get(layout.text)
    return CorpusRecord(
        row=number,
        doc_id=doc_id,
        doc_uid=doc_uid,
        ids=ids,
        year=_year(get(layout.year)) if layout.year is not None else None,
        text=text.strip() if isinstance(text, str) else "",
    )


def _identifier(kind: str, value: Any) -> str | None:
    if type(value) is str:
        if value.isdigit() and kind != "pmcid":
            return value  # the common case (a PMID), with nothing to normalise
        if kind == "doi" and value.startswith("10."):
            return value.rstrip().casefold()  # the common DOI: no prefix, nothing missing
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    folded = text.casefold()
    if folded in _MISSING:
        return None
    if kind in ("pmid", "mag") and re.fullmatch(r"\d+\.0", text):
        text = text[:-2]  # written as a float by a dataframe library
    prefixes = _URL_PREFIXES.get(kind, ())
    if folded.startswith(prefixes):
        for prefix in prefixes:
            if text.casefold().startswith(prefix):
                text = text[len(prefix) :]
        folded = text.casefold()
    if kind == "doi":
        text = folded
    if kind == "pmcid":
        text = text.upper() if text.upper().startswith("PMC") else f"PMC{text}"
    return text


def _year(value: Any) -> int | None:
    if type(value) is str and len(value) == 4 and value.isdigit():
        return int(value)  # the common case, read without the pattern
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return None if value != value else int(value)
    match = _YEAR.search(str(value))
    return int(match.group(1)) if match else None


def texts_for(path: str | Path, columns: CorpusColumns, wanted: dict[str, str]) -> dict[str, str]:
    """Texts of the ``wanted`` doc_ids whose text hash matches, read again from the corpus."""
    texts: dict[str, str] = {}
    for record in read_corpus(path, columns, strict=False):
        if record.doc_id in wanted and record.text_sha1 == wanted[record.doc_id]:
            texts[record.doc_id] = record.text
            if len(texts) == len(wanted):
                break
    return texts
