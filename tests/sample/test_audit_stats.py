"""``goldloop audit`` and ``goldloop stats`` on a real sample of the demo corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import Cli

from goldloop.gold import Document, Hit, write_gold
from goldloop.kb import KB
from goldloop.sample import read_documents, read_manifest
from goldloop.sample.audit import audit_sample
from goldloop.sample.run import SampleSettings, run_sample
from goldloop.settings import DEMO_CORPUS
from goldloop.stats import dataset_stats

SETTINGS = SampleSettings(n_primary=8, n_double=2, n_reserve=2, tail_top_k=10, seed=5)


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory, kb: KB) -> Path:
    directory = tmp_path_factory.mktemp("sample")
    run_sample(DEMO_CORPUS, directory, kb, SETTINGS)
    run_sample(DEMO_CORPUS, directory, kb, SETTINGS, extend=True)
    return directory


def _hit(doc: Document, word: str, entity_id: str, anchored: bool) -> Hit:
    a = doc.text.index(word)
    return Hit(a=a, b=a + len(word), surface=word, entity_id=entity_id, direction="forward",
               source="human", surface_anchored=anchored)  # fmt: skip


def _gold(sample_dir: Path, kb: KB, path: Path) -> tuple[list[Document], str, str]:
    """Gold for the sample: label X gets 3 hits in batch 0, label Y 2 in batch 0 and 1 in batch 1;
    the first document of each batch and one negative control get none."""
    x, y = kb.lookup("reduces"), kb.lookup("activates")
    assert x is not None and y is not None
    docs = read_documents(sample_dir)
    batch0 = [d for d in docs if d.batch == 0 and d.stratum and not d.stratum.endswith("-none")]
    batch1 = [d for d in docs if d.batch == 1 and d.stratum and not d.stratum.endswith("-none")]
    for doc in batch0[1:4]:
        doc.ground_truth = [_hit(doc, doc.text[:4], x.entity_id, True)]
    for doc in batch0[4:6] + batch1[1:2]:
        doc.ground_truth = [_hit(doc, doc.text[:4], y.entity_id, False)]
    write_gold(path, docs)
    return docs, x.entity_id, y.entity_id


def test_audit_with_gold_reports_gaps_coverage_and_writes_png(
    sample_dir: Path, kb: KB, tmp_path: Path
) -> None:
    docs, _, _ = _gold(sample_dir, kb, tmp_path / "gold.json")
    result = audit_sample(
        sample_dir, kb, gold=tmp_path / "gold.json", min_mentions=3, out_dir=tmp_path
    )
    r = result.report
    assert result.png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(result.json_path.read_text())["documents"] == len(docs) == 24
    assert r["eligibility"] == {"checked": 24, "failing": 0, "by_reason": {}}
    supply = r["coverage"]["pool_can_supply"]
    assert supply >= 2
    assert r["coverage"]["curve"] == [
        {"batch": 0, "documents": 12, "labels_reached": 1, "coverage": round(1 / supply, 4)},
        {"batch": 1, "documents": 24, "labels_reached": 2, "coverage": round(2 / supply, 4)},
    ]
    concentration = r["label_concentration"]
    assert concentration["mentions"] == 6 and concentration["distinct_labels"] == 2
    assert concentration["top1_share"] == 0.5 and concentration["herfindahl"] == 0.5
    gold = r["gold"]
    with_hits = {d.doc_id for d in docs if d.ground_truth}
    assert set(gold["documents_without_hits"]) == {d.doc_id for d in docs} - with_hits
    controls = [row.doc_id for row in read_manifest(sample_dir) if row.n_verb_mentions == 0]
    assert gold["negative_controls"] == len(controls) > 0
    assert gold["negative_controls_without_hits"] == controls


def test_audit_flags_a_changed_text(sample_dir: Path, kb: KB, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in (
        "manifest.csv",
        "pool_mentions.csv.gz",
        "sampling_report.batch0.json",
        "sampling_report.batch1.json",
    ):
        (copy / name).write_bytes((sample_dir / name).read_bytes())
    lines = (sample_dir / "texts.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({"doc_id": first["doc_id"], "text": "Now a short text."})
    (copy / "texts.jsonl").write_text("\n".join(lines) + "\n")
    r = audit_sample(copy, kb).report
    assert r["label_source"] == "detected"
    assert r["eligibility"]["failing"] == 1
    assert r["eligibility"]["by_reason"] == {
        "text_changed": {"count": 1, "doc_ids": [first["doc_id"]]},
        "too_short": {"count": 1, "doc_ids": [first["doc_id"]]},
    }


def test_stats_sections(sample_dir: Path, kb: KB, tmp_path: Path) -> None:
    _, x, _ = _gold(sample_dir, kb, tmp_path / "gold.json")
    only_kb = dataset_stats(kb)
    assert set(only_kb) == {"kb"} and only_kb["kb"]["rows"] == len(kb)
    stats = dataset_stats(kb, corpus=DEMO_CORPUS, sample=sample_dir, gold=tmp_path / "gold.json")
    corpus = stats["corpus"]
    assert (corpus["documents"], corpus["with_identifier"], corpus["without_year"]) == (31, 30, 0)
    assert (corpus["years"]["min"], corpus["years"]["max"]) == (1984, 2023)
    sample = stats["sample"]
    assert sample["documents"] == 24 and sample["by_batch"] == {"0": 12, "1": 12}
    assert sample["by_role"] == {"double": 4, "primary": 16, "reserve": 4}
    plain = tmp_path / "docs.jsonl"
    plain.write_text('{"doc_id": "a", "text": "abcd"}\n{"doc_id": "b", "text": "ab"}\n')
    assert dataset_stats(kb, sample=plain)["sample"]["chars"]["mean"] == 3.0
    gold = stats["gold"]
    assert (gold["documents"], gold["hits"], gold["distinct_relations"]) == (24, 6, 2)
    assert gold["relations"][x] == {"label": "reduces", "hits": 3}
    assert gold["anchored_share"] == 0.5 and gold["anchoring"] == {"anchored": 3, "paraphrase": 3}
    assert gold["directions"] == {"forward": 6}
    assert gold["documents_without_hits"] == 18


def test_cli_audit_and_stats(sample_dir: Path, tmp_path: Path, cli: Cli) -> None:
    out = ""
    for args in (
        ["audit", "--sample", sample_dir, "--out", tmp_path],
        ["stats", "--sample", sample_dir, "--report-dir", tmp_path],
    ):
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        out += result.stdout
    assert "coverage" in out and "dataset statistics" in out
    assert (tmp_path / "audit.png").stat().st_size > 1000
    assert json.loads((tmp_path / "dataset_stats.json").read_text())["sample"]["documents"] == 24


def test_audit_of_the_shipped_example_needs_no_parse(kb: KB, tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "data" / "sample"
    r = audit_sample(example, kb, out_dir=tmp_path).report
    assert r["documents"] == 15 and r["eligibility"]["failing"] == 0
    assert [p["documents"] for p in r["coverage"]["curve"]] == [10, 15]
    assert not (example / "audit.json").exists()
