"""The llm linking baseline through the real provider SDKs and the fake provider server."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.baselines import EncoderReport, LexicalReport, run_baselines
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply

# What the scripted linker answers for each marked surface of the conftest gold.
ANSWERS = {
    "directly regulates": "directly regulated by",  # a converse label: folds onto RO.0002578
    "binds to": "NONE",
    "activates": "activates",
    "associates with": "frobnicates",  # not a KB label
}


def written(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """``run_baselines``' results as ``baseline_results.json`` holds them."""
    return [result.to_dict() for result in run_baselines(*args, **kwargs)]


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
    (result,) = written(documents, ["llm"], kb, provider=linker)
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
    again = written(documents, ["llm"], kb, provider=linker)[0]
    assert again["baseline"]["outcomes"]["cached"] == 4 and llm_server.request_count == 4
    assert again["linking"] == linking
    # The usage is what this run paid for: the fake server reports tokens, a cached run pays none.
    assert result["baseline"]["usage"] and again["baseline"]["usage"] == {}


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
    (result,) = written(documents, ["llm"], kb, provider=linker)
    assert result["baseline"]["outcomes"] == {
        "called": 4,
        "answered": 1,
        "unknown_label": 1,
        "unparsable": 2,
    }
    assert llm_server.request_count == 4

    llm_server.answer = scripted
    (again,) = written(documents, ["llm"], kb, provider=linker)
    assert llm_server.request_count == 6  # only the two unparsable answers are asked again
    assert again["baseline"]["outcomes"] == {
        "cached": 2,
        "called": 2,
        "answered": 2,
        "none": 1,
        "unknown_label": 1,
    }
    (third,) = written(documents, ["llm"], kb, provider=linker)
    assert third["baseline"]["outcomes"]["cached"] == 4 and llm_server.request_count == 6


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
    (result,) = written(documents, ["llm"], kb, provider=linker, concurrency=3)
    baseline = result["baseline"]
    assert list(baseline) == ["annotator", "requests", "outcomes", "usage", "failed"]
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


DEMO_GOLD = (
    Path(__file__).parents[1] / "data" / "recorded" / "studio" / "files" / "demo.verified.json"
)


def test_encoder_baseline_on_the_demo_gold_is_deterministic(
    encoder_dir: Path,
    encoder_cache: Path,
    kb: KB,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from goldloop.llm.encoder import Encoder

    shutil.copytree(encoder_cache, tmp_path / "encoder")  # computing them: tests/llm/test_encoder
    documents = read_gold(DEMO_GOLD, kb).documents
    n_gold = sum(len(d.ground_truth) for d in documents)
    encoder = Encoder(encoder_dir, cache_dir=tmp_path / "encoder")  # the KB embeddings' cache
    first = written(documents, ["encoder"], kb, encoder=encoder)
    again = Encoder(encoder_dir, cache_dir=tmp_path / "encoder")
    second = written(documents, ["encoder"], kb, encoder=again)
    assert [r["regime"] for r in first] == ["end-to-end", "linking-only"]
    strip = [{k: v for k, v in r.items() if k != "wall_time_s"} for r in first]
    assert strip == [{k: v for k, v in r.items() if k != "wall_time_s"} for r in second]
    assert all(r["wall_time_s"] > 0 for r in first)
    linking = first[1]["linking"]
    assert (linking["n_gold"], linking["n_answered"]) == (n_gold, n_gold)
    lexical = written(documents, ["lexical"], kb)[0]
    # End-to-end reuses the lexical detector's spans: the same spans, linked by the encoder.
    assert first[0]["baseline"]["spans"]["end-to-end"] == lexical["baseline"]["mentions"]
    assert first[0]["baseline"]["spans"]["linking-only"] == n_gold
    assert len(list((tmp_path / "encoder").iterdir())) == 1  # one KB, one encoder, one cache file


def test_a_sentence_naming_a_relation_verbatim_is_linked_to_it(
    encoder_dir: Path, encoder_cache: Path, kb: KB
) -> None:
    from goldloop.formats.gold import Document, Hit
    from goldloop.llm.encoder import Encoder
    from goldloop.scoring.baselines import encoder_baseline

    texts = {
        "pmid:1": "Leptin suppresses appetite.",
        "pmid:2": "Insulin stimulates glucose uptake.",
    }
    documents = []
    for doc_id, text in texts.items():
        surface = text.split()[1]
        a = text.index(surface)
        relation = kb.lookup(surface)
        assert relation is not None
        hit = Hit(a=a, b=a + len(surface), surface=surface, entity_id=relation.entity_id)
        documents.append(Document(doc_id=doc_id, text=text, ground_truth=[hit]))
    run = encoder_baseline(documents, kb, Encoder(encoder_dir, cache_dir=encoder_cache))
    predicted = [p.entity_id for p in run.predictions.predictions]
    assert predicted == [kb.lookup("suppresses").entity_id, kb.lookup("stimulates").entity_id]


def test_encoder_option_missing_or_not_a_model_exits_2(
    cli: Cli, gold_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    result = cli("baselines", "--gold", gold_file, "--systems", "encoder", "--report-dir", out)
    assert result.returncode == 2
    assert "--encoder: the encoder baseline needs a model directory" in result.err
    result = cli("baselines", "--gold", gold_file, "--systems", "encoder", "--encoder", tmp_path,
                 "--report-dir", out)  # fmt: skip
    assert result.returncode == 2
    assert f"--encoder: {tmp_path}: not a model directory: it lacks an ONNX export" in result.err
    assert "tokenizer.json" in result.err and "Traceback" not in result.stderr
    assert not out.exists()


def test_baseline_results_carry_the_corpus_figures_of_the_design(kb: KB) -> None:
    from goldloop.scoring.design import read_design

    documents = read_gold(DEMO_GOLD, kb).documents
    plain = written(documents, ["lexical"], kb)
    assert [r["corpus"] for r in plain] == [None, None]
    equal = read_design(documents, "ignore")
    assert equal is not None
    results = written(documents, ["lexical"], kb, design=equal)
    end_to_end, linking = results
    assert (end_to_end["regime"], linking["regime"]) == ("end-to-end", "linking-only")
    # Equal weights: the corpus figures are the sample's.
    for key in ("precision", "recall", "f1", "entity_accuracy"):
        assert end_to_end["corpus"][key] == pytest.approx(end_to_end["detection"][key]), key
    assert linking["corpus"]["accuracy_overall"] == pytest.approx(
        linking["linking"]["accuracy_overall"]
    )
    for result in results:
        assert result["corpus"]["n_docs"] == len(documents)
        assert result["corpus"]["population_docs"] == len(documents)


def test_the_lexical_and_encoder_reports_keep_their_keys_in_order() -> None:
    assert list(LexicalReport(3, "kb@1").to_dict()) == ["mentions", "kb_tag"]
    encoder = EncoderReport("m", "abc", "kb@1", {"linking-only": 4, "end-to-end": 2})
    assert list(encoder.to_dict()) == ["encoder", "encoder_identity", "kb_tag", "spans"]
    assert encoder.to_dict()["spans"] == {"linking-only": 4, "end-to-end": 2}
