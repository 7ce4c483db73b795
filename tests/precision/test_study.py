"""The precision study: the sample to label (seeded, by relation, from verdicts in the README's
own format) and the PPI report (the seed's worked example end to end)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from goldloop.formats.gold import Document
from goldloop.precision.mentions import JudgedMention, Label, read_labels, read_verdicts
from goldloop.precision.study import (
    LabelStudioLabels,
    corpus_precision,
    draw_sample,
    precision_report,
)
from goldloop.scoring.design import read_design
from goldloop.settings import BUNDLED_KB
from goldloop.studio.precision_project import claim
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


def test_hand_written_verdicts_show_labellers_the_kbs_label(tmp_path: Path, cli: Cli) -> None:
    """A verdict row without ``label`` reads the relation's label from the KB (--kb), not its id."""
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"doc_id": "pmid:1", "text": TEXT}) + "\n")
    verdicts = tmp_path / "verdicts.jsonl"
    row = {"doc_id": "pmid:1", "a": 19, "b": 33, "entity_id": "PEL.000025", "verdict": "supported"}
    verdicts.write_text(json.dumps(row) + "\n")
    with BUNDLED_KB.open(newline="", encoding="utf-8") as handle:  # the reference: the CSV itself
        bundled = {r["entity_id"]: r["label"] for r in csv.DictReader(handle)}
    mine = tmp_path / "mine" / "kb.csv"
    mine.parent.mkdir()
    header = BUNDLED_KB.read_text(encoding="utf-8").splitlines()[0]
    mine.write_text(f"{header}\nPEL.000025,adds phosphate to,,,,,False,False,True,PEL.000025,\n")
    for kb_args, label in (([], bundled["PEL.000025"]), (["--kb", mine], "adds phosphate to")):
        out = tmp_path / f"to_label{len(kb_args)}.jsonl"
        result = cli("precision", "sample", "--verdicts", verdicts, "--documents", documents,
                     "-o", out, "--n", 1, *kb_args)  # fmt: skip
        assert result.returncode == 0, result.stderr
        (drawn,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert drawn["relation"] == label != "PEL.000025"
        assert claim(drawn) == f"Does ⟦phosphorylates⟧ state “{label}”?"


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


def test_worked_example_from_files(
    worked_example: tuple[Path, Path], tmp_path: Path, cli: Cli
) -> None:
    verdicts, labels = worked_example
    report = precision_report(read_verdicts(verdicts), read_labels(labels))
    assert report.judge.value == 0.85
    corrected = report.corrected
    assert corrected.low is not None and corrected.high is not None
    assert (round(corrected.value, 3), round(corrected.low, 3), round(corrected.high, 3)) == (
        0.783,
        0.714,
        0.853,
    )
    assert (report.false_support, report.lost_support, report.n_labelled) == (12, 4, 120)
    assert (report.unknown_keys, report.unlabelled, report.repeated) == (1, 1, 2)
    assert report.calibrated

    result = cli(
        "precision", "report", "--verdicts", verdicts, "--labels", labels, "-o", tmp_path / "p.json"
    )
    assert result.returncode == 0, result.stderr
    assert "0.783 [0.714, 0.853]" in result.out
    assert "0.750 [0.666, 0.819]" in result.out
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["judge"] == {"value": 0.85, "low": None, "high": None}
    assert data["judge_on_sample"] == {"false_support": 12, "lost_support": 4}


def test_sample_is_seeded_and_uniform() -> None:
    mentions = [
        JudgedMention("d", k, k + 1, "X", "x", "x").judged("supported") for k in range(0, 2000, 2)
    ]
    first = draw_sample(mentions, 150, seed=4)
    assert first == draw_sample(list(reversed(mentions)), 150, seed=4)
    assert first != draw_sample(mentions, 150, seed=5)
    assert len({m.key for m in first}) == 150
    assert len(draw_sample(mentions[:10], 150)) == 10


def test_sample_by_relation_gives_each_relation_its_share() -> None:
    relations = ["A"] * 600 + ["B"] * 300 + ["C"] * 95 + ["D"] * 5
    mentions = [
        JudgedMention("d", k, k + 1, rel, "x", rel).judged("supported")
        for k, rel in enumerate(relations)
    ]
    drawn = draw_sample(mentions, 150, seed=1, by_relation=True)
    counts = Counter(m.entity_id for m in drawn)
    # Quotas 90, 45, 14.25, 0.75: the largest remainder goes to D.
    assert counts == {"A": 90, "B": 45, "C": 14, "D": 1}
    assert len({m.key for m in drawn}) == 150
    assert drawn == draw_sample(mentions, 150, seed=1, by_relation=True)


def test_corpus_precision_by_hand_from_weighted_mentions() -> None:
    def mention(doc: str, k: int, verdict: str) -> JudgedMention:
        return JudgedMention(doc, 10 * k, 10 * k + 5, "PEL.000018", "x", "inhibits").judged(verdict)

    d1 = [mention("d1", k, v) for k, v in enumerate(("supported", "supported", "not_found"))]
    d2 = [mention("d2", k, v) for k, v in enumerate(("supported", "contradicted"))]
    labels = [
        Label(d1[0].key, "supported"),  # f 1, y 1
        Label(d1[2].key, "supported"),  # f 0, y 1: lost by the judge
        Label(d2[0].key, "contradicted"),  # f 1, y 0: false support
    ]
    report = precision_report(d1 + d2, labels)
    documents = [
        Document(doc_id="d1", text="x" * 40, p_incl=0.5, stratum="s", batch=0),  # weight 2
        Document(doc_id="d2", text="x" * 40, p_incl=0.25, stratum="s", batch=0),  # weight 4
    ]
    design = read_design(documents)
    assert design is not None
    corpus = corpus_precision(d1 + d2, report, documents, design, bootstrap=0, seed=0)
    judge = (2 * 2 + 4 * 1) / (2 * 3 + 4 * 2)  # 8 / 14
    gap = (2 * 0 + 2 * 1 + 4 * -1) / (2 + 2 + 4)  # -2 / 8
    assert corpus.values["judge"] == pytest.approx(judge)
    assert corpus.values["corrected"] == pytest.approx(judge + gap)
    assert corpus.values["labels"] == pytest.approx((2 + 2 + 0) / 8)
    assert corpus.population_docs == 6.0


def test_corpus_precision_with_equal_weights_is_the_ppi_estimate(
    worked_example: tuple[Path, Path], tmp_path: Path, cli: Cli
) -> None:
    verdicts, labels = worked_example
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"doc_id": "d", "text": "x" * 10_000, "p_incl": 0.5}) + "\n")
    out = tmp_path / "p.json"
    done = cli("precision", "report", "--verdicts", verdicts, "--labels", labels, "-o", out,
               "--documents", documents, "--bootstrap", "100")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["corpus"]["corrected"] == pytest.approx(data["corrected"]["value"])  # 0.783
    assert data["corpus"]["judge"] == pytest.approx(0.85)
    assert data["corpus"]["labels"] == pytest.approx(data["labels"]["value"])
    assert data["corpus"]["population_docs"] == 2.0
    assert "corpus (1 documents standing for 2): corrected 0.783" in done.out
    plain = cli("precision", "report", "--verdicts", verdicts, "--labels", labels, "-o", out)
    assert plain.returncode == 0 and json.loads(out.read_text())["corpus"] is None
    assert "no corpus figures: --documents gives the mentions' p_incl" in plain.err


def test_the_report_keeps_its_json_keys_in_order() -> None:
    """The typed report writes the keys the precision file has always had: ``corpus`` always
    (null without a design), ``label_studio`` only for labels pulled from Label Studio."""
    judged = [JudgedMention("d", 0, 4, "X", "x", "x").judged("supported")]
    report = precision_report(judged, [Label(judged[0].key, "supported")])
    keys = [
        "n_judged", "n_labelled", "judge", "corrected", "labels", "calibrated", "judge_on_sample",
        "verdicts", "human_labels", "left_out", "corpus",
    ]  # fmt: skip
    assert list(report.to_dict()) == keys and report.to_dict()["corpus"] is None
    report.label_studio = LabelStudioLabels("p", 3, 2, 1, 0, 1)
    assert list(report.to_dict()) == [*keys, "label_studio"]
    assert list(report.to_dict()["label_studio"]) == [
        "project", "tasks", "labelled", "unlabelled", "cancelled_annotations", "extra_annotations",
    ]  # fmt: skip
