"""CSV and TSV files: the one reader of every table goldloop reads (KB, equivalences, review and
symmetric sheets, id bridges, corpora), the one rule for booleans in them, and the one writer of
a table's text (:func:`table_text`: KB, review sheets, manifest, pool, score summaries).

The rules, the same for every file:

- UTF-8, with or without a byte-order mark; any line ending (LF, CRLF or CR alone);
- a tab delimiter for ``.tsv`` (and ``.tsv.gz``), a comma otherwise; ``.gz`` files are gunzipped;
- the first row is the header; column names are stripped, and must be distinct;
- a row may leave trailing fields out (they read as ""), never have more fields than the header;
- a NUL byte, a quote left open or text after a closing quote is an error naming the file and line;
- values are kept as written: callers strip what they compare.

A line without a quote is split at the delimiter; a record with a quote is read by the csv
module (which gives the same fields for the others, several times slower).

Booleans (:func:`parse_bool`): ``True``/``yes``/``1`` and ``False``/``no``/``0``, in any case; an
empty cell is false.

A table written for people to open in a spreadsheet (:func:`table_text`, the review sheet) has
every cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab or CR first, after
any apostrophes) prefixed with an apostrophe, as OWASP advises against CSV injection; reading
with ``spreadsheet=True`` removes it, so a doc id ``=HYPERLINK(...)`` comes back as it was.
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from goldloop.errors import GoldloopError

# A field may be as long as a full text; an unclosed quote is then reported at the end of the file
# (csv's default limit of 128 KiB would cut a long abstract with a misleading error).
csv.field_size_limit(sys.maxsize)

# What makes a spreadsheet read a cell as a formula (OWASP, "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0", "")


class CsvError(GoldloopError):
    """A CSV/TSV file cannot be read; the message names the file and line."""


def delimiter_for(path: Path) -> str:
    """Tab for ``.tsv`` (gzipped or not), comma otherwise."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return "\t" if suffixes and suffixes[-1] == ".tsv" else ","


class CsvReader:
    """The header (``columns``), then ``(line where the record starts, row)`` per record."""

    def __init__(
        self,
        path: Path,
        stream: IO[bytes],
        *,
        required: Sequence[str] = (),
        delimiter: str | None = None,
        error: type[GoldloopError] = CsvError,
    ) -> None:
        self.path = path
        self._error = error
        self._physical = 0
        self._delimiter = delimiter or delimiter_for(path)
        self._lines = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
        self._pending: str | None = None
        # The csv module parses only records with a quote; it pulls their lines from _feed.
        self._quoted = csv.reader(self._feed(), delimiter=self._delimiter, strict=True)
        self._records = self._read()
        header = self._header()
        if header is None:
            raise error(f"{path}: empty file: no header row")
        self.columns = [name.strip() for name in header]
        repeated = sorted({c for c in self.columns if self.columns.count(c) > 1})
        if repeated:
            raise error(f"{path}: line 1: column(s) named twice: {', '.join(repeated)}")
        missing = [c for c in required if c not in self.columns]
        if missing:
            raise error(f"{path}: missing column(s) {', '.join(missing)}")

    def __iter__(self) -> Iterator[tuple[int, dict[str, str]]]:
        columns = self.columns
        for start, fields in self.rows():
            yield start, dict(zip(columns, fields, strict=True))

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """``(line where the record starts, fields)`` per record, in the header's order and
        padded to its width (the stream :meth:`__iter__` names, for readers that index)."""
        width = len(self.columns)
        for start, fields in self._records:
            if len(fields) != width:
                if not fields:
                    continue  # a blank line
                if len(fields) > width:
                    raise self._error(
                        f"{self.path}: line {start}: {len(fields)} fields, "
                        f"the header has {width} columns"
                    )
                fields += [""] * (width - len(fields))
            yield start, fields

    def _header(self) -> list[str] | None:
        first = next(self._records, None)
        return None if first is None else first[1]

    def _read(self) -> Iterator[tuple[int, list[str]]]:
        """Every record (a blank line as ``[]``) with the line it starts on.

        A line without a quote is one whole record: splitting it at the delimiter gives what
        the csv module gives, several times faster. A line with a quote (or longer than the
        csv module's field limit, so it raises its own error) goes to the csv module, which
        reads the record's further lines itself.
        """
        delimiter, limit = self._delimiter, csv.field_size_limit()
        try:
            for line in self._lines:
                self._physical += 1
                start = self._physical
                if "\x00" in line:
                    raise self._nul()
                if '"' in line or len(line) > limit:
                    self._pending = line
                    try:
                        yield start, next(self._quoted)
                    except csv.Error as exc:
                        reason = str(exc)
                        if reason == "unexpected end of data":
                            reason = "a quoted field is not closed before the end of the file"
                        raise self._error(
                            f"{self.path}: line {start}: bad quoting: {reason}"
                        ) from None
                    continue
                fields = line.split(delimiter)
                last = fields[-1] = fields[-1].rstrip("\r\n")  # the line ending, if any
                yield start, [] if not last and len(fields) == 1 else fields
        except UnicodeDecodeError as exc:
            raise self._error(
                f"{self.path}: line {self._physical + 1}: not UTF-8 text ({exc.reason})"
            ) from None
        except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
            raise self._error(f"{self.path}: cannot read: {exc}") from None

    def _feed(self) -> Iterator[str]:
        """The lines of quoted records for the csv module: the record's first line, then
        further lines while its quote is open."""
        while True:
            line = self._pending
            if line is not None:
                self._pending = None
            else:
                line = next(self._lines, None)
                if line is None:
                    return
                self._physical += 1
                if "\x00" in line:
                    raise self._nul()
            yield line

    def _nul(self) -> GoldloopError:
        return self._error(f"{self.path}: line {self._physical}: a NUL byte: not a text table")


@contextmanager
def open_csv(
    path: str | Path,
    *,
    required: Sequence[str] = (),
    delimiter: str | None = None,
    error: type[GoldloopError] = CsvError,
) -> Iterator[CsvReader]:
    """Stream a CSV/TSV file (gzipped when it ends in ``.gz``); the header is checked on entry."""
    source = Path(path)
    with ExitStack() as stack:
        try:
            raw = stack.enter_context(_open_binary(source))
        except OSError as exc:
            raise error(f"{source}: cannot read: {exc.strerror or exc}") from None
        yield CsvReader(source, raw, required=required, delimiter=delimiter, error=error)


def _open_binary(path: Path) -> IO[bytes]:
    if path.suffix.lower() == ".gz":
        # typeshed types GzipFile apart from IO[bytes]; it is a binary file object all the same.
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


@dataclass(frozen=True)
class CsvTable:
    path: Path
    columns: list[str]
    rows: list[tuple[int, dict[str, str]]]


def read_csv(
    path: str | Path,
    *,
    required: Sequence[str] = (),
    delimiter: str | None = None,
    error: type[GoldloopError] = CsvError,
    data: bytes | None = None,
    spreadsheet: bool = False,
) -> CsvTable:
    """A whole CSV/TSV file; ``data`` is its content when the caller already read the bytes;
    ``spreadsheet``: a table :func:`table_text` wrote, its formula escapes removed."""
    source = Path(path)
    if data is None:
        with open_csv(source, required=required, delimiter=delimiter, error=error) as reader:
            columns, rows = reader.columns, list(reader)
    else:
        reader = CsvReader(
            source, io.BytesIO(data), required=required, delimiter=delimiter, error=error
        )
        columns, rows = reader.columns, list(reader)
    if spreadsheet:
        rows = [
            (line, {key: unescape_formula(value) for key, value in row.items()})
            for line, row in rows
        ]
    return CsvTable(source, columns, rows)


def _formula_like(value: str) -> bool:
    return value.lstrip("'").startswith(FORMULA_START)


def escape_formula(value: str) -> str:
    """``value`` as a spreadsheet keeps it text: an apostrophe first where it would be a
    formula (apostrophes already first count, so :func:`unescape_formula` undoes exactly it)."""
    return "'" + value if _formula_like(value) else value


def unescape_formula(value: str) -> str:
    """The cell :func:`escape_formula` wrote ``value`` for."""
    return value[1:] if value.startswith("'") and _formula_like(value) else value


def parse_bool(value: str, where: str, column: str, error: type[GoldloopError] = CsvError) -> bool:
    """The one reading of a boolean cell (see the module docstring); ``error`` names the cell."""
    word = value.strip().casefold()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise error(
        f"{where}: {column} must be True or False (or yes/no, 1/0, in any case), got {value!r}"
    )


def format_bool(value: bool) -> str:
    """A boolean cell as :func:`parse_bool` reads it back."""
    return "True" if value else "False"


def table_text(
    columns: Sequence[str],
    rows: Iterable[Mapping[str, object]],
    *,
    delimiter: str = ",",
    spreadsheet: bool = True,
    header: bool = True,
) -> str:
    """A table as text: the one CSV/TSV writer (LF line ends, quoted only where needed, a cell
    missing from a row written empty, keys outside ``columns`` left out).

    ``spreadsheet``: for people to open in a spreadsheet, formula-like cells escaped (read back
    unchanged with ``read_csv(..., spreadsheet=True)``); off for files only programs read, whose
    cells (a negative number) must stay as they are. ``header``: off to append rows to a table."""
    buffer = io.StringIO()
    writer, quoted = (
        csv.DictWriter(
            buffer, fieldnames=list(columns), delimiter=delimiter, lineterminator="\n",
            quoting=quoting, extrasaction="ignore",
        )
        for quoting in (csv.QUOTE_MINIMAL, csv.QUOTE_ALL)
    )  # fmt: skip
    if header:
        writer.writeheader()
    for row in rows:
        cells = {
            key: escape_formula(value) if spreadsheet and isinstance(value, str) else value
            for key, value in row.items()
        }
        # The csv module quotes a field with LF (the line end here) but not one with CR alone,
        # which every reader takes for a line end: such a row is written quoted whole.
        cr = any(isinstance(cell, str) and "\r" in cell for cell in cells.values())
        (quoted if cr else writer).writerow(cells)
    return buffer.getvalue()
