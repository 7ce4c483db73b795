"""``goldloop precision``: the LLM judge through a real SDK and the fake provider, the sample to
label, and the PPI report from files (the seed's worked example end to end)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from goldloop.documents import read_documents
from goldloop.kb import KB
from goldloop.llm import SQLiteCache
from goldloop.precision.judge import judge_mentions, judge_request, parse_verdict
from goldloop.precision.mentions import (
    JudgedMention,
    PrecisionError,
    read_labels,
    read_verdicts,
    system_mentions,
    write_verdicts,
)
from goldloop.precision.study import draw_sample, precision_report
from goldloop.scoring.inputs import read_predictions
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply, llm_server

__all__ = ["llm_server"]

TEXT = "IL-6 regulates TNF. A inhibits B. C is activated by D."


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, Path]:
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"doc_id": "pmid:1", "text": TEXT}) + "\n")
    system = tmp_path / "system.jsonl"
    rows = [
        {
            "doc_id": "pmid:1",
            "a": 5,
            "b": 14,
            "entity_id_predicted": "RO.0002211",
            "direction_predicted": "forward",
        },
        {
            "doc_id": "pmid:1",
            "a": 22,
            "b": 30,
            "entity_id_predicted": "PEL.000018",
            "direction_predicted": "forward",
        },
        # "activated by" named by its converse id: judged as "activates", direction flipped.
        {
            "doc_id": "pmid:1",
            "a": 39,
            "b": 51,
            "entity_id_predicted": "PEL.000000",
            "direction_predicted": "inverse",
        },
        {"doc_id": "pmid:1", "a": 0, "b": 4, "entity_id_predicted": None},
    ]
    system.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return system, documents


def scripted(request: FakeRequest) -> Reply | str:
    if "⟦regulates⟧" in request.user:
        return '{"verdict": "supported", "reason": "stated"}'
    if "⟦inhibits⟧" in request.user:
        return '{"verdict": "contradicted", "reason": "wrong relation"}'
    return Reply('{"verdict": "supported", "reason": "' + "x" * 4000 + '"}')  # cut off


@pytest.mark.parametrize("provider_name", ["openai", "anthropic", "gemini"])
def test_judge_through_each_provider(
    llm_server: FakeLLMServer, study: tuple[Path, Path], kb: KB, tmp_path: Path, provider_name: str
) -> None:
    system, documents = study
    llm_server.answer = scripted
    docs = read_documents(documents)
    texts = {doc.doc_id: doc for doc in docs}
    mentions, abstained = system_mentions(read_predictions(system, docs), docs, kb)
    assert abstained == 1
    provider = llm_server.provider(
        provider_name, "judge-model", cache=SQLiteCache(tmp_path / "c.sqlite")
    )
    result = judge_mentions(mentions, texts, kb, provider)
    assert [m.verdict for m in result.mentions] == ["supported", "contradicted", "unchecked"]
    assert result.unchecked_reasons == {"truncated": 1}
    assert llm_server.request_count == 3
    asked = next(r.user for r in llm_server.requests if "⟦regulates⟧" in r.user)
    assert "Direction: in the label's own order" in asked
    # Re-running costs nothing but the truncated answer, which was never cached.
    again = judge_mentions(mentions, texts, kb, provider)
    assert again.cached == 2 and llm_server.request_count == 4


def test_judge_request_marks_the_mention_and_states_the_claim(
    study: tuple[Path, Path], kb: KB
) -> None:
    system, documents = study
    docs = read_documents(documents)
    mentions, _ = system_mentions(read_predictions(system, docs), docs, kb)
    converse = mentions[2]
    assert (converse.entity_id, converse.direction, converse.label) == (
        "PEL.000000",
        "inverse",
        "activates",
    )
    request = judge_request(converse, TEXT, kb)
    assert "C is ⟦activated by⟧ D." in request.user
    assert 'Relation: "activates"' in request.user
    assert "as the converse" in request.user
    assert request.schema["properties"]["verdict"]["enum"] == [
        "supported",
        "contradicted",
        "not_found",
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"verdict": "not_found", "reason": "no relation"}', ("not_found", "no relation")),
        ('```json\n{"verdict": "supported", "reason": "ok"}```', ("supported", "ok")),
        ('{"verdict": "maybe"}', ("unchecked", "unknown verdict 'maybe'")),
        ("I think so", ("unchecked", "unparsable")),
    ],
)
def test_parse_verdict(answer: str, expected: tuple[str, str]) -> None:
    assert parse_verdict(answer) == expected


def test_judge_sample_report_cli(
    llm_server: FakeLLMServer,
    study: tuple[Path, Path],
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path))
    system, documents = study
    llm_server.answer = scripted
    verdicts = tmp_path / "verdicts.jsonl"
    judged = cli(
        "precision", "judge", "--system", system, "--documents", documents, "--provider", "openai",
        "--model", "judge-model", "--base-url", llm_server.base_url("openai"), "-o", verdicts,
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    assert [m.verdict for m in read_verdicts(verdicts)] == [
        "supported",
        "contradicted",
        "unchecked",
    ]
    sidecar = json.loads((tmp_path / "verdicts.jsonl.report.json").read_text())
    assert sidecar["abstained_rows"] == 1 and sidecar["unchecked_reasons"] == {"truncated": 1}
    assert "test-key" not in (tmp_path / "verdicts.jsonl.report.json").read_text()

    to_label = tmp_path / "to-label.jsonl"
    drawn = cli(
        "precision",
        "sample",
        "--verdicts",
        verdicts,
        "--documents",
        documents,
        "--n",
        2,
        "-o",
        to_label,
    )
    assert drawn.returncode == 0, drawn.stderr
    rows = [json.loads(line) for line in to_label.read_text().splitlines()]
    assert len(rows) == 2 and all(r["label"] is None and "verdict" not in r for r in rows)
    assert all("⟦" in r["passage"] for r in rows)
    for row in rows:
        row["label"] = "supported"
    to_label.write_text("".join(json.dumps(r) + "\n" for r in rows))
    reported = cli(
        "precision",
        "report",
        "--verdicts",
        verdicts,
        "--labels",
        to_label,
        "-o",
        tmp_path / "p.json",
    )
    assert reported.returncode == 0, reported.stderr
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["n_judged"] == 3 and report["n_labelled"] == 2
    assert report["calibrated"] is False
    assert "uncalibrated" in reported.out


def worked_example_files(tmp_path: Path) -> tuple[Path, Path]:
    """The seed's example as files: 1,000 judged mentions, 120 labelled."""
    mentions = [
        JudgedMention(
            "d", 10 * k, 10 * k + 5, "PEL.000018", "inhibits", "inhibits", "forward"
        ).judged("supported" if k < 850 else ("not_found" if k % 2 else "contradicted"))
        for k in range(1000)
    ]
    verdicts = tmp_path / "verdicts.jsonl"
    write_verdicts(verdicts, mentions)
    # Labelled: 86 judged-and-true, 12 judged-but-false, 4 lost by the judge, 18 both false.
    chosen = (
        [(m, "supported") for m in mentions[:86]]
        + [(m, "contradicted") for m in mentions[86:98]]
        + [(m, "supported") for m in mentions[850:854]]
        + [(m, "not_found") for m in mentions[854:872]]
    )
    rows = [{"key": m.key, "label": label} for m, label in chosen]
    rows += [
        {"key": "d|1-2|PEL.000018", "label": "supported"},  # names no judged mention
        {"key": mentions[900].key, "label": None},  # unlabelled
        {"key": mentions[901].key, "label": "supported"},  # repeated: both copies left out
        {"key": mentions[901].key, "label": "contradicted"},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return verdicts, labels


def test_worked_example_from_files(tmp_path: Path, cli: Cli) -> None:
    verdicts, labels = worked_example_files(tmp_path)
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


def test_bad_files_exit_2_naming_the_line(tmp_path: Path, cli: Cli) -> None:
    verdicts, labels = worked_example_files(tmp_path)
    lines = verdicts.read_text().splitlines()
    lines[4] = lines[4].replace('"supported"', '"yes"')
    verdicts.write_text("\n".join(lines) + "\n")
    result = cli(
        "precision", "report", "--verdicts", verdicts, "--labels", labels, "-o", tmp_path / "p.json"
    )
    assert result.returncode == 2
    assert "verdicts.jsonl: line 5" in result.err
    assert not (tmp_path / "p.json").exists()
    with pytest.raises(PrecisionError, match="line 1: label must be one of"):
        labels.write_text('{"key": "x", "label": "true"}\n')
        read_labels(labels)


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
