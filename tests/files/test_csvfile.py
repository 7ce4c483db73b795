"""The one CSV/TSV reader: BOM, line endings, NUL bytes, quoting errors, gzip, booleans."""

from __future__ import annotations

import csv
import gzip
import io
import random
from pathlib import Path

import pytest

from goldloop.files.csvfile import CsvError, open_csv, parse_bool, read_csv
from goldloop.kb import KBError, load_kb

ROWS = [(2, {"id": "A", "text": "x, y"}), (3, {"id": "B", "text": "z"})]


@pytest.mark.parametrize(
    "raw",
    [
        b'id,text\n"A","x, y"\nB,z\n',
        b'\xef\xbb\xbfid,text\r\nA,"x, y"\r\nB,z\r\n',
        b'id,text\rA,"x, y"\rB,z\r',
        b'id,text\n\nA,"x, y"\nB,z',
    ],
    ids=["lf", "bom-crlf", "cr-only", "blank-line-no-final-newline"],
)
def test_any_line_ending_and_a_bom_read_the_same_rows(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(raw)
    table = read_csv(path, required=("id",))
    assert table.columns == ["id", "text"]
    assert [row for _, row in table.rows] == [row for _, row in ROWS]


def test_line_numbers_count_records_that_span_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('id,text\nA,"two\nlines"\nB,z\n', encoding="utf-8")
    assert [line for line, _ in read_csv(path).rows] == [2, 4]


def test_tsv_gz_is_gunzipped_and_tab_delimited(tmp_path: Path) -> None:
    path = tmp_path / "corpus.tsv.gz"
    path.write_bytes(gzip.compress(b"id\ttext\nA\tx, y\nB\tz\n"))
    with open_csv(path) as reader:
        assert reader.columns == ["id", "text"]
        assert list(reader) == ROWS


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"id,text\nA,x\x00y\n", "line 2: a NUL byte"),
        (b'id,text\nA,"open\nB,z\n', "line 2: bad quoting: a quoted field is not closed"),
        (b'id,text\nA,"x"y\n', "line 2: bad quoting"),
        (b"id,text\nA,x,extra\n", "line 2: 3 fields, the header has 2 columns"),
        (b"id,id\nA,B\n", "line 1: column(s) named twice: id"),
        (b"", "empty file: no header row"),
        (b"text\nx\n", "missing column(s) id"),
        (b"id,text\nA,\xff\n", "not UTF-8 text"),
        (b"i\rd,text\nA,x\n", "missing column(s) id"),
    ],
    ids=[
        "nul",
        "open-quote",
        "text-after-quote",
        "extra-field",
        "dup-column",
        "empty",
        "missing-column",
        "not-utf8",
        "bare-cr-in-header",
    ],
)
def test_bad_tables_name_the_file_and_line(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(raw)
    with pytest.raises(CsvError) as err:
        read_csv(path, required=("id",))
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_a_missing_file_and_a_corrupt_gzip_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(CsvError, match="cannot read"):
        read_csv(tmp_path / "nope.csv")
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(CsvError, match="cannot read"):
        read_csv(broken)


def test_the_callers_error_type_is_raised(tmp_path: Path) -> None:
    path = tmp_path / "kb.csv"
    path.write_bytes(b"entity_id,label\rX:1,\x00\r")
    with pytest.raises(KBError, match="NUL byte"):
        load_kb(path)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("True", True),
        ("yes", True),
        ("1", True),
        (" TRUE ", True),
        ("False", False),
        ("no", False),
        ("0", False),
        ("", False),
    ],
)
def test_one_boolean_rule(value: str, expected: bool) -> None:
    assert parse_bool(value, "f: line 2", "flag") is expected


def test_a_non_boolean_names_the_cell() -> None:
    with pytest.raises(CsvError, match=r"f: line 2: flag must be True or False .* got 'maybe'"):
        parse_bool("maybe", "f: line 2", "flag")


def test_a_field_longer_than_csvs_default_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "corpus.tsv"
    long_text = "word " * 60_000  # 300 kB: a full text, past csv's 128 KiB default
    path.write_text(f"id\ttext\nA\t{long_text}\n", encoding="utf-8")
    assert read_csv(path).rows == [(2, {"id": "A", "text": long_text})]


def _reference_rows(raw: bytes, delimiter: str) -> list[tuple[int, list[str]]]:
    """Every record as the csv module alone reads it, with the line it starts on."""
    lines = io.StringIO(raw.decode("utf-8-sig"), newline="")
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    rows = []
    start = reader.line_num + 1
    for fields in reader:
        if fields:
            rows.append((start, fields))
        start = reader.line_num + 1
    return rows


@pytest.mark.parametrize("name", ["t.tsv", "t.csv"])
def test_lines_without_quotes_split_as_the_csv_module_reads_them(tmp_path: Path, name: str) -> None:
    # The reader splits quote-free lines itself and hands the others to the csv module: on
    # random tables of every awkward piece, both together give what the csv module alone gives.
    rng = random.Random(7)
    pieces = ["a", "b c", "", " ", "\t", ",", '"', '""', "\n", "\r\n", "\r", "é", "x'y", "  z "]
    path = tmp_path / name
    delimiter = "\t" if name.endswith(".tsv") else ","
    for _ in range(60):
        width = rng.randint(1, 4)
        buffer = io.StringIO()
        ending = rng.choice(["\n", "\r\n", "\r"])
        writer = csv.writer(buffer, delimiter=delimiter, lineterminator=ending)
        writer.writerow([f"c{i}" for i in range(width)])
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.1:
                buffer.write(ending)  # a blank line
                continue
            fields = ["".join(rng.choices(pieces, k=rng.randint(0, 3))) for _ in range(width)]
            writer.writerow(fields[: rng.randint(1, width)])
            if rng.random() < 0.1:  # a stray quote inside an unquoted field is kept as text
                buffer.write(delimiter.join(["x"] * (width - 1) + ['y"z']) + ending)
        text = buffer.getvalue()
        if rng.random() < 0.3:
            text = text.rstrip("\r\n")
        raw = (b"\xef\xbb\xbf" if rng.random() < 0.3 else b"") + text.encode("utf-8")
        path.write_bytes(raw)
        expected = _reference_rows(raw, delimiter)
        with open_csv(path) as reader:
            header = reader.columns
            rows = list(reader.rows())
        assert header == [c.strip() for c in expected[0][1]], text
        padded = [(n, f + [""] * (len(header) - len(f))) for n, f in expected[1:]]
        assert rows == padded, text


def test_a_written_table_reads_back_unchanged(tmp_path: Path) -> None:
    from goldloop.files.csvfile import format_bool, table_text

    rows = [
        {"id": "1", "text": 'tab\there, "quoted", comma, é 𝛼', "flag": format_bool(True)},
        {"id": "2", "text": "line one\nline two\r\nthree", "flag": format_bool(False)},
        {"id": "3", "text": "", "flag": ""},
    ]
    for name, delimiter in (("t.tsv", "\t"), ("t.csv", ",")):
        path = tmp_path / name
        path.write_text(table_text(["id", "text", "flag"], rows, delimiter=delimiter), "utf-8")
        table = read_csv(path)
        assert table.columns == ["id", "text", "flag"]
        assert [row for _, row in table.rows] == rows
        assert [parse_bool(r["flag"], "here", "flag") for _, r in table.rows] == [
            True,
            False,
            False,
        ]


def test_formula_cells_are_escaped_for_a_spreadsheet_and_read_back_unchanged(
    tmp_path: Path,
) -> None:
    """Issue 44, item 12: random cells built from formula starts, apostrophes and text: written,
    none starts as a formula; read back with ``spreadsheet=True``, every one is as it was."""
    from goldloop.files.csvfile import FORMULA_START, table_text

    rng = random.Random(44)
    parts = [*FORMULA_START, "'", "''", "a", "1", " ", "=x", '"', "é"]
    cells = ["", "'", "''", "=", "'="] + [
        "".join(rng.choice(parts) for _ in range(rng.randint(1, 5))) for _ in range(2000)
    ]
    rows = [{"id": str(i), "cell": cell} for i, cell in enumerate(cells)]
    path = tmp_path / "t.tsv"
    path.write_text(table_text(["id", "cell"], rows, delimiter="\t"), "utf-8")
    with path.open(encoding="utf-8", newline="") as handle:
        written = [row["cell"] for row in csv.DictReader(handle, delimiter="\t")]
    assert not [cell for cell in written if cell.startswith(FORMULA_START)]
    assert [row for _, row in read_csv(path, spreadsheet=True).rows] == rows
