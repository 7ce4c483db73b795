"""Each provider through its real SDK against the fake server: answers, usage, truncation, retries, cache."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from goldloop.llm import LLMError, LLMRequest, RetryPolicy, SQLiteCache, cache_key, make_provider
from goldloop.settings import Settings
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.llm.conftest import PROVIDER_NAMES

SCHEMA = {"type": "object", "properties": {"mentions": {"type": "array"}}}
REQUEST = LLMRequest(
    system="You annotate.", user="Abstract:\nTNF activates IL-6.", schema=SCHEMA, max_tokens=200
)


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_provider_end_to_end(llm_server: FakeLLMServer, name: str, cache: SQLiteCache) -> None:
    llm_server.answer = lambda req: Reply(
        '{"mentions": []}', input_tokens=120, output_tokens=5, reasoning_tokens=7
    )
    provider = llm_server.provider(name, "model-x", effort="low", cache=cache)
    response = provider.complete(REQUEST)
    assert provider.tag == f"model-x@low@{llm_server.base_url(name)}"
    assert response.text == '{"mentions": []}'
    assert not response.truncated and not response.cached
    assert response.usage["input_tokens"] == 120
    if name == "anthropic":  # Anthropic counts thinking inside output_tokens
        assert response.usage["output_tokens"] == 12
    else:
        assert response.usage["reasoning_tokens"] == 7
    seen = llm_server.requests[-1]
    assert (seen.provider, seen.model) == (name, "model-x")
    assert (seen.system, seen.user, seen.schema, seen.max_tokens) == (
        REQUEST.system,
        REQUEST.user,
        SCHEMA,
        200,
    )
    assert seen.effort == "low"


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_second_call_is_served_from_cache(
    llm_server: FakeLLMServer, name: str, cache: SQLiteCache
) -> None:
    provider = llm_server.provider(name, "model-x", cache=cache)
    first = provider.complete(REQUEST)
    llm_server.reset()
    again = provider.complete(REQUEST)
    assert again.cached and again.text == first.text and again.usage == first.usage
    assert llm_server.request_count == 0
    # the effort is part of the key: another effort is another request
    llm_server.provider(name, "model-x", effort="high", cache=cache).complete(REQUEST)
    assert llm_server.request_count == 1


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_truncated_answer_is_flagged_and_not_cached(
    llm_server: FakeLLMServer, name: str, cache: SQLiteCache
) -> None:
    llm_server.answer = lambda req: '{"mentions": [{"surface": "activates", "occurrence": 1}]}'
    provider = llm_server.provider(name, "model-x", cache=cache)
    short = LLMRequest(REQUEST.system, REQUEST.user, SCHEMA, max_tokens=4)
    response = provider.complete(short)
    assert response.truncated
    assert len(cache) == 0
    provider.complete(short)
    assert llm_server.request_count == 2  # nothing was served from the cache
    # max tokens is not in the key: a larger limit answers and that answer is cached
    full = provider.complete(REQUEST)
    assert not full.truncated and len(cache) == 1


@pytest.mark.parametrize("name", PROVIDER_NAMES)
@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_after_rate_limit_and_server_errors(
    llm_server: FakeLLMServer, name: str, status: int
) -> None:
    llm_server.fail(status, times=2)
    response = llm_server.provider(name, "model-x", cache=None).complete(REQUEST)
    assert response.text == '{"mentions": []}'
    assert llm_server.request_count == 3


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_gives_up_after_the_last_attempt(
    llm_server: FakeLLMServer, name: str, cache: SQLiteCache
) -> None:
    llm_server.fail(500, times=10)
    retry = RetryPolicy(attempts=3, initial_s=0.01, max_s=0.02, timeout_s=5)
    with pytest.raises(LLMError, match="500"):
        llm_server.provider(name, "model-x", cache=cache, retry=retry).complete(REQUEST)
    assert llm_server.request_count == 3
    assert len(cache) == 0


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_client_error_is_not_retried(llm_server: FakeLLMServer, name: str) -> None:
    llm_server.fail(400, times=5)
    with pytest.raises(LLMError, match="400"):
        llm_server.provider(name, "model-x", cache=None).complete(REQUEST)
    assert llm_server.request_count == 1


def test_a_server_that_never_answers_is_given_up_on_after_two_timeouts(
    llm_server: FakeLLMServer,
) -> None:
    import time

    # Two timeouts take 1 s; waiting for the server would take 8 s: the bound between them leaves
    # room for a loaded machine (3.2 s measured at load 5).
    llm_server.latency_s = 8
    retry = RetryPolicy(attempts=6, initial_s=0.01, max_s=0.02, timeout_s=0.5)
    started = time.perf_counter()
    with pytest.raises(LLMError, match=r"no answer within 0.5 s \(gave up after 2 attempt"):
        llm_server.provider("openai", "m", cache=None, retry=retry).complete(REQUEST)
    assert time.perf_counter() - started < 6 and llm_server.request_count == 2


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_timeout_is_retried(llm_server: FakeLLMServer, name: str) -> None:
    # The timeout leaves room for a loaded machine: at 0.1 s a request could time out before it
    # reached the server, which then counted one request for two attempts.
    llm_server.latency_s = 1.5
    retry = RetryPolicy(attempts=2, initial_s=0.01, max_s=0.02, timeout_s=0.4, deadline_s=5)
    with pytest.raises(
        LLMError, match=rf"{name} model-x at .*: no answer within 0.4 s \(gave up after 2 attempt"
    ):
        llm_server.provider(name, "model-x", cache=None, retry=retry).complete(REQUEST)
    assert llm_server.request_count == 2


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
    ],
)
def test_missing_credential_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, variable: str
) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(LLMError, match=variable):
        make_provider(name, "model-x", cache=None, settings=Settings.from_env())


def test_unknown_provider() -> None:
    with pytest.raises(LLMError, match="unknown provider 'mistral'"):
        make_provider("mistral", "m", cache=None, settings=Settings.from_env())


def test_cache_key_covers_every_input() -> None:
    base = ("openai", "m", "low", "sys", "user", SCHEMA)
    keys = {
        cache_key(*base),
        cache_key("anthropic", *base[1:]),
        cache_key("openai", "m2", *base[2:]),
        cache_key("openai", "m", None, *base[3:]),
        cache_key("openai", "m", "low", "sys2", "user", SCHEMA),
        cache_key("openai", "m", "low", "sys", "user2", SCHEMA),
        cache_key("openai", "m", "low", "sys", "user", {"type": "array"}),
    }
    assert len(keys) == 7
    assert cache_key(*base) == cache_key(
        "openai", "m", "low", "sys", "user", dict(reversed(SCHEMA.items()))
    )


@pytest.mark.parametrize(
    ("endpoint", "api"), [(None, None), ("http://127.0.0.1:8000/v1", None), (None, "responses"),
                          ("", "chat")],
)  # fmt: skip
def test_cache_key_is_the_sha256_of_the_canonical_json(
    endpoint: str | None, api: str | None
) -> None:
    """Stored answers are found by this key: it must stay what the docstring says, whatever
    shortcut computes it (users' caches outlive releases)."""
    system, schema = "Relations: “regulates” ✓\n" * 500, dict(reversed(SCHEMA.items()))
    payload = {"provider": "openai", "model": "m", "effort": None, "system": system,
               "user": "TNF regulates IL-6 ☃", "schema": schema}  # fmt: skip
    payload |= {k: v for k, v in (("endpoint", endpoint), ("api", api)) if v is not None}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for _ in range(2):  # the second time from the remembered prefix
        key = cache_key("openai", "m", None, system, payload["user"], schema, endpoint, api)
        assert key == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_the_key_never_reaches_the_cache(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    from tests.fakes.llm_server import FAKE_KEY

    path = tmp_path / "cache.sqlite"
    for name in PROVIDER_NAMES:
        llm_server.provider(name, "model-x", cache=path).complete(REQUEST)
    assert len(SQLiteCache(path)) == 3
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())  # the database and its WAL
    assert b"mentions" in raw
    assert FAKE_KEY.encode() not in raw


def _write_many(path: str, start: int) -> None:
    from goldloop.llm import CachedAnswer

    cache = SQLiteCache(path)
    for k in range(start, start + 100):
        cache.put(f"key{k}", CachedAnswer(f"text{k}", {"input_tokens": k}))


def test_cache_is_shared_safely_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "cache.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(path, start)) for start in (0, 100, 200)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    cache = SQLiteCache(path)
    assert len(cache) == 300
    hit = cache.get("key250")
    assert hit is not None and hit.text == "text250" and hit.usage == {"input_tokens": 250}


def test_standalone_server_counts_requests() -> None:
    with FakeLLMServer(lambda req: "[]", latency_s=0.01) as server:
        assert server.request_count == 0
        server.provider("anthropic", "m", cache=None)  # building a client sends nothing
        assert server.request_count == 0


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_an_echoed_key_is_masked_in_errors(llm_server: FakeLLMServer, name: str) -> None:
    from tests.fakes.llm_server import FAKE_KEY

    llm_server.fail(401, message=f"Incorrect API key provided: {FAKE_KEY}")
    with pytest.raises(LLMError) as caught:
        llm_server.provider(name, "model-x", cache=None).complete(REQUEST)
    assert FAKE_KEY not in str(caught.value)
    assert "Incorrect API key provided: ***" in str(caught.value)
    assert llm_server.request_count == 1  # not retried


def test_gemini_effort_is_checked_before_any_call(llm_server: FakeLLMServer) -> None:
    with pytest.raises(LLMError, match="not a thinking level"):
        llm_server.provider("gemini", "model-x", effort="extreme", cache=None)
    budget = llm_server.provider("gemini", "model-x", effort="512", cache=None)
    budget.complete(REQUEST)
    assert llm_server.requests[-1].effort == "512"


class BrokenCache:
    def get(self, key: str) -> None:
        raise OSError("disk on fire")

    def put(self, key: str, answer: object) -> None:
        raise OSError("disk on fire")


def test_a_broken_cache_does_not_lose_the_answer(llm_server: FakeLLMServer) -> None:
    response = llm_server.provider("openai", "model-x", cache=BrokenCache()).complete(REQUEST)
    assert response.text == '{"mentions": []}' and not response.cached


def test_an_answer_the_caller_cannot_use_is_not_cached(
    llm_server: FakeLLMServer, cache: SQLiteCache
) -> None:
    llm_server.answer = lambda req: "Sorry, no JSON today."
    provider = llm_server.provider("anthropic", "model-x", cache=cache)
    response = provider.complete(REQUEST, usable=lambda text: text.startswith("{"))
    assert response.text == "Sorry, no JSON today." and len(cache) == 0
    provider.complete(REQUEST, usable=lambda text: True)
    assert len(cache) == 1 and llm_server.request_count == 2


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_retry_after_is_honoured(llm_server: FakeLLMServer, name: str) -> None:
    import time

    llm_server.fail(429, retry_after_s=0.4)
    retry = RetryPolicy(attempts=3, initial_s=0.01, max_s=5, timeout_s=10)
    provider = llm_server.provider(name, "model-x", cache=None, retry=retry)
    start = time.perf_counter()
    provider.complete(REQUEST)
    assert time.perf_counter() - start >= 0.4  # not the 10 ms backoff
    assert llm_server.request_count == 2


def test_a_failing_script_is_reported_by_the_fake(llm_server: FakeLLMServer) -> None:
    def broken(request: object) -> str:
        raise KeyError("no answer scripted")

    llm_server.answer = broken
    with pytest.raises(LLMError, match="fake answer failed"):
        llm_server.provider("openai", "model-x", cache=None).complete(REQUEST)


def test_two_servers_with_the_same_model_name_miss_each_others_cache(
    llm_server: FakeLLMServer, cache: SQLiteCache
) -> None:
    with FakeLLMServer(lambda req: '{"mentions": ["other"]}') as other:
        here = llm_server.provider("openai", "same-model", cache=cache)
        there = other.provider("openai", "same-model", cache=cache)
        assert here.tag != there.tag and here.key(REQUEST) != there.key(REQUEST)
        assert not here.complete(REQUEST).cached
        answer = there.complete(REQUEST)
        assert not answer.cached and answer.text == '{"mentions": ["other"]}'
        assert (llm_server.request_count, other.request_count) == (1, 1)
        assert here.complete(REQUEST).cached and there.complete(REQUEST).cached
        assert len(cache) == 2


def test_official_endpoints_keep_their_keys_and_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pinned before the endpoint joined the key: cached answers and model versions still match.
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    pinned = "20cb25689835f6183a1a8155ab27e76d88d2deb515bbb87804be2985afa231c0"
    for base_url in (None, "https://api.openai.com/v1", "HTTPS://api.openai.com:443/v1/"):
        provider = make_provider(
            "openai",
            "gpt-5-mini",
            effort="low",
            base_url=base_url,
            cache=None,
            api="chat",
            settings=Settings.from_env(),
        )
        assert provider.tag == "gpt-5-mini@low"
        assert provider.key(REQUEST) == pinned
        # The Responses API, the default there, is another request: another key, the same tag.
        responses = make_provider(
            "openai",
            "gpt-5-mini",
            effort="low",
            base_url=base_url,
            cache=None,
            settings=Settings.from_env(),
        )
        assert responses.api == "responses" and responses.tag == "gpt-5-mini@low"
        assert responses.key(REQUEST) != pinned
        # What would be sent (OpenAI's endpoint cannot be reached here): its prompt-cache hint.
        for official in (provider, responses):
            assert official._params(REQUEST)["prompt_cache_key"].startswith("goldloop-")
    assert cache_key("openai", "gpt-5-mini", "low", REQUEST.system, REQUEST.user, SCHEMA) == pinned


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://user:secret@LocalHost:8000/v1/?api_key=secret#x", "http://localhost:8000/v1"),
        ("https://llm.example.org:443/", "https://llm.example.org"),
        ("http://[::1]:80/v1", "http://[::1]/v1"),
    ],
)
def test_the_endpoint_is_normalised_without_credentials_or_query(
    monkeypatch: pytest.MonkeyPatch, url: str, endpoint: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    provider = make_provider("openai", "m", base_url=url, cache=None, settings=Settings.from_env())
    assert provider.endpoint == endpoint and provider.tag == f"m@{endpoint}"
    assert "secret" not in provider.tag and "secret" not in provider.label


def test_a_base_url_from_the_sdk_variable_is_part_of_the_identity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    assert (
        make_provider("anthropic", "c", cache=None, settings=Settings.from_env()).tag
        == "c@http://127.0.0.1:9"
    )


def test_a_base_url_that_is_not_a_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(LLMError, match="http"):
        make_provider(
            "openai", "m", base_url="localhost:8000", cache=None, settings=Settings.from_env()
        )


def test_credentials_in_the_base_url_are_masked_in_errors(llm_server: FakeLLMServer) -> None:
    url = llm_server.base_url("openai").replace("http://", "http://user:hunter22@")
    llm_server.fail(400, message=f"bad request to {url}")
    with pytest.raises(LLMError) as caught:
        make_provider(
            "openai", "m", base_url=url, cache=None, settings=Settings.from_env()
        ).complete(REQUEST)
    assert "hunter22" not in str(caught.value) and "user:***@" in str(caught.value)
    assert "HTTP 400" in str(caught.value)


def test_keys_of_existing_requests_do_not_change(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pinned with the code before the Responses API and prompt caching: Anthropic, Gemini and
    # chat completions on an OpenAI-compatible server keep every cached answer.
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, "k")
    for name in ("ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    pinned = {
        "anthropic": "bbc0b59e27f6d83ab846bcefc53ea04e341178e2e748871b1b7b86e069eea35b",
        "gemini": "7243a232c06ec7d20727e4c871b8ef3c5edde026117e0949a9e1959c2d1655d6",
    }
    for name, key in pinned.items():
        provider = make_provider(
            name, "model-x", effort="low", cache=None, settings=Settings.from_env()
        )
        assert provider.key(REQUEST) == key and provider.tag == "model-x@low"
    compat = make_provider(
        "openai", "m", base_url="http://127.0.0.1:8000/v1", cache=None, settings=Settings.from_env()
    )
    assert compat.api == "chat"
    assert compat.key(REQUEST) == "53c5d0e16698cfdbc6fa033a0033304fa50138048dc1422f83fa40362924736e"


def test_the_responses_api_end_to_end(llm_server: FakeLLMServer, cache: SQLiteCache) -> None:
    llm_server.answer = lambda req: Reply('{"mentions": []}', output_tokens=5, reasoning_tokens=3)
    provider = llm_server.provider("openai", "m", effort="low", cache=cache, api="responses")
    chat = llm_server.provider("openai", "m", effort="low", cache=cache)
    assert chat.api == "chat" and provider.key(REQUEST) != chat.key(REQUEST)
    assert provider.tag == chat.tag  # the same model answers: the same annotator
    response = provider.complete(REQUEST)
    seen = llm_server.requests[-1]
    assert seen.api == "openai-responses"
    assert (seen.system, seen.user, seen.schema, seen.max_tokens, seen.effort) == (
        REQUEST.system, REQUEST.user, SCHEMA, 200, "low"
    )  # fmt: skip
    assert seen.body["text"]["format"]["type"] == "json_schema"
    assert "prompt_cache_key" not in seen.body  # a server of one's own: OpenAI's hint only
    assert response.text == '{"mentions": []}' and not response.truncated
    assert response.usage["output_tokens"] == 8 and response.usage["reasoning_tokens"] == 3
    assert provider.complete(REQUEST).cached and llm_server.request_count == 1
    # A truncated answer is flagged (status incomplete, max_output_tokens) and not cached.
    llm_server.answer = lambda req: Reply('{"mentions": [', truncated=True)
    short = LLMRequest(REQUEST.system, "Abstract:\nother", SCHEMA, 200)
    assert provider.complete(short).truncated and len(cache) == 1


CATALOG = "".join(f"- relation {k}: a definition that fills the catalog.\n" for k in range(200))


def requests_sharing(system: str, n: int) -> list[LLMRequest]:
    return [
        LLMRequest(system, f"Abstract:\nDocument {k} says TNF activates IL-6.", SCHEMA, 200)
        for k in range(n)
    ]


@pytest.mark.parametrize(
    ("name", "api"),
    [("openai", "chat"), ("openai", "responses"), ("anthropic", None), ("gemini", None)],
)
def test_the_shared_catalog_is_read_from_the_prompt_cache(
    llm_server: FakeLLMServer, name: str, api: str | None
) -> None:
    provider = llm_server.provider(name, "m", cache=None, api=api)
    usages = [provider.complete(r).usage for r in requests_sharing(CATALOG, 4)]
    catalog_tokens = len(CATALOG) // 4
    assert catalog_tokens > 2000
    first, later = usages[0], usages[1:]
    assert "cached_input_tokens" not in first
    if name == "anthropic":  # the first request writes the marked system block
        assert first["cache_write_input_tokens"] == catalog_tokens
    for usage in later:
        cached = usage["cached_input_tokens"]
        assert cached / usage["input_tokens"] >= 0.9
        if name == "anthropic":  # exactly the block marked cache_control
            assert cached == catalog_tokens
        else:  # the longest shared prefix, from 1,024 tokens in steps of 128
            assert (
                cached - 1024
            ) % 128 == 0 and catalog_tokens - 128 < cached <= catalog_tokens + 3


def test_a_varying_prefix_or_a_missing_marker_is_not_cached(llm_server: FakeLLMServer) -> None:
    openai_provider = llm_server.provider("openai", "m", cache=None)
    varying = [
        LLMRequest(f"Run {k}.\n" + CATALOG, f"Abstract:\nDocument {k}.", SCHEMA, 200)
        for k in range(3)
    ]
    assert all("cached_input_tokens" not in openai_provider.complete(r).usage for r in varying)
    short = LLMRequest("You annotate.", "Abstract:\nshort.", SCHEMA, 200)
    for _ in range(2):  # under 1,024 tokens nothing is cached
        assert "cached_input_tokens" not in openai_provider.complete(short).usage
    # Anthropic without cache_control (the SDK called directly): never a cache read.
    import anthropic

    client = anthropic.Anthropic(base_url=llm_server.base_url("anthropic"), max_retries=0)
    for k in range(3):
        message = client.messages.create(
            model="m", system=CATALOG, max_tokens=100,
            messages=[{"role": "user", "content": f"Abstract:\nDocument {k}."}],
        )  # fmt: skip
        assert message.usage.cache_read_input_tokens == 0
        assert message.usage.cache_creation_input_tokens == 0


def test_gemini_makes_an_explicit_cache_for_a_large_run_and_deletes_it(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "prices.json"
    table.write_text(
        '{"date": "t", "sources": {}, "providers": {"gemini": {"batch_discount": 0.5, "models": '
        '{"m": {"input": 1.0, "cached_input": 0.1, "output": 2.0, "cache_storage": 0.8, '
        '"cache_min_tokens": 1024}}}}}'
    )
    monkeypatch.setenv("GOLDLOOP_PRICES", str(table))
    # (1.0 input + 0.8 storage) / (1.0 - 0.1) saved per request: an explicit cache pays from 2.
    provider = llm_server.provider("gemini", "m", cache=None)
    requests = requests_sharing(CATALOG, 3)
    with provider.prompt_cache(CATALOG, 1):
        assert "cached_input_tokens" not in provider.complete(requests[0]).usage
    assert not llm_server.context_caches and llm_server.requests[-1].cached_content is None
    with provider.prompt_cache(CATALOG, 2):
        (name,) = llm_server.context_caches
        usage = provider.complete(requests[1]).usage
        seen = llm_server.requests[-1]
        assert seen.cached_content == name and "systemInstruction" not in seen.body
        assert usage["cached_input_tokens"] == len(CATALOG) // 4
    assert llm_server.deleted_caches == [name] and not llm_server.context_caches
    with provider.prompt_cache(CATALOG[:1000], 5):  # under the model's smallest cache
        assert not llm_server.context_caches
