"""Dataset statistics (``goldloop stats``) on a real sample of the demo corpus."""

from __future__ import annotations

import json
from pathlib import Path

from goldloop.kb import KB
from goldloop.sample.stats import dataset_stats, describe
from goldloop.settings import DEMO_CORPUS
from tests.conftest import Cli
from tests.sample.conftest import Gold


def test_stats_sections(sample_dir: Path, sample_gold: Gold, kb: KB, tmp_path: Path) -> None:
    x = sample_gold.x
    only_kb = dataset_stats(kb).to_dict()
    assert set(only_kb) == {"kb"} and only_kb["kb"]["rows"] == len(kb)
    every = dataset_stats(kb, corpus=DEMO_CORPUS, sample=sample_dir, gold=sample_gold.path)
    stats = every.to_dict()
    assert list(stats) == ["kb", "corpus", "sample", "gold"]
    assert list(dataset_stats(kb, gold=sample_gold.path).to_dict()) == ["kb", "gold"]
    corpus = stats["corpus"]
    assert (corpus["documents"], corpus["with_identifier"], corpus["without_year"]) == (31, 30, 0)
    assert (corpus["years"]["min"], corpus["years"]["max"]) == (1984, 2023)
    sample = stats["sample"]
    assert sample["documents"] == 24 and sample["by_batch"] == {"0": 12, "1": 12}
    assert sample["by_role"] == {"double": 4, "primary": 16, "reserve": 4}
    plain = tmp_path / "docs.jsonl"
    plain.write_text('{"doc_id": "a", "text": "abcd"}\n{"doc_id": "b", "text": "ab"}\n')
    assert dataset_stats(kb, sample=plain).to_dict()["sample"]["chars"]["mean"] == 3.0
    gold = stats["gold"]
    assert (gold["documents"], gold["hits"], gold["distinct_relations"]) == (24, 6, 2)
    assert gold["relations"][x] == {"label": "reduces", "hits": 3}
    assert gold["anchored_share"] == 0.5 and gold["anchoring"] == {"anchored": 3, "paraphrase": 3}
    assert gold["directions"] == {"forward": 6}
    assert gold["documents_without_hits"] == 18


def test_cli_stats(sample_dir: Path, tmp_path: Path, cli: Cli) -> None:
    result = cli("stats", "--sample", sample_dir, "--report-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "dataset statistics" in result.stdout
    assert json.loads((tmp_path / "dataset_stats.json").read_text())["sample"]["documents"] == 24


def test_the_sections_keep_their_json_keys_in_order(
    sample_dir: Path, sample_gold: Gold, kb: KB, tmp_path: Path
) -> None:
    """The typed sections write the keys ``dataset_stats.json`` has always had, in order."""
    stats = dataset_stats(
        kb, corpus=DEMO_CORPUS, sample=sample_dir, gold=sample_gold.path
    ).to_dict()
    described = ["n", "mean", "median", "min", "max", "p05", "p95"]
    assert list(stats["kb"]) == [
        "path", "sha256", "rows", "canonical", "converse", "converse_pairs", "symmetric",
        "needs_review", "equivalences",
    ]  # fmt: skip
    corpus = stats["corpus"]
    assert list(corpus) == [
        "path", "documents", "with_identifier", "identifiers", "chars", "years", "without_year",
    ]  # fmt: skip
    assert list(corpus["chars"]) == described
    assert list(corpus["years"]) == ["min", "max", "by_year"]
    sample = stats["sample"]
    assert list(sample) == [
        "path", "documents", "by_batch", "by_role", "by_stratum", "chars", "years",
        "mentions_per_document", "verb_mentions_per_document", "negative_controls",
        "labels_detected",
    ]  # fmt: skip
    assert list(sample["verb_mentions_per_document"]) == described
    gold = stats["gold"]
    assert list(gold) == [
        "path", "documents", "documents_without_hits", "hits", "hits_per_document", "chars",
        "relations", "distinct_relations", "directions", "sources", "verdicts", "anchoring",
        "anchored_share", "paraphrase_share", "folded_to_canonical", "ids_not_in_kb",
    ]  # fmt: skip
    assert list(gold["relations"][sample_gold.x]) == ["label", "hits"]
    plain = tmp_path / "docs.jsonl"
    plain.write_text('{"doc_id": "a", "text": "abcd"}\n')
    documents = dataset_stats(kb, sample=plain).to_dict()["sample"]
    assert documents == {
        "path": str(plain),
        "documents": 1,
        "chars": {"n": 1, **dict.fromkeys(described[1:], 4.0)},
    }
    assert describe([]).to_dict() == {"n": 0, **dict.fromkeys(described[1:])}


def test_cli_stats_of_a_plain_documents_file(tmp_path: Path, cli: Cli) -> None:
    """A documents JSONL has no manifest: the table shows its documents and nothing more."""
    plain = tmp_path / "docs.jsonl"
    plain.write_text('{"doc_id": "a", "text": "abcd"}\n')
    result = cli("stats", "--sample", plain, "--report-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "sample documents" in result.stdout and "negative controls" not in result.stdout
    assert json.loads((tmp_path / "dataset_stats.json").read_text())["sample"]["documents"] == 1
