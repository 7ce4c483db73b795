"""The llm linking baseline through the real provider SDKs and the fake provider server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.baselines import linking_request, run_baselines
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply

# What the scripted linker answers for each marked surface of the conftest gold.
ANSWERS = {
    "directly regulates": "directly regulated by",  # a converse label: folds onto RO.0002578
    "binds to": "NONE",
    "activates": "activates",
    "associates with": "frobnicates",  # not a KB label
}


def scripted(request: FakeRequest) -> str:
    surface = re.search(r"Which relation does \[\[(.+?)\]\] express\?", request.user)
    assert surface is not None and request.schema is not None
    return json.dumps({"label": ANSWERS[surface.group(1)]})


@pytest.mark.parametrize("provider", ["openai"])  # every provider is tested in tests/llm
def test_llm_baseline_is_linking_only_and_cached(
    provider: str, llm_server: FakeLLMServer, gold_file: Path, kb: KB, tmp_path: Path
) -> None:
    llm_server.answer = scripted
    linker = llm_server.provider(provider, "judge-model", cache=tmp_path / "cache.sqlite")
    documents = read_gold(gold_file, kb).documents
    (result,) = run_baselines(documents, ["llm"], kb, provider=linker)
    assert result["regime"] == "linking-only"
    linking = result["linking"]
    assert (linking["n_gold"], linking["n_answered"], linking["n_correct"]) == (4, 2, 2)
    assert (linking["accuracy_overall"], linking["accuracy_on_predicted"], linking["coverage"]) == (
        0.5,
        1.0,
        0.5,
    )
    assert result["baseline"]["outcomes"] == {
        "called": 4,
        "answered": 2,
        "none": 1,
        "unknown_label": 1,
    }
    assert llm_server.request_count == 4
    again = run_baselines(documents, ["llm"], kb, provider=linker)[0]
    assert again["baseline"]["outcomes"]["cached"] == 4 and llm_server.request_count == 4
    assert again["linking"] == linking


def test_an_unparsable_answer_is_not_cached_and_a_rerun_asks_again(
    llm_server: FakeLLMServer, gold_file: Path, kb: KB, tmp_path: Path
) -> None:
    unreadable = {"binds to": "NONE, I think", "activates": '{"choice": "activates"}'}

    def first(request: FakeRequest) -> str:
        surface = re.search(r"\[\[(.+?)\]\] express\?", request.user)
        assert surface is not None
        if surface.group(1) in unreadable:
            return unreadable[surface.group(1)]  # not JSON; JSON without a label
        return "```json\n" + scripted(request) + "\n```"

    llm_server.answer = first
    linker = llm_server.provider("openai", "judge-model", cache=tmp_path / "cache.sqlite")
    documents = read_gold(gold_file, kb).documents
    (result,) = run_baselines(documents, ["llm"], kb, provider=linker)
    assert result["baseline"]["outcomes"] == {
        "called": 4,
        "answered": 1,
        "unknown_label": 1,
        "unparsable": 2,
    }
    assert llm_server.request_count == 4

    llm_server.answer = scripted
    (again,) = run_baselines(documents, ["llm"], kb, provider=linker)
    assert llm_server.request_count == 6  # only the two unparsable answers are asked again
    assert again["baseline"]["outcomes"] == {
        "cached": 2,
        "called": 2,
        "answered": 2,
        "none": 1,
        "unknown_label": 1,
    }
    (third,) = run_baselines(documents, ["llm"], kb, provider=linker)
    assert third["baseline"]["outcomes"]["cached"] == 4 and llm_server.request_count == 6


def test_linking_request_marks_the_span_and_constrains_the_answer(kb: KB) -> None:
    labels = [r.label for r in kb]
    _, user, schema = linking_request("A inhibits B.", 2, 10, labels)
    assert "A [[inhibits]] B." in user
    assert schema["properties"]["label"]["enum"][-1] == "NONE"
    assert len(schema["properties"]["label"]["enum"]) == len(kb) + 1


def test_baselines_command_with_the_llm(
    llm_server: FakeLLMServer,
    gold_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Cli,
) -> None:
    llm_server.answer = scripted
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path / "home"))
    out = tmp_path / "report"
    args = ["baselines", "--gold", gold_file, "--systems", "llm", "--report-dir", out]
    args += [
        "--provider",
        "openai",
        "--model",
        "judge",
        "--base-url",
        llm_server.base_url("openai"),
    ]
    assert cli(*args).returncode == 0
    (result,) = json.loads((out / "baseline_results.json").read_text(encoding="utf-8"))["results"]
    assert result["linking"]["accuracy_overall"] == 0.5 and result["wall_time_s"] > 0
    args[args.index("llm")] = "llm,bogus"
    assert cli(*args).returncode == 2


def fails_on_binds_to(request: FakeRequest) -> Reply | str:
    """HTTP 500 for the span "binds to", every time; the scripted label for the others."""
    if "[[binds to]]" in request.user:
        return Reply("overloaded", status=500)
    return scripted(request)


def test_llm_baseline_finishes_and_reports_a_span_whose_request_failed(
    llm_server: FakeLLMServer, gold_file: Path, kb: KB
) -> None:
    llm_server.answer = fails_on_binds_to
    linker = llm_server.provider("gemini", "judge-model", cache=None)
    documents = read_gold(gold_file, kb).documents
    (result,) = run_baselines(documents, ["llm"], kb, provider=linker, concurrency=3)
    baseline = result["baseline"]
    assert baseline["requests"] == 4
    assert baseline["outcomes"] == {"called": 3, "answered": 2, "unknown_label": 1, "failed": 1}
    [failed] = baseline["failed"]
    assert "HTTP 500" in failed["error"]
    span = next(h for d in documents for h in d.ground_truth if h.surface == "binds to")
    assert (failed["a"], failed["b"]) == (span.a, span.b)
    assert (result["linking"]["n_gold"], result["linking"]["n_correct"]) == (4, 2)


def test_baselines_command_exits_3_on_a_failed_span_and_keeps_a_fuller_result(
    llm_server: FakeLLMServer,
    gold_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Cli,
) -> None:
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path / "home"))
    out = tmp_path / "report"
    args = ["baselines", "--gold", gold_file, "--systems", "llm", "--report-dir", out]
    args += ["--provider", "openai", "--model", "j", "--base-url", llm_server.base_url("openai")]
    args += ["--attempts", "1"]
    llm_server.answer = scripted
    assert cli(*args).returncode == 0
    complete = (out / "baseline_results.json").read_text(encoding="utf-8")
    llm_server.answer = fails_on_binds_to
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path / "cold"))  # a cold cache: asks again
    assert cli(*args).returncode == 3
    assert (out / "baseline_results.json").read_text(encoding="utf-8") == complete  # kept
    assert cli(*args, "--force").returncode == 3
    (result,) = json.loads((out / "baseline_results.json").read_text(encoding="utf-8"))["results"]
    assert result["baseline"]["outcomes"]["failed"] == 1
    llm_server.fail(500, times=100)
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path / "colder"))
    assert cli(*args, "--force").returncode == 4
