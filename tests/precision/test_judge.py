"""The judge when the provider fails some requests: real SDK, fake provider, the CLI's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.documents import load_documents
from goldloop.kb import KB, load_kb
from goldloop.precision.judge import FAILED, judge_mentions
from goldloop.precision.mentions import read_verdicts, system_mentions
from goldloop.scoring.inputs import read_predictions
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply, llm_server
from tests.llm.test_cli import run_cli

__all__ = ["llm_server"]

TEXT = "IL-6 regulates TNF. A inhibits B. C is activated by D."
ROWS = [
    {"doc_id": "pmid:1", "a": 5, "b": 14, "entity_id_predicted": "RO.0002211"},
    {"doc_id": "pmid:1", "a": 22, "b": 30, "entity_id_predicted": "PEL.000018"},
    {"doc_id": "pmid:1", "a": 39, "b": 51, "entity_id_predicted": "PEL.000000"},
]


@pytest.fixture(scope="module")
def kb() -> KB:
    return load_kb()


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, Path]:
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"doc_id": "pmid:1", "text": TEXT}) + "\n")
    system = tmp_path / "system.jsonl"
    system.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return system, documents


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
    docs = load_documents(documents)
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
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GOLDLOOP_CACHE", str(tmp_path / "cache.sqlite"))
    system, documents = study
    verdicts = tmp_path / "verdicts.jsonl"
    args = [
        "precision", "judge", "--system", system, "--documents", documents, "--provider",
        "openai", "--model", "j", "--base-url", llm_server.base_url("openai"), "-o", verdicts, "--attempts", "2",
    ]  # fmt: skip
    llm_server.fail(500, times=100)
    code, err = run_cli(monkeypatch, capsys, *args)
    assert code == 4 and "every request failed, nothing written" in err
    assert not verdicts.exists()

    llm_server.reset()
    llm_server.answer = inhibits_fails
    code, err = run_cli(monkeypatch, capsys, *args)
    assert code == 3 and "1 of 3 mentions failed" in err and "a re-run asks only for those" in err
    assert [m.verdict for m in read_verdicts(verdicts)] == ["supported", "unchecked", "supported"]
    report = json.loads(verdicts.with_name("verdicts.jsonl.report.json").read_text())
    assert [f["key"] for f in report["failed"]] == ["pmid:1|22-30|PEL.000018"]

    llm_server.reset()
    llm_server.answer = lambda request: '{"verdict": "not_found", "reason": "none"}'
    assert run_cli(monkeypatch, capsys, *args)[0] == 0
    assert llm_server.request_count == 1  # the two answered mentions came from the cache
    assert [m.verdict for m in read_verdicts(verdicts)] == ["supported", "not_found", "supported"]
