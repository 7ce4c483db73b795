"""Corpus reading (every format, identifiers, clear errors) and the eligibility gate's reasons."""

from __future__ import annotations

import csv
import gzip
import json
import random
from pathlib import Path

import pytest

from goldloop.sample.corpus import CorpusColumns, CorpusError, read_corpus
from goldloop.sample.gate import GATE_REASONS, Gate, GateSettings, count_sentences, exclusion_sets
from tests.conftest import Cli

SENTENCES = (
    "Interleukin-6 activates STAT3 in cultured hepatocytes. "
    "STAT3 is inhibited by SOCS3 in these cells. "
    "The response is reduced by prolonged exposure to the cytokine. "
    "These results show that feedback limits the acute phase response in the liver."
)
ROWS = [
    {"pmid": "101", "doi": "10.1/A", "publication_year": "2001", "abstract": SENTENCES},
    {
        "pmid": "",
        "doi": "https://doi.org/10.1/B",
        "publication_year": "2002-05-01",
        "abstract": SENTENCES + " Two.",
    },
    {"pmid": "103.0", "doi": "", "publication_year": "2003", "abstract": "Short."},
]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path
    opener = gzip.open if path.suffix == ".gz" else open
    delimiter = "," if ".csv" in path.suffixes else "\t"
    with opener(path, "wt", encoding="utf-8", newline="") as handle:  # type: ignore[operator]
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("name", ["c.tsv", "c.tsv.gz", "c.csv", "c.jsonl", "c.parquet"])
def test_every_format_reads_the_same_records(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name.endswith(".parquet"):
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(ROWS), path)
    else:
        _write(path, ROWS)
    records = list(read_corpus(path))
    assert [r.doc_id for r in records] == ["pmid:101", "doi:10.1/b", "pmid:103"]
    assert [r.year for r in records] == [2001, 2002, 2003]
    assert records[0].ids == {
        "pmid": "101",
        "doi": "10.1/a",
        "openalex": None,
        "mag": None,
        "pmcid": None,
    }
    assert records[1].doc_uid == "10.1/b" and records[2].text == "Short."


def test_declared_id_column_comes_after_the_known_kinds(tmp_path: Path) -> None:
    rows = [
        {"pmcid": "", "accession": "X1", "year": "2001", "text": "a"},
        {"pmcid": "123", "accession": "X2", "year": "2001", "text": "b"},
        {"pmcid": "", "accession": "", "year": "2001", "text": "c"},
    ]
    path = _write(tmp_path / "c.tsv", rows)
    records = list(read_corpus(path, CorpusColumns(id_column="accession")))
    assert [r.doc_id for r in records] == ["accession:X1", "pmcid:PMC123", None]


def test_doc_id_column_holds_finished_ids(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", [{"doc_id": "corpus:7", "year": "2001", "summary": "a"}])
    assert [r.doc_id for r in read_corpus(path)] == ["corpus:7"]


def test_missing_columns_name_file_and_columns(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.tsv", [{"pmid": "1", "year": "2001", "body": "x"}])
    with pytest.raises(
        CorpusError,
        match=r"c\.tsv: no text column \(looked for abstract, summary, text;"
        r" columns: pmid, year, body\)",
    ):
        list(read_corpus(path))
    with pytest.raises(CorpusError, match="no column 'abstract' for the text"):
        list(read_corpus(path, CorpusColumns(text="abstract")))
    no_year = _write(tmp_path / "y.tsv", [{"pmid": "1", "text": "x"}])
    with pytest.raises(CorpusError, match="no year column"):
        list(read_corpus(no_year))
    no_id = _write(tmp_path / "i.tsv", [{"year": "2001", "text": "x"}])
    with pytest.raises(CorpusError, match="no identifier column"):
        list(read_corpus(no_id))
    sheet = tmp_path / "c.xlsx"
    sheet.write_text("x")
    with pytest.raises(CorpusError, match=r"unknown corpus format '\.xlsx'"):
        list(read_corpus(sheet))


def test_corrupt_gzip_is_a_clear_error(tmp_path: Path) -> None:
    rng = random.Random(0)
    varied = [
        {
            **ROWS[0],
            "pmid": str(i),
            "abstract": " ".join(f"w{rng.random():.12f}" for _ in range(60)),
        }
        for i in range(2000)
    ]  # incompressible enough that half the file holds many whole rows
    good = _write(tmp_path / "c.tsv.gz", varied)
    broken = tmp_path / "broken.tsv.gz"
    data = good.read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    seen = 0
    # goldloop.files.csvfile words it: "cannot read: Compressed file ended before the end-of-stream ..."
    with pytest.raises(CorpusError, match=r"broken\.tsv\.gz: cannot read: Compressed file ended"):
        for _ in read_corpus(broken):
            seen += 1
    assert 0 < seen < 2000  # rows arrive as the file is read: the corpus is streamed
    not_gzip = tmp_path / "plain.tsv.gz"
    not_gzip.write_text("pmid\tabstract\n1\tx\n")
    with pytest.raises(CorpusError, match=r"plain\.tsv\.gz: cannot read: Not a gzipped file"):
        list(read_corpus(not_gzip))


def test_cli_exits_2_on_corrupt_gzip_and_missing_column(tmp_path: Path, cli: Cli) -> None:
    broken = tmp_path / "broken.tsv.gz"
    broken.write_bytes(gzip.compress(b"pmid\tyear\tabstract\n" * 200)[:60])
    result = cli("sample", "--corpus", broken, "--out", tmp_path / "s")
    code, err = result.returncode, result.err
    assert code == 2 and "broken.tsv.gz: cannot read: Compressed file ended" in err
    no_text = _write(tmp_path / "c.tsv", [{"pmid": "1", "year": "2001", "body": "x"}])
    result = cli("sample", "--corpus", no_text, "--out", tmp_path / "s")
    code, err = result.returncode, result.err
    assert code == 2 and "no text column" in err
    assert not (tmp_path / "s" / "manifest.csv").exists()


def test_sentence_count() -> None:
    assert count_sentences(SENTENCES) == 4
    assert count_sentences("Values rose (p < 0.05). The e.g. case stays one. 3 cells died.") == 3
    assert count_sentences("") == 0


def test_every_gate_reason_is_counted(tmp_path: Path) -> None:
    long_text = " ".join([SENTENCES] * 10)
    german = (
        "Die Kinase wird durch Zyklin aktiviert und durch Phosphorylierung gehemmt. Wir zeigen "
        "dies in Hefe. Eine Überexpression verzögert die Mitose deutlich. Diese Ergebnisse "
        "bestätigen das Modell des Zellzyklus in allen untersuchten Stämmen sehr klar und gut."
    )
    rows = [
        ("1", "2001", SENTENCES),  # eligible
        ("", "2001", SENTENCES + " A."),  # no_identifier
        ("2", "2001", SENTENCES + " B."),  # in_excluded_corpus (by id)
        ("3", "2001", SENTENCES + " Excluded by its text."),  # in_excluded_corpus (by hash)
        ("4", "", SENTENCES + " C."),  # no_year
        ("5", "1985", SENTENCES + " D."),  # year_before_min
        ("6", "2001", "Too short. Really."),  # too_short
        ("7", "2001", long_text),  # too_long
        ("8", "2001", SENTENCES.replace(". ", "; ")),  # too_few_sentences
        ("9", "2001", german),  # not_english
        ("10", "2001", SENTENCES),  # duplicate_text
        ("1", "2002", SENTENCES + " E."),  # duplicate_id
        ("11", "2002", SENTENCES + " F."),  # eligible
    ]
    path = _write(tmp_path / "c.tsv", [{"pmid": p, "year": y, "abstract": t} for p, y, t in rows])
    excluded = _write(
        tmp_path / "fit.tsv",
        [
            {"pmid": "2", "abstract": "other"},
            {"pmid": "", "abstract": SENTENCES + " Excluded by its text."},
        ],
    )
    ids, hashes = exclusion_sets(read_corpus(excluded, strict=False))
    gate = Gate(
        GateSettings(min_year=1990, min_chars=200, max_chars=2000, min_sentences=3), ids, hashes
    )
    admitted = [r.doc_id for r in read_corpus(path) if gate.admit(r)]
    assert admitted == ["pmid:1", "pmid:11"]
    expected = dict.fromkeys(GATE_REASONS, 1)
    expected["in_excluded_corpus"] = 2
    assert gate.counts() == expected
    assert gate.passed + sum(gate.counts().values()) == len(rows)


def test_an_excluded_corpus_may_hold_texts_only(tmp_path: Path) -> None:
    texts_only = _write(tmp_path / "fit.tsv", [{"abstract": SENTENCES}])
    ids, hashes = exclusion_sets(read_corpus(texts_only, strict=False))
    assert ids == frozenset() and len(hashes) == 1
    gate = Gate(GateSettings(min_chars=200), ids, hashes)
    assert [gate.reason(r) for r in read_corpus(_write(tmp_path / "c.tsv", ROWS[:1]))] == [
        "in_excluded_corpus"
    ]


def test_csv_corpus_goes_through_the_one_csv_reader(tmp_path: Path) -> None:
    # A byte-order mark and CRLF line endings read like a plain file; a NUL names its line.
    plain = _write(tmp_path / "c.csv", ROWS)
    windows = tmp_path / "w.csv"
    windows.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    assert [r.doc_id for r in read_corpus(windows)] == [r.doc_id for r in read_corpus(plain)]
    lines = plain.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"10.1", b"10\x00.1")
    nul = tmp_path / "nul.csv"
    nul.write_bytes(b"\n".join(lines))
    with pytest.raises(CorpusError, match=r"nul\.csv: line 3: a NUL byte"):
        list(read_corpus(nul))
