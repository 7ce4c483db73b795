"""The predictor behind `/predict`: review predictions, skips, the event loop, LLM failures,
the cache, two annotators, concurrency, the task size limit (driven over HTTP)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from goldloop.backend import predictor as predictor_module
from goldloop.backend.app import create_app
from goldloop.backend.predictor import INLINE_MAX_TASKS, Predictor
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm.annotate import annotate_documents
from goldloop.studio.review import build_review_prediction
from goldloop.text.lexical import LexicalAnnotator
from tests.backend.conftest import (
    LEXICAL,
    LOOPBACK,
    MENTION_TEXT,
    NOTHING_TEXT,
    llm_settings,
    predict,
    running_backend,
    span_of,
    tasks_of,
)
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply


def test_predict_one_task_returns_the_review_prediction_push_would_build(
    client: TestClient, kb: KB, label_config: str
) -> None:
    reply = predict(client, tasks_of([MENTION_TEXT]), label_config)
    assert reply.status_code == 200
    (result,) = reply.json()["results"]
    tag = f"review:lexical@{kb.tag}"
    assert result["model_version"] == tag
    # The same core, called directly, gives the same prediction.
    annotator = LexicalAnnotator(kb)
    run = annotate_documents([Document(doc_id="doc:0", text=MENTION_TEXT)], annotator, kb)
    hits = run.documents[0].ground_truth
    assert result == build_review_prediction(MENTION_TEXT, hits, None, annotator.tag, None, kb)
    # And the offsets are exact in Label Studio's code points (𝛼 counts once, not twice).
    spans = {(r["value"]["start"], r["value"]["end"], r["value"]["text"]) for r in result["result"]}
    for surface in ("activates", "inhibited by"):
        assert (*span_of(MENTION_TEXT, surface), surface) in spans
    assert {r["from_name"] for r in result["result"]} >= {"mention", "relation", "direction"}


def test_predict_eight_tasks_one_result_each_in_order(
    client: TestClient, label_config: str
) -> None:
    verbs = ["activates", "inhibits", "increases", "upregulates", "downregulates", "inactivates"]
    texts = [f"In these cells, IL-{i} {verb} the TNF receptor." for i, verb in enumerate(verbs)]
    texts.insert(3, NOTHING_TEXT)
    texts.append(MENTION_TEXT)
    expected = [[v] for v in verbs[:3]] + [[]] + [[v] for v in verbs[3:]]
    expected.append(["activates", "inhibited by"])
    reply = predict(client, tasks_of(texts), label_config)
    results = reply.json()["results"]
    assert len(results) == 8
    for text, result, surfaces in zip(texts, results, expected, strict=True):
        mentions = [r["value"] for r in result["result"] if r["from_name"] == "mention"]
        assert [m["text"] for m in mentions] == surfaces, text
        for mention, surface in zip(mentions, surfaces, strict=True):
            assert (mention["start"], mention["end"]) == span_of(text, surface)
    # Found nothing: a stored, empty prediction (never [] which would make Label Studio ask again).
    assert results[3]["result"] == [] and results[3]["model_version"].startswith("review:")


def test_a_task_without_text_or_with_a_review_prediction_gets_no_prediction(
    client: TestClient, kb: KB, label_config: str, caplog: pytest.LogCaptureFixture
) -> None:
    tasks = tasks_of([MENTION_TEXT, MENTION_TEXT, MENTION_TEXT])
    tasks[0]["data"] = {"body": MENTION_TEXT}
    tasks[1]["predictions"] = [{"model_version": f"review:lexical@{kb.tag}", "result": []}]
    with caplog.at_level(logging.INFO, logger="goldloop.backend"):
        results = predict(client, tasks, label_config).json()["results"]
    assert results[0] == [] and results[1] == []
    assert results[2]["result"]
    assert "task 100: no prediction (no_text)" in caplog.text
    assert "task 101: no prediction (already_predicted)" in caplog.text


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the predictor's methods handed to a thread, in order."""
    handed: list[str] = []
    real = predictor_module.asyncio.to_thread

    async def to_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(function.__name__)
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(predictor_module.asyncio, "to_thread", to_thread)
    return handed


def test_a_batch_needing_no_work_is_answered_on_the_event_loop_as_it_would_be_off_it(
    client: TestClient,
    label_config: str,
    threads: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    texts = [f"{MENTION_TEXT} Study {uuid.uuid4().hex}." for _ in range(INLINE_MAX_TASKS + 1)]
    first = predict(client, tasks_of(texts[:2]), label_config).json()["results"]
    assert threads == ["predict_batch"] and all(r["result"] for r in first)  # parsed: a thread
    # Stored now: the same answer without a thread.
    assert predict(client, tasks_of(texts[:2]), label_config).json()["results"] == first
    assert threads == ["predict_batch"]
    # Nothing to do (every task already predicted, or without text): no thread either.
    held = tasks_of(texts[2:4], predictions=[{"model_version": first[0]["model_version"]}])
    assert predict(client, held, label_config).json()["results"] == [[], []]
    assert threads == ["predict_batch"]
    # One task needing a parse sends the whole batch to a thread, each skip logged once.
    mixed = tasks_of([texts[0], texts[4]])
    mixed.append({"id": 7, "data": {"body": "no text"}})
    with caplog.at_level(logging.INFO, logger="goldloop.backend"):
        results = predict(client, mixed, label_config).json()["results"]
    assert results[0] == first[0] and results[1]["result"] and results[2] == []
    assert threads == ["predict_batch"] * 2
    assert caplog.text.count("task 7: no prediction (no_text)") == 1
    # More tasks than may hold the loop: a thread, whatever is stored.
    many = predict(client, tasks_of(texts), label_config).json()["results"]
    assert threads == ["predict_batch"] * 3 and many[:2] == first


def test_a_prediction_that_does_not_fit_the_labeling_config_is_not_sent(
    client: TestClient, label_config: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The project's config lacks the relation this text gives: validation refuses the prediction.
    narrowed = label_config.replace('alias="activates"', 'alias="activates-renamed"')
    assert narrowed != label_config
    with caplog.at_level(logging.WARNING, logger="goldloop.backend"):
        results = predict(client, tasks_of(["Protein 1 activates kinase 2."]), narrowed).json()
    assert results["results"] == [[]]
    assert "invalid_for_label_config" in caplog.text and "activates" in caplog.text


# --- with an LLM provider: the real SDK against the fake provider server ---


def scripted(request: FakeRequest) -> Reply | str:
    """Answers chosen by a marker word in the abstract."""
    if "TRUNCATE" in request.user:
        return Reply('{"mentions": [{"surface": "activ', truncated=True)
    if "GARBLE" in request.user:
        return "this is not JSON"
    if "NOTHING" in request.user:
        return '{"mentions": []}'
    item = {"surface": "activates", "occurrence": 1, "label": "activates", "direction": "forward",
            "subject_text": "𝛼-Synuclein", "object_text": "TNF", "confidence": 0.75}  # fmt: skip
    return json.dumps({"mentions": [item]})


@dataclass
class LlmBackend:
    """The backend over the fake LLM server (``scripted``'s answers), and its ``/predict``."""

    client: TestClient
    server: FakeLLMServer
    label_config: str

    def results(self, texts: list[str]) -> list[Any]:
        """The predictions for one task per text (``tasks_of``'s ids, from 100)."""
        return predict(self.client, tasks_of(texts), self.label_config).json()["results"]


@pytest.fixture
def llm_backend(
    llm_server: FakeLLMServer, label_config: str, tmp_path: Any
) -> Iterator[LlmBackend]:
    llm_server.answer = scripted
    settings = llm_settings(llm_server, tmp_path / "cache.sqlite", GOLDLOOP_EFFORT="low")
    predictor = Predictor.from_settings(settings)
    with TestClient(create_app(settings, predictor), client=LOOPBACK) as client:
        yield LlmBackend(client, llm_server, label_config)


def test_llm_failures_get_no_prediction_and_are_logged_the_rest_of_the_batch_stands(
    llm_backend: LlmBackend, caplog: pytest.LogCaptureFixture
) -> None:
    texts = [
        MENTION_TEXT,
        "TRUNCATE: " + MENTION_TEXT,
        "GARBLE: " + MENTION_TEXT,
        "NOTHING: " + MENTION_TEXT,
    ]
    server = llm_backend.server
    review = f"review:gpt-test@low@{server.base_url('openai')}"  # the fake is a server of one's own
    assert llm_backend.client.get("/health").json()["model_version"] == review
    with caplog.at_level(logging.WARNING, logger="goldloop.backend"):
        results = llm_backend.results(texts)
    assert len(results) == 4
    good, truncated, garbled, nothing = results
    assert truncated == [] and garbled == []
    assert "task 101: no prediction (truncated)" in caplog.text
    assert "task 102: no prediction (unparsable)" in caplog.text
    assert nothing == {"model_version": review, "result": []}
    assert good["model_version"] == review and good["score"] == 0.75
    (start, end) = span_of(MENTION_TEXT, "activates")
    assert {(r["from_name"], r["value"]["start"], r["value"]["end"]) for r in good["result"]} == {
        ("mention", start, end), ("relation", start, end), ("direction", start, end)
    }  # fmt: skip
    assert server.request_count == 4


def test_a_failed_call_gets_no_prediction_and_a_repeat_is_answered_from_the_cache(
    llm_backend: LlmBackend, caplog: pytest.LogCaptureFixture
) -> None:
    server = llm_backend.server
    server.fail(401, times=10)  # not retryable: the call fails for good
    with caplog.at_level(logging.WARNING, logger="goldloop.backend"):
        failed = llm_backend.results([MENTION_TEXT])
    assert failed == [[]]
    assert "task 100: no prediction (failed)" in caplog.text
    server.reset()
    first = llm_backend.results([MENTION_TEXT])
    again = llm_backend.results([MENTION_TEXT])
    assert first == again and first[0]["result"]
    assert server.request_count == 1  # the second answer came from the cache


def test_a_pushed_task_is_answered_from_its_review_prediction_without_an_llm_call(
    llm_backend: LlmBackend,
) -> None:
    """A task ``push`` pre-annotated with other candidates (its review prediction under another
    tag): its regions come back under the backend's tag, and the provider is not asked; a task
    without a review prediction still is (test_opening_tasks: the real editor)."""
    pushed = {"model_version": "review:lexical", "score": 0.9, "result": [{"id": "m1_2"}]}
    other = {"model_version": "curate:review:lexical", "result": []}
    tasks = tasks_of([MENTION_TEXT, MENTION_TEXT])
    tasks[0]["predictions"] = [other, pushed]
    tasks[1]["predictions"] = [other]
    answered, predicted = predict(llm_backend.client, tasks, llm_backend.label_config).json()[
        "results"
    ]
    review = llm_backend.client.get("/health").json()["model_version"]
    assert answered == {"model_version": review, "result": pushed["result"], "score": 0.9}
    assert predicted["model_version"] == review and predicted["result"]
    assert llm_backend.server.request_count == 1  # the second task's alone


def test_tasks_sharing_a_doc_id_each_get_their_own_prediction(
    client: TestClient, label_config: str
) -> None:
    texts = ["In these cells, IL-1 inhibits the TNF receptor.", NOTHING_TEXT]
    tasks = tasks_of(texts)
    for task in tasks:
        task["data"]["doc_id"] = "pmid:1"
    first, second = predict(client, tasks, label_config).json()["results"]
    assert next(r["value"]["text"] for r in first["result"]) == "inhibits"
    assert second["result"] == []


def test_annotators_a_and_b_give_the_merged_review_prediction(
    llm_server: FakeLLMServer, kb: KB, label_config: str, tmp_path: Any
) -> None:
    def answer(request: FakeRequest) -> str:
        # A (openai) and B (gemini) agree on "activates" and differ on the relation of "inhibited by".
        label = "inhibited by" if request.provider == "openai" else "activated by"
        items = [
            {"surface": "activates", "occurrence": 1, "label": "activates", "direction": "forward"},
            {"surface": "inhibited by", "occurrence": 1, "label": label, "direction": "inverse"},
        ]
        return json.dumps({"mentions": items})

    llm_server.answer = answer
    settings = llm_settings(
        llm_server,
        tmp_path / "cache.sqlite",
        model="gpt-a",
        GOLDLOOP_OTHER_PROVIDER="gemini",
        GOLDLOOP_OTHER_MODEL="gemini-b",
        GOLDLOOP_OTHER_BASE_URL=llm_server.base_url("gemini"),
        GEMINI_API_KEY="test-key",
    )
    with TestClient(
        create_app(settings, Predictor.from_settings(settings)), client=LOOPBACK
    ) as client:
        (result,) = predict(client, tasks_of([MENTION_TEXT]), label_config).json()["results"]
    a, b = f"gpt-a@{llm_server.base_url('openai')}", f"gemini-b@{llm_server.base_url('gemini')}"
    assert result["model_version"] == f"review:{a}+{b}"
    notes = {
        r["value"]["text"]: r["meta"]["text"]
        for r in result["result"]
        if r["from_name"] == "mention"
    }
    assert notes["activates"] == "both pre-annotators agree"
    assert (
        notes["inhibited by"].startswith(f"{a}: inhibits")
        and f"| {b}: activates" in notes["inhibited by"]
    )
    assert llm_server.request_count == 2


def test_concurrent_requests_get_the_same_answers_as_one_at_a_time(
    llm_server: FakeLLMServer, label_config: str, tmp_path: Any
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    llm_server.answer = scripted
    llm_server.latency_s = 0.05
    settings = llm_settings(llm_server, tmp_path / "cache.sqlite")
    batches = [
        tasks_of([f"Batch {k}: {MENTION_TEXT}", f"NOTHING {k}", f"GARBLE {k}", MENTION_TEXT])
        for k in range(4)
    ]
    with running_backend(settings, Predictor.from_settings(settings)) as backend:

        def post(tasks: list[dict[str, Any]]) -> Any:
            body = {"tasks": tasks, "label_config": label_config}
            return httpx.post(f"{backend.url}/predict", json=body, timeout=60).json()["results"]

        with ThreadPoolExecutor(4) as pool:
            together = list(pool.map(post, batches))
        one_by_one = [post(tasks) for tasks in batches]
    assert together == one_by_one
    for results in together:
        assert results[0]["result"] and results[1]["result"] == [] and results[2] == []
        assert results[3]["result"]


def test_an_oversized_task_gets_no_prediction_and_the_others_are_predicted(
    lexical_predictor: Predictor, kb: KB, label_config: str, caplog: pytest.LogCaptureFixture
) -> None:
    big = MENTION_TEXT + " " + "Filler words without a verb of the KB. " * 150_000  # ~6 MB
    small = Predictor(
        kb, LexicalAnnotator(kb), max_task_chars=10_000, parsing=lexical_predictor.parsing
    )
    with (
        TestClient(create_app(LEXICAL, small), client=LOOPBACK) as client,
        caplog.at_level(logging.WARNING, logger="goldloop.backend"),
    ):
        reply = predict(client, tasks_of([MENTION_TEXT, big, MENTION_TEXT]), label_config)
    assert reply.status_code == 200
    first, oversized, last = reply.json()["results"]
    assert oversized == []
    assert first["result"] and last["result"] == first["result"]
    assert f"task 101: no prediction (too_large): {len(big)} characters" in caplog.text


def test_an_oversized_task_gets_no_interactive_suggestion_either(
    lexical_predictor: Predictor, kb: KB, label_config: str, caplog: pytest.LogCaptureFixture
) -> None:
    surface = "activates"
    start = MENTION_TEXT.index(surface)
    context = {"result": [{
        "id": "drawn-1", "from_name": "mention", "to_name": "text", "type": "labels",
        "origin": "manual",
        "value": {"start": start, "end": start + len(surface), "text": surface,
                  "labels": ["Predicate"]},
    }]}  # fmt: skip
    big = MENTION_TEXT + " " + "Filler words without a verb of the KB. " * 1_600  # ~62,000
    small = Predictor(
        kb, LexicalAnnotator(kb), max_task_chars=10_000, parsing=lexical_predictor.parsing
    )
    with (
        TestClient(create_app(LEXICAL, small), client=LOOPBACK) as client,
        caplog.at_level(logging.WARNING, logger="goldloop.backend"),
    ):
        fits = predict(client, tasks_of([MENTION_TEXT]), label_config, params={"context": context})
        over = predict(client, tasks_of([big]), label_config, params={"context": context})
    assert fits.status_code == 200 and fits.json()["results"][0]["result"]
    assert over.status_code == 200 and over.json()["results"][0]["result"] == []
    assert f"task 100: no prediction (too_large): {len(big)} characters" in caplog.text
