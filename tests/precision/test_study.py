"""``precision sample`` on a verdicts file in the README's own format (no ``surface``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli

TEXT = "In these cells ERK phosphorylates the proliferation marker."


def _files(tmp_path: Path, **extra: object) -> tuple[Path, Path]:
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"doc_id": "pmid:1", "text": TEXT}) + "\n")
    verdicts = tmp_path / "verdicts.jsonl"
    row = {"doc_id": "pmid:1", "a": 19, "b": 33, "entity_id": "RO.0002447",
           "verdict": "supported", **extra}  # fmt: skip
    verdicts.write_text(json.dumps(row) + "\n")
    return documents, verdicts


def test_the_passage_shows_the_mention_when_verdicts_carry_no_surface(
    tmp_path: Path, cli: Cli
) -> None:
    documents, verdicts = _files(tmp_path)
    out = tmp_path / "to_label.jsonl"
    result = cli("precision", "sample", "--verdicts", verdicts, "--documents", documents,
                 "-o", out, "--n", 1)  # fmt: skip
    assert result.returncode == 0, result.stderr
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["surface"] == "phosphorylates" == TEXT[19:33]
    assert row["passage"] == "In these cells ERK ⟦phosphorylates⟧ the proliferation marker."


def test_a_surface_that_does_not_match_the_documents_is_refused(tmp_path: Path, cli: Cli) -> None:
    documents, verdicts = _files(tmp_path, surface="activates")
    out = tmp_path / "to_label.jsonl"
    result = cli("precision", "sample", "--verdicts", verdicts, "--documents", documents, "-o", out)
    assert result.returncode == 2
    assert f"{verdicts}: mention pmid:1" in result.err and "differs" in result.err
    assert not out.exists()


def test_a_mention_of_a_missing_document_is_refused(tmp_path: Path, cli: Cli) -> None:
    documents, verdicts = _files(tmp_path)
    documents.write_text(json.dumps({"doc_id": "pmid:2", "text": TEXT}) + "\n")
    out = tmp_path / "to_label.jsonl"
    result = cli("precision", "sample", "--verdicts", verdicts, "--documents", documents, "-o", out)
    assert result.returncode == 2
    assert "no document 'pmid:1' among the documents" in result.err
    assert "Traceback" not in result.err and not out.exists()
