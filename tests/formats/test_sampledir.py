"""The sample dir reader: sample dirs, plain documents JSONL, and malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.formats.sampledir import MANIFEST, TEXTS, append_batch
from goldloop.sample import ManifestRow, SampleDirError, read_documents, read_manifest


def _row(doc_id: str, batch: int = 0, role: str = "primary") -> ManifestRow:
    kind, value = doc_id.split(":", 1)
    return ManifestRow(
        doc_id=doc_id, doc_uid=value, ids={"pmid": value if kind == "pmid" else None},
        publication_year=2001, n_chars=12, n_mentions=2, n_verb_mentions=1,
        labels_detected=("activates", "has part"), stratum="y1-low-common", p_incl=0.25,
        batch=batch, role=role, text_sha1="ab",
    )  # fmt: skip


def test_sample_dir_round_trip_fills_sampling_fields(tmp_path: Path) -> None:
    append_batch(
        tmp_path,
        [_row("pmid:1"), _row("doi:10.1/x", role="double")],
        {"pmid:1": "One 𝛼.", "doi:10.1/x": "Two."},
    )
    append_batch(tmp_path, [_row("pmid:3", batch=1, role="reserve")], {"pmid:3": "Three."})
    docs = read_documents(tmp_path)
    assert [d.doc_id for d in docs] == ["pmid:1", "doi:10.1/x", "pmid:3"]
    first = docs[0]
    assert (first.text, first.doc_uid, first.role, first.batch, first.p_incl, first.stratum) == (
        "One 𝛼.",
        "1",
        "primary",
        0,
        0.25,
        "y1-low-common",
    )
    assert first.ids == {"pmid": "1", "doi": None, "openalex": None, "mag": None, "pmcid": None}
    assert [d.batch for d in docs] == [0, 0, 1]
    assert read_manifest(tmp_path)[0].labels_detected == ("activates", "has part")
    # the header is written once, rows are appended
    assert (tmp_path / MANIFEST).read_text().count("doc_id,doc_uid") == 1


def test_plain_documents_jsonl_keeps_extra_fields(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"doc_id": "a", "text": "x", "source": "web"}\n\n{"doc_id": "b", "text": "y"}\n'
    )
    docs = read_documents(path)
    assert [d.doc_id for d in docs] == ["a", "b"]
    assert docs[0].to_json()["source"] == "web"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"doc_id": "a", "text": "x"}\n{"doc_id": "b", "text": \n', "line 2: not valid JSON"),
        ('{"doc_id": "a", "text": "x"}\n["b"]\n', "line 2: expected an object"),
        ('{"doc_id": "a"}\n', "line 1: 'text' must be a non-empty string"),
        (
            '{"doc_id": "a", "text": "x"}\n{"doc_id": "a", "text": "y"}\n',
            "line 2: doc_id 'a' repeats line 1",
        ),
    ],
)
def test_bad_jsonl_lines_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(content)
    with pytest.raises(SampleDirError) as err:
        read_documents(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_manifest_without_text_is_an_error(tmp_path: Path) -> None:
    append_batch(tmp_path, [_row("pmid:1")], {"pmid:1": "One."})
    (tmp_path / TEXTS).write_text(json.dumps({"doc_id": "pmid:2", "text": "x"}) + "\n")
    with pytest.raises(SampleDirError, match="no text for 1 manifest document"):
        read_documents(tmp_path)


def test_malformed_manifest_row_names_line(tmp_path: Path) -> None:
    append_batch(tmp_path, [_row("pmid:1"), _row("pmid:2")], {"pmid:1": "a", "pmid:2": "b"})
    manifest = tmp_path / MANIFEST
    manifest.write_text(manifest.read_text().replace("0.25", "lots", 1))
    with pytest.raises(SampleDirError, match=r"manifest.csv: line 2: could not convert"):
        read_documents(tmp_path)


def test_missing_path_and_non_sample_dir(tmp_path: Path) -> None:
    with pytest.raises(SampleDirError, match="no such sample dir"):
        read_documents(tmp_path / "nope.jsonl")
    with pytest.raises(SampleDirError, match="not a sample dir"):
        read_documents(tmp_path)


def test_the_shipped_example_sample_dir_reads(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "data" / "sample"
    docs = read_documents(example)
    assert len(docs) == 15 and len({d.doc_id for d in docs}) == 15
    assert {(d.batch, d.role) for d in docs} == {
        (b, r) for b in (0, 1) for r in ("primary", "double", "reserve")
    }
    assert sum(d.role == "primary" for d in docs) == 9
    assert all(d.doc_id == f"pmid:{d.doc_uid}" and d.p_incl and d.stratum for d in docs)
