"""Dataset statistics (``goldloop stats``) on a real sample of the demo corpus."""

from __future__ import annotations

import json
from pathlib import Path

from goldloop.kb import KB
from goldloop.sample.stats import dataset_stats
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
