"""``goldloop audit`` on a real sample of the demo corpus, and on the shipped example."""

from __future__ import annotations

import json
from pathlib import Path

from goldloop.kb import KB
from goldloop.sample import read_manifest
from goldloop.sample.audit import Eligibility, audit_sample
from tests.conftest import Cli
from tests.sample.conftest import Gold


def test_audit_with_gold_reports_gaps_coverage_and_writes_png(
    sample_dir: Path, sample_gold: Gold, kb: KB, tmp_path: Path
) -> None:
    docs = sample_gold.documents
    result = audit_sample(sample_dir, kb, gold=sample_gold.path, min_mentions=3, out_dir=tmp_path)
    r = result.report
    assert result.png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    written = json.loads(result.json_path.read_text())
    assert written["documents"] == len(docs) == 24
    assert list(written) == ["sample_dir", "documents", "batches", "eligibility",
                             "density_vs_length", "label_source", "label_concentration",
                             "coverage", "gold"]  # fmt: skip
    assert written == json.loads(json.dumps(r.to_dict()))
    assert written["eligibility"] == {"checked": 24, "failing": 0, "by_reason": {}}
    supply = r.coverage.pool_can_supply
    assert supply >= 2
    assert written["coverage"]["curve"] == [
        {"batch": 0, "documents": 12, "labels_reached": 1, "coverage": round(1 / supply, 4)},
        {"batch": 1, "documents": 24, "labels_reached": 2, "coverage": round(2 / supply, 4)},
    ]
    concentration = r.label_concentration
    assert concentration.mentions == 6 and concentration.distinct_labels == 2
    assert concentration.top1_share == 0.5 and concentration.herfindahl == 0.5
    gold = r.gold
    assert gold is not None
    with_hits = {d.doc_id for d in docs if d.ground_truth}
    assert set(gold.documents_without_hits) == {d.doc_id for d in docs} - with_hits
    controls = [row.doc_id for row in read_manifest(sample_dir) if row.n_verb_mentions == 0]
    assert gold.negative_controls == len(controls) > 0
    assert gold.negative_controls_without_hits == controls
    assert written["gold"]["gold_documents_not_in_sample"] == 0


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
    assert r.label_source == "detected"
    assert r.gold is None and "gold" not in r.to_dict()
    assert r.eligibility.failing == 1
    assert r.eligibility.to_dict()["by_reason"] == {
        "text_changed": {"count": 1, "doc_ids": [first["doc_id"]]},
        "too_short": {"count": 1, "doc_ids": [first["doc_id"]]},
    }


def test_cli_audit(sample_dir: Path, tmp_path: Path, cli: Cli) -> None:
    result = cli("audit", "--sample", sample_dir, "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "coverage" in result.stdout
    assert (tmp_path / "audit.png").stat().st_size > 1000


def test_audit_of_the_shipped_example_needs_no_parse(kb: KB, tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "data" / "sample"
    r = audit_sample(example, kb, out_dir=tmp_path).report
    assert r.documents == 15 and r.eligibility.failing == 0
    assert [p.documents for p in r.coverage.curve] == [10, 15]
    assert not (example / "audit.json").exists()


def test_the_audit_sections_keep_their_json_keys_in_order(
    sample_dir: Path, sample_gold: Gold, kb: KB, tmp_path: Path
) -> None:
    """The typed sections write the keys ``audit.json`` has always had, in that order."""
    report = audit_sample(sample_dir, kb, gold=sample_gold.path, out_dir=tmp_path).report
    written = report.to_dict()
    assert list(written["eligibility"]) == ["checked", "failing", "by_reason"]
    assert list(written["density_vs_length"]) == ["sample", "pool"]
    assert list(written["density_vs_length"]["pool"]) == [
        "n", "pearson_r", "spearman_rho", "verb_mentions_per_1000_chars",
    ]  # fmt: skip
    assert list(written["label_concentration"]) == [
        "mentions", "distinct_labels", "top", "top1_share", "top5_share", "herfindahl",
        "normalized_entropy",
    ]  # fmt: skip
    assert list(written["label_concentration"]["top"][0]) == [
        "entity_id", "label", "mentions", "share",
    ]  # fmt: skip
    assert list(written["coverage"]) == ["min_mentions", "pool_can_supply", "curve"]
    assert list(written["coverage"]["curve"][0]) == [
        "batch", "documents", "labels_reached", "coverage",
    ]  # fmt: skip
    assert list(written["gold"]) == [
        "path", "gold_documents", "sample_documents_in_gold", "gold_documents_not_in_sample",
        "documents_without_hits", "negative_controls", "negative_controls_without_hits",
        "negative_controls_with_hits",
    ]  # fmt: skip
    changed = Eligibility(3, {"too_short": ["b", "c"], "text_changed": ["c"]}).to_dict()
    assert changed == {
        "checked": 3,
        "failing": 2,
        "by_reason": {
            "too_short": {"count": 2, "doc_ids": ["b", "c"]},
            "text_changed": {"count": 1, "doc_ids": ["c"]},
        },
    }
