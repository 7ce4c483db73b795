"""JSON Lines: read with line numbers, errors naming the file and line, written atomically."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldloop.files.jsonl import JsonlError, read_jsonl, write_jsonl


def test_a_written_file_reads_back_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [{"doc_id": "pmid:1", "text": "é"}, {"doc_id": "pmid:2"}])
    assert read_jsonl(path) == [(1, {"doc_id": "pmid:1", "text": "é"}), (2, {"doc_id": "pmid:2"})]


def test_a_bom_blank_lines_and_crlf_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}\r\n')
    assert read_jsonl(path) == [(1, {"a": 1}), (3, {"a": 2})]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": 1}\n{"a": \n', "line 2: not valid JSON"),
        ('{"a": 1}\n[1, 2]\n', "line 2: expected an object, got list"),
    ],
)
def test_a_bad_line_is_named_with_its_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JsonlError, match=re.escape(f"rows.jsonl: {message}")):
        read_jsonl(path)


def test_a_missing_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(JsonlError, match=re.escape("nope.jsonl: cannot read")):
        read_jsonl(tmp_path / "nope.jsonl")
