"""annotate_documents end to end: real SDKs against the fake server, real spaCy, the SQLite cache."""

from __future__ import annotations

from typing import Any

import pytest

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm import AnnotatorSpec, SQLiteCache
from goldloop.llm.annotate import annotate_documents, dry_run, select_documents
from goldloop.text.lexical import LexicalAnnotator
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.llm.conftest import PROVIDER_NAMES, answers_by_text, mentions_json

GOOD = "TNF binds to TNFR1 and increases apoptosis, whereas the activation of STAT3 was rare."
LONG = "IL-6 is activated by TNF in macrophages, and TNF increases the expression of SOCS3."
BAD = "Nothing to see in this abstract."
DOCUMENTS = [
    Document(doc_id=f"pmid:{k}", text=t, role="primary") for k, t in enumerate((GOOD, LONG, BAD))
]
LONG_ANSWER = mentions_json(
    [
        {
            "surface": "activated by",
            "occurrence": 1,
            "label": "activated by",
            "direction": "forward",
            "subject_text": "IL-6",
            "object_text": "TNF",
        }
    ]
    + [{"surface": "increases", "occurrence": 1, "label": "increases", "direction": "forward"}]
    + [{"surface": "missing words", "occurrence": 1, "label": "causes", "direction": "forward"}] * 8
)
ANSWERS_GOOD = mentions_json(
    [
        {
            "surface": "binds to",
            "occurrence": 1,
            "label": "binds to",
            "direction": "forward",
        },
        {
            "surface": "increases",
            "occurrence": 1,
            "label": "increases",
            "direction": "forward",
            "confidence": 0.9,
        },
        {
            "surface": "activation",
            "occurrence": 1,
            "label": "activates",
            "direction": "forward",
        },
        {
            "surface": "apoptosis",
            "occurrence": 1,
            "label": "no such relation",
            "direction": "forward",
        },
    ]
)
ANSWERS = answers_by_text(
    {GOOD: ANSWERS_GOOD, LONG: LONG_ANSWER, BAD: "I could not find any relation mentions."}
)
PARSABLE_ANSWERS = answers_by_text({GOOD: ANSWERS_GOOD, LONG: LONG_ANSWER, BAD: mentions_json([])})
MAX_TOKENS = len(LONG_ANSWER) // 4 - 10  # the LONG answer does not fit


def run(server: FakeLLMServer, name: str, cache: SQLiteCache, **options: Any) -> Any:
    provider = server.provider(name, "model-x", effort="low", cache=cache)
    options.setdefault("max_tokens", MAX_TOKENS)
    return annotate_documents(DOCUMENTS, provider, options.pop("kb"), concurrency=4, **options)


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_annotate_reports_every_item_and_leaves_failures_out(
    llm_server: FakeLLMServer, name: str, kb: KB, cache: SQLiteCache
) -> None:
    llm_server.answer = ANSWERS
    result = run(llm_server, name, cache, kb=kb)
    report = result.report.to_dict()
    assert [d.doc_id for d in result.documents] == ["pmid:0"]
    [document] = result.documents
    tag = f"model-x@low@{llm_server.base_url(name)}"  # a server of one's own is in the tag
    assert [(h.surface, h.direction, h.annotator) for h in document.ground_truth] == [
        ("binds to", "symmetric", tag),
        ("increases", "forward", tag),
    ]
    counts = report["counts"]
    assert counts["hits"] + counts["rejections"] == counts["items"] == 4
    assert (counts["truncated"], counts["unparsable"], counts["failed"]) == (1, 1, 0)
    assert {f["doc_id"]: f["reason"] for f in report["failed_documents"]} == {
        "pmid:1": "truncated",
        "pmid:2": "unparsable",
    }
    assert report["rejections_by_reason"] == {"non_verbal": 1, "unknown_label": 1}
    assert {r["surface"]: (r["doc_id"], r["reasons"]) for r in report["rejections"]} == {
        "activation": ("pmid:0", ["non_verbal"]),
        "apoptosis": ("pmid:0", ["unknown_label"]),
    }
    assert report["endpoint"] == llm_server.base_url(name)
    assert (report["provider"], report["model"], report["effort"], report["annotator"]) == (
        name,
        "model-x",
        "low",
        tag,
    )
    assert report["usage"]["input_tokens"] > 0 and report["usage"]["output_tokens"] > 0
    assert counts["requests"] == 3 and counts["from_cache"] == 0


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_rerun_retries_only_the_truncated_and_unparsable_documents(
    llm_server: FakeLLMServer, name: str, kb: KB, cache: SQLiteCache
) -> None:
    llm_server.answer = ANSWERS
    run(llm_server, name, cache, kb=kb)
    llm_server.reset()
    llm_server.answer = PARSABLE_ANSWERS  # the model answers properly this time
    again = run(llm_server, name, cache, kb=kb, max_tokens=4000)
    assert sorted(r.user.split("\n", 1)[1] for r in llm_server.requests) == sorted([LONG, BAD])
    counts = again.report.to_dict()["counts"]
    assert (
        counts["from_cache"],
        counts["requests"],
        counts["truncated"],
        counts["unparsable"],
        counts["annotated"],
    ) == (1, 2, 0, 0, 3)
    assert counts["hits"] + counts["rejections"] == counts["items"] == 14
    long_doc = next(d for d in again.documents if d.doc_id == "pmid:1")
    [activated, increases] = long_doc.ground_truth
    assert increases.surface == "increases" and increases.direction == "forward"
    assert activated.label_canonicalized and activated.direction == "inverse"
    assert activated.subject_span == (LONG.index("TNF"), LONG.index("TNF") + 3)
    assert again.report.to_dict()["rejections_by_reason"] == {
        "non_verbal": 1,
        "unknown_label": 1,
        "surface_not_found": 8,
    }


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_second_run_is_served_entirely_from_cache(
    llm_server: FakeLLMServer, name: str, kb: KB, cache: SQLiteCache
) -> None:
    llm_server.answer = PARSABLE_ANSWERS
    first = run(llm_server, name, cache, kb=kb, max_tokens=4000)
    llm_server.reset()
    second = run(llm_server, name, cache, kb=kb, max_tokens=4000)
    assert llm_server.request_count == 0
    assert [d.to_json() for d in second.documents] == [d.to_json() for d in first.documents]
    assert (
        second.report.to_dict()["counts"]["from_cache"] == 3
        and second.report.to_dict()["counts"]["requests"] == 0
    )
    assert (
        second.report.to_dict()["usage"] == {}
        and second.report.to_dict()["usage_from_cache"] == first.report.to_dict()["usage"]
    )


def test_no_verbal_only_redecodes_from_the_cache(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache
) -> None:
    llm_server.answer = ANSWERS
    strict = run(llm_server, "openai", cache, kb=kb)
    llm_server.reset()
    loose = run(llm_server, "openai", cache, kb=kb, verbal_only=False)
    assert llm_server.request_count == 2  # only the truncated and the unparsable are asked again
    assert strict.report.to_dict()["counts"]["hits"] + 1 == loose.report.to_dict()["counts"]["hits"]
    assert "activation" in [h.surface for h in loose.documents[0].ground_truth]


def test_failed_requests_are_reported_and_not_cached(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache
) -> None:
    llm_server.answer = ANSWERS
    llm_server.fail(500, times=100)
    result = run(llm_server, "anthropic", cache, kb=kb)
    assert result.documents == []
    assert result.report.to_dict()["counts"]["failed"] == 3
    assert all("500" in f["detail"] for f in result.report.to_dict()["failed_documents"])
    assert len(cache) == 0


def test_requests_run_concurrently(llm_server: FakeLLMServer, kb: KB) -> None:
    llm_server.latency_s = 0.1
    documents = [Document(doc_id=str(k), text=f"Abstract number {k}.") for k in range(12)]
    provider = llm_server.provider("gemini", "m", cache=None)
    annotate_documents(documents, provider, kb, concurrency=6)
    assert llm_server.request_count == 12
    assert llm_server.max_in_flight > 1


def test_single_document(llm_server: FakeLLMServer, kb: KB) -> None:
    llm_server.answer = ANSWERS
    result = annotate_documents(DOCUMENTS[:1], llm_server.provider("openai", "m", cache=None), kb)
    assert len(result.documents) == 1 and len(result.documents[0].ground_truth) == 2


def test_lexical_annotator_needs_no_server(kb: KB) -> None:
    annotator = LexicalAnnotator(kb)
    result = annotate_documents(DOCUMENTS, annotator, kb)
    report = result.report.to_dict()
    assert report["annotator"] == f"lexical@{kb.tag}" and report["source"] == "lexical"
    assert report["counts"]["requests"] == 0 and report["counts"]["annotated"] == 3
    assert report["counts"]["hits"] + report["counts"]["rejections"] == report["counts"]["items"]
    hits = [h for d in result.documents for h in d.ground_truth]
    assert hits and all(h.source == "lexical" and h.annotator == annotator.tag for h in hits)
    assert {h.surface for h in hits} >= {"binds to", "increases", "activated by"}


def test_dry_run_calls_nothing_and_counts_cached_answers(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache
) -> None:
    provider = llm_server.provider("openai", "m", cache=cache)
    spec = AnnotatorSpec("openai", "m", base_url=llm_server.base_url("openai"))
    plan = dry_run(DOCUMENTS, kb, 100, spec, cache=cache, input_price_per_mtok=2.0)
    assert llm_server.request_count == 0
    assert (plan.documents, plan.cached, plan.requests) == (3, 0, 3)
    assert plan.input_cost == pytest.approx(plan.input_tokens * 2.0 / 1e6)
    annotate_documents(DOCUMENTS[:1], provider, kb)
    llm_server.reset()
    again = dry_run(DOCUMENTS, kb, 100, spec, cache=cache)
    assert (again.cached, again.requests, again.input_cost) == (1, 2, None)
    assert llm_server.request_count == 0


def test_select_documents_by_role_and_limit() -> None:
    documents = [
        Document(doc_id=str(k), text="t", role=role)
        for k, role in enumerate(["primary", "reserve", "double", None])
    ]
    assert [d.doc_id for d in select_documents(documents, ["primary", "double"], None)] == [
        "0",
        "2",
        "3",
    ]
    assert [d.doc_id for d in select_documents(documents, ["primary", "double"], 2)] == ["0", "2"]
    assert len(select_documents(documents, None, None)) == 4


def test_reply_object_can_force_truncation(llm_server: FakeLLMServer, kb: KB) -> None:
    llm_server.answer = lambda request: Reply('{"mentions": []}', truncated=True)
    result = annotate_documents(DOCUMENTS[:1], llm_server.provider("gemini", "m", cache=None), kb)
    assert result.report.to_dict()["counts"]["truncated"] == 1 and result.documents == []


@pytest.mark.parametrize("batch", [False, True])
def test_the_report_prices_the_usage_the_provider_returned(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Any, batch: bool
) -> None:
    from goldloop.llm.batch import BatchMode, BatchPolicy
    from goldloop.llm.pricing import ModelPrice, PriceTable

    price = ModelPrice(
        input=2.0, cached_input=0.2, output=10.0, batch_discount=0.5, cache_write=2.5
    )
    table = PriceTable("test", {}, tmp_path / "prices.json", {("anthropic", "m"): price})
    mode = BatchMode(tmp_path / "state.json", BatchPolicy(poll_initial_s=0.01)) if batch else None
    provider = llm_server.provider("anthropic", "m", cache=cache)
    run = annotate_documents(DOCUMENTS, provider, kb, batch=mode, prices=table)
    # The fake's own count of what it billed, priced by hand.
    sent = llm_server.usage_totals
    fresh = sent["input"] - sent["cached"] - sent["written"]
    usd = (fresh * 2.0 + sent["cached"] * 0.2 + sent["written"] * 2.5 + sent["output"] * 10.0) / 1e6
    expected = usd / 2 if batch else usd
    assert run.report.to_dict()["mode"] == ("batch" if batch else "online")
    assert run.report.to_dict()["cost"]["usd"] == pytest.approx(expected, abs=1e-6)
    assert run.report.to_dict()["cost"]["prices_date"] == "test"
    assert run.report.to_dict()["usage"]["input_tokens"] == sent["input"]


def test_a_large_enough_gemini_run_caches_the_catalog_explicitly_for_its_duration(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Any, monkeypatch: Any
) -> None:
    table = tmp_path / "prices.json"
    table.write_text(
        '{"date": "t", "sources": {}, "providers": {"gemini": {"models": {"m": {"input": 1.0, '
        '"cached_input": 0.1, "output": 2.0, "cache_storage": 0.8, "cache_min_tokens": 1024}}}}}'
    )
    monkeypatch.setenv("GOLDLOOP_PRICES", str(table))  # an explicit cache pays from 2 requests
    provider = llm_server.provider("gemini", "m", cache=cache)
    run = annotate_documents(DOCUMENTS, provider, kb)
    (name,) = llm_server.deleted_caches  # one cache, deleted when the run ended
    assert not llm_server.context_caches
    assert all(r.cached_content == name for r in llm_server.requests)
    catalog = len(llm_server.requests[0].system) // 4
    assert run.report.to_dict()["usage"]["cached_input_tokens"] == 3 * catalog
    # Every answer cached: nothing to send, no cache made.
    annotate_documents(DOCUMENTS, provider, kb)
    assert llm_server.deleted_caches == [name]


def test_the_report_keeps_its_json_keys_in_order(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache
) -> None:
    """The typed report writes the keys the report file has always had; a provider's run adds
    how it was sent and its cost, a lexical run does not."""
    llm_server.answer = ANSWERS
    common = [
        "annotator", "provider", "model", "effort", "endpoint", "source", "kb", "verbal_only",
        "max_tokens", "counts", "rejections_by_reason", "usage", "usage_from_cache",
        "failed_documents", "rejections",
    ]  # fmt: skip
    report = run(llm_server, "openai", cache, kb=kb).report.to_dict()
    assert list(report) == [*common, "mode", "api", "cost"]
    assert list(report["cost"]) == ["usd", "prices", "prices_date"]
    lexical = annotate_documents(DOCUMENTS, LexicalAnnotator(kb), kb).report.to_dict()
    assert list(lexical) == common
