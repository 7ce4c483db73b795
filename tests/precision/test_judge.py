"""The judge when the provider fails some requests: real SDK, fake provider, the CLI's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.documents import read_documents
from goldloop.kb import KB
from goldloop.precision.judge import FAILED, judge_mentions
from goldloop.precision.mentions import read_verdicts, system_mentions
from goldloop.scoring.inputs import read_predictions
from tests.agreement.test_precision import study
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply, llm_server

__all__ = ["llm_server", "study"]  # the judge's study: three mentions, one abstained row


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
    report = run.report()
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
