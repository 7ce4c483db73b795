"""The LLM judge through each real SDK and the fake provider: its request, its verdicts, failed
requests, and ``goldloop precision judge`` (then ``sample`` and ``report`` on its verdicts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.formats.documents import read_documents
from goldloop.kb import KB
from goldloop.llm import SQLiteCache
from goldloop.llm.answer import FAILED
from goldloop.llm.tasks.judge import JudgeTask
from goldloop.precision.llm_judge import claim_of, judge_mentions
from goldloop.precision.mentions import read_verdicts, system_mentions
from goldloop.scoring.inputs import read_predictions
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply


def inhibits_fails(request: FakeRequest) -> Reply:
    """HTTP 500 for the mention "inhibits", every time; a verdict for the others."""
    if "⟦inhibits⟧" in request.user:
        return Reply("overloaded", status=500)
    return Reply('{"verdict": "supported", "reason": "stated"}')


def test_a_failed_request_leaves_its_mention_unchecked_and_the_run_finishes(
    llm_server: FakeLLMServer, study: tuple[Path, Path], kb: KB
) -> None:
    system, documents = study
    llm_server.answer = inhibits_fails
    docs = read_documents(documents)
    mentions, _ = system_mentions(read_predictions(system, docs), docs, kb)
    run = judge_mentions(
        mentions, {d.doc_id: d for d in docs}, kb, llm_server.provider("anthropic", "j", cache=None)
    )
    assert [(m.verdict, m.reason) for m in run.mentions] == [
        ("supported", "stated"),
        ("unchecked", FAILED),
        ("supported", "stated"),
    ]
    report = run.to_dict()
    assert report["unchecked_reasons"] == {FAILED: 1}
    assert [f["key"] for f in report["failed"]] == ["pmid:1|22-30|PEL.000018"]
    assert "HTTP 500" in report["failed"][0]["error"]


def test_judge_command_exits_3_with_the_rest_and_a_rerun_asks_only_for_the_failed(
    llm_server: FakeLLMServer,
    study: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Cli,
) -> None:
    monkeypatch.setenv("GOLDLOOP_CACHE", str(tmp_path / "cache.sqlite"))
    system, documents = study
    verdicts = tmp_path / "verdicts.jsonl"
    args = [
        "precision", "judge", "--system", system, "--documents", documents, "--provider",
        "openai", "--model", "j", "--base-url", llm_server.base_url("openai"), "-o", verdicts, "--attempts", "2",
    ]  # fmt: skip
    llm_server.fail(500, times=100)
    failed = cli(*args)
    assert failed.returncode == 4 and "every request failed, nothing written" in failed.err
    assert not verdicts.exists()

    llm_server.reset()
    llm_server.answer = inhibits_fails
    partial = cli(*args)
    assert partial.returncode == 3 and "1 of 3 mentions failed" in partial.err
    assert "a re-run asks only for those" in partial.err
    assert [m.verdict for m in read_verdicts(verdicts)] == ["supported", "unchecked", "supported"]
    report = json.loads(verdicts.with_name("verdicts.jsonl.report.json").read_text())
    assert [f["key"] for f in report["failed"]] == ["pmid:1|22-30|PEL.000018"]

    llm_server.reset()
    llm_server.answer = lambda request: '{"verdict": "not_found", "reason": "none"}'
    assert cli(*args).returncode == 0
    assert llm_server.request_count == 1  # the two answered mentions came from the cache
    assert [m.verdict for m in read_verdicts(verdicts)] == ["supported", "not_found", "supported"]


def test_judge_never_writes_over_its_input(
    llm_server: FakeLLMServer, study: tuple[Path, Path], cli: Cli
) -> None:
    system, documents = study
    before = system.read_bytes()
    result = cli(
        "precision", "judge", "--system", system, "--documents", documents, "--provider",
        "openai", "--base-url", llm_server.base_url("openai"), "-o", system,
    )  # fmt: skip
    err = result.err
    assert result.returncode == 2 and "--out" in err and "--system" in err and "same file" in err
    assert system.read_bytes() == before and llm_server.request_count == 0


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


def test_an_unparsable_verdict_is_not_cached_and_a_rerun_asks_again(
    llm_server: FakeLLMServer, study: tuple[Path, Path], kb: KB, tmp_path: Path
) -> None:
    system, documents = study
    docs = read_documents(documents)
    texts = {doc.doc_id: doc for doc in docs}
    mentions, _ = system_mentions(read_predictions(system, docs), docs, kb)
    provider = llm_server.provider("openai", "judge-model", cache=SQLiteCache(tmp_path / "c.db"))

    def first(request: FakeRequest) -> str:
        if "⟦inhibits⟧" in request.user:
            return "I think it does."  # not JSON
        return '```json\n{"verdict": "supported", "reason": "stated"}\n```'

    llm_server.answer = first
    run = judge_mentions(mentions, texts, kb, provider)
    assert [(m.verdict, m.reason) for m in run.mentions] == [
        ("supported", "stated"),
        ("unchecked", "unparsable"),
        ("supported", "stated"),
    ]
    assert run.to_dict()["unchecked_reasons"] == {"unparsable": 1}
    assert llm_server.request_count == 3

    llm_server.answer = lambda request: '{"verdict": "contradicted", "reason": "reversed"}'
    again = judge_mentions(mentions, texts, kb, provider)
    assert llm_server.request_count == 4  # only the unparsable answer is asked for again
    assert again.cached == 2 and again.unchecked_reasons == {}
    assert [m.verdict for m in again.mentions] == ["supported", "contradicted", "supported"]
    assert judge_mentions(mentions, texts, kb, provider).cached == 3
    assert llm_server.request_count == 4


def test_the_claim_of_a_mention_marks_it_and_states_its_relation(
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
    request = JudgeTask().request(claim_of(converse, docs[0].text, kb))
    assert "C is ⟦activated by⟧ D." in request.user
    assert 'Relation: "activates"' in request.user
    assert "as the converse" in request.user
    assert request.schema["properties"]["verdict"]["enum"] == [
        "supported",
        "contradicted",
        "not_found",
    ]


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
