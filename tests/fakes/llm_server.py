"""A fake LLM provider on 127.0.0.1 speaking OpenAI, Anthropic and Gemini wire formats.

The real SDKs are pointed at it by base URL, so their request building, response parsing, stop
reasons and usage objects all run for real. Answers are scripted by a function of the request;
latency, HTTP errors (429, 500, ...) and truncation can be injected, and every request is counted
(``request_count``; ``max_in_flight`` is the most requests it held at once; both also at
``GET /_fake/stats`` when the server runs in another process).

    with FakeLLMServer(lambda req: '{"mentions": []}') as server:
        provider = server.provider("anthropic", "claude-x", cache=None)

Endpoints: ``POST /v1/chat/completions`` and ``POST /v1/responses`` (OpenAI), ``POST /v1/messages``
(Anthropic), ``POST /{v1,v1beta}/models/{model}:generateContent`` (Gemini; google-genai uses ``v1``
by default), and each provider's batch API: OpenAI's ``/v1/files`` + ``/v1/batches``, Anthropic's
``/v1/messages/batches``, Gemini's ``models/{model}:batchGenerateContent`` + ``batches/{id}``, with
Gemini's ``cachedContents``.

Prompt caching is computed the way each provider documents it, so a missing marker or a prefix
that varies shows up as uncached tokens (tokens are ~4 characters; see :class:`PromptCaches`):
OpenAI (both APIs) and Gemini's implicit cache count the longest prompt prefix shared with an
earlier request of the same model, from 1,024 tokens in steps of 128; Anthropic reads only a
prefix ending at a block marked ``cache_control``, and only once an earlier request wrote it;
Gemini's explicit cache counts the cached content. Batch jobs end after ``batch_polls`` status
reads; ``batch_outcome`` may make single requests error or expire there.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import hashlib
import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAKE_KEY = "test-key-not-a-secret"
KEY_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
BASE_URL_ENV = (
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_BASE_URL",
)
_GEMINI_PATH = re.compile(r"^/(v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):generateContent$")
_GEMINI_BATCH_PATH = re.compile(
    r"^/(v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):batchGenerateContent$"
)
_GEMINI_RESOURCE = re.compile(r"^/(v1|v1beta|v1alpha)/(?P<name>(batches|cachedContents)/[^/:]+)$")
_GEMINI_CACHES = re.compile(r"^/(v1|v1beta|v1alpha)/cachedContents$")
# The documented prompt caching rules (OpenAI: from 1,024 tokens, in steps of 128; Anthropic's
# smallest cacheable prefix for its Sonnet models is 1,024 tokens too).
CACHE_MIN_TOKENS = 1024
CACHE_STEP_TOKENS = 128


@dataclass
class FakeRequest:
    """What the fake understood of one request, in one vocabulary across providers."""

    provider: str
    model: str
    system: str
    user: str
    schema: dict[str, Any] | None
    max_tokens: int | None
    effort: str | None
    body: dict[str, Any] = field(repr=False)
    # Anthropic: the prompt up to the last block marked cache_control (None: no marker).
    cache_prefix: str | None = None
    # Gemini: the explicit context cache the request names.
    cached_content: str | None = None
    api: str = ""


@dataclass
class Reply:
    """A scripted answer. Token counts default to ~4 characters per token.

    An answer longer than the request's token limit is cut there and marked truncated, as a real
    provider would; ``truncated=True`` forces the marker. ``status`` (e.g. 500) answers with that
    HTTP error and the provider's error body instead, every time the script gives it.
    """

    text: str = ""
    truncated: bool = False
    status: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int = 0


Answer = Callable[[FakeRequest], "Reply | str"]


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def empty_answer(_: FakeRequest) -> str:
    return '{"mentions": []}'


class PromptCaches:
    """Which prompt prefixes each provider has seen, and what a new request reads from them."""

    def __init__(self) -> None:
        self._prefixes: dict[tuple[str, str], set[bytes]] = {}
        self._marked: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()

    def shared_prefix(self, scope: tuple[str, str], prompt: str) -> int:
        """Tokens of the longest prefix of ``prompt`` an earlier request of ``scope`` shared,
        counted from 1,024 tokens in steps of 128 (0 below that); ``prompt`` is remembered."""
        digest = hashlib.blake2b(digest_size=16)
        boundaries = []
        done = 0
        for size in itertools.count(CACHE_MIN_TOKENS, CACHE_STEP_TOKENS):
            if size * 4 > len(prompt):
                break
            digest.update(prompt[done : size * 4].encode("utf-8"))
            done = size * 4
            boundaries.append((size, digest.copy().digest()))
        with self._lock:
            seen = self._prefixes.setdefault(scope, set())
            shared = 0
            for size, key in boundaries:
                if key not in seen:
                    break
                shared = size
            seen.update(key for _, key in boundaries)
        return shared

    def marked_prefix(self, scope: tuple[str, str], prefix: str) -> tuple[int, int]:
        """``(read, written)`` tokens for a prefix ending at a ``cache_control`` mark: written by
        the first request with it, read by every later one (none under 1,024 tokens)."""
        size = len(prefix) // 4
        if size < CACHE_MIN_TOKENS:
            return 0, 0
        with self._lock:
            seen = self._marked.setdefault(scope, set())
            if prefix in seen:
                return size, 0
            seen.add(prefix)
            return 0, size


class FakeLLMServer:
    """The server; ``answer`` and ``latency_s`` may be changed while it runs."""

    def __init__(
        self, answer: Answer = empty_answer, *, latency_s: float = 0.0, host: str = "127.0.0.1"
    ) -> None:
        """``host``: the address to listen on; containers reach the host on its Docker bridge."""
        self.answer = answer
        self.latency_s = latency_s
        self.requests: list[FakeRequest] = []
        self.request_count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        # Requests held now, by the client's address (which container of a stack is asking).
        self.in_flight_from: Counter[str] = Counter()
        # Batch jobs: status reads before a job ends, and a per-request outcome script
        # (None: answered; "errored" or "expired": no answer for it in that job).
        self.batch_polls = 0
        # Seconds a job-creating request waits, the job already made, before its answer.
        self.batch_create_delay_s = 0.0
        self.batch_outcome: Callable[[FakeRequest], str | None] = lambda _: None
        self.batches: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.context_caches: dict[str, str] = {}
        self.deleted_caches: list[str] = []
        # Every request answered, online or in a batch, by (provider, user prompt).
        self.answered: Counter[tuple[str, str]] = Counter()
        self.usage_totals: Counter[str] = Counter()
        self.caches = PromptCaches()
        self._ids = itertools.count(1)
        self._failures: list[tuple[int, str | None, float]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def base_url(self, provider: str) -> str:
        """The base URL each SDK wants: OpenAI's includes ``/v1``, the others add their own."""
        return f"{self.url}/v1" if provider == "openai" else self.url

    def provider(self, name: str, model: str, **options: Any) -> Any:
        """A real goldloop provider pointed at this server, retrying fast, with the settings of
        the test's environment (the fixture's dummy keys) unless given."""
        from goldloop.llm import RetryPolicy, make_provider
        from goldloop.settings import Settings

        options.setdefault(
            "retry", RetryPolicy(attempts=4, initial_s=0.01, max_s=0.05, timeout_s=10)
        )
        options.setdefault("settings", Settings.from_env())
        return make_provider(name, model, base_url=self.base_url(name), **options)

    def fail(
        self, status: int, times: int = 1, message: str | None = None, retry_after_s: float = 0
    ) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` and the provider's error body
        (with ``Retry-After`` on a 429)."""
        with self._lock:
            self._failures.extend([(status, message, retry_after_s)] * times)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.request_count = 0
            self.max_in_flight = 0
            self._failures.clear()
            self.answered.clear()
            self.usage_totals.clear()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "request_count": self.request_count,
                "max_in_flight": self.max_in_flight,
                "batches": len(self.batches),
                "batch_requests": sum(len(b["requests"]) for b in self.batches.values()),
                "answered_twice": sum(1 for n in self.answered.values() if n > 1),
                "usage": dict(self.usage_totals),
            }

    def new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids):06d}"

    def start(self) -> FakeLLMServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _arrive(self, client: str) -> tuple[int, str | None, float] | None:
        """Count a request; the status of an injected failure, if one is due."""
        with self._lock:
            self.request_count += 1
            self.in_flight += 1
            self.in_flight_from[client] += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._failures.pop(0) if self._failures else None

    def _leave(self, client: str) -> None:
        with self._lock:
            self.in_flight -= 1
            self.in_flight_from[client] -= 1

    def _respond(self, provider: str, request: FakeRequest) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(request)
        reply = self.answer(request)
        if isinstance(reply, str):
            reply = Reply(reply)
        if reply.status is not None:
            return reply.status, _error_body(provider, reply.status, reply.text or None)
        text, truncated = reply.text, reply.truncated
        limit = request.max_tokens
        if limit is not None and (reply.output_tokens or tokens(text)) > limit:
            text, truncated = text[: limit * 4], True
        usage = {
            "input": reply.input_tokens or tokens(request.system + request.user),
            "output": reply.output_tokens or tokens(text),
            "reasoning": reply.reasoning_tokens,
            "written": 0,
        }
        for key, value in self._cache_usage(provider, request).items():
            usage[key] = min(value, usage["input"])
        with self._lock:
            self.answered[(provider, request.user)] += 1
            self.usage_totals.update({k: v for k, v in usage.items() if v})
        return 200, _BODIES[request.api or provider](request.model, text, truncated, usage)

    def _cache_usage(self, provider: str, request: FakeRequest) -> dict[str, int]:
        """Cached (and, for Anthropic, cache-written) input tokens of ``request``."""
        scope = (provider, request.model)
        if provider == "anthropic":
            if request.cache_prefix is None:
                return {"cached": 0, "written": 0}
            read, written = self.caches.marked_prefix(scope, request.cache_prefix)
            return {
                "cached": read,
                "written": min(written, tokens(request.system + request.user) - read),
            }
        if request.cached_content is not None:
            return {"cached": tokens(request.system), "written": 0}
        return {"cached": self.caches.shared_prefix(scope, request.system + request.user)}

    # --- batch jobs -----------------------------------------------------------------------------

    def create_batch(
        self, provider: str, items: list[tuple[str, FakeRequest]], extra: dict[str, Any]
    ) -> dict[str, Any]:
        """A new job over ``(id, request)`` pairs; it ends after ``batch_polls`` status reads."""
        prefix = {"openai": "batch_", "anthropic": "msgbatch_", "gemini": "batches/"}[provider]
        job = {
            "id": self.new_id(prefix),
            "provider": provider,
            "requests": items,
            "polls_left": self.batch_polls,
            "results": None,
            "created": int(time.time()),
            **extra,
        }
        with self._lock:
            self.batches[job["id"]] = job
        time.sleep(self.batch_create_delay_s)
        return job

    def poll_batch(self, job_id: str) -> dict[str, Any] | None:
        """The job after one more status read; it is answered when its reads run out."""
        job = self.batches.get(job_id)
        if job is None:
            return None
        with self._lock:
            due = job["results"] is None and job["polls_left"] <= 0
            job["polls_left"] -= 1
        if due:
            results = []
            for key, request in job["requests"]:
                outcome = self.batch_outcome(request)
                if outcome is None:
                    results.append((key, *self._respond(job["provider"], request)))
                else:
                    results.append((key, 0, {"outcome": outcome}))
            job["results"] = results
        return job


# --- request parsing, per provider -------------------------------------------------------------


def _text_of(content: Any) -> str:
    """Message content as a string or as a list of text blocks/parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            _text_of(block.get("text", "")) for block in content if isinstance(block, dict)
        )
    return ""


def _parse_openai(body: dict[str, Any], _: str) -> FakeRequest:
    messages = body.get("messages", [])
    system = "".join(
        _text_of(m["content"]) for m in messages if m.get("role") in ("system", "developer")
    )
    user = "".join(_text_of(m["content"]) for m in messages if m.get("role") == "user")
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    return FakeRequest(
        "openai", body.get("model", ""), system, user, schema,
        body.get("max_completion_tokens") or body.get("max_tokens"), body.get("reasoning_effort"), body,
    )  # fmt: skip


def _parse_responses(body: dict[str, Any], _: str) -> FakeRequest:
    """OpenAI's Responses API: ``instructions`` first, then ``input`` (a string or messages)."""
    given = body.get("input", "")
    messages = given if isinstance(given, list) else [{"role": "user", "content": given}]
    system = str(body.get("instructions") or "") + "".join(
        _text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    user = "".join(_text_of(m.get("content")) for m in messages if m.get("role") == "user")
    text_format = (body.get("text") or {}).get("format") or {}
    return FakeRequest(
        "openai", body.get("model", ""), system, user, text_format.get("schema"),
        body.get("max_output_tokens"), (body.get("reasoning") or {}).get("effort"), body,
        api="openai-responses",
    )  # fmt: skip


def _marked_prefix(body: dict[str, Any]) -> str | None:
    """The prompt text up to and including the last block marked ``cache_control`` (system
    blocks first, then message blocks, as Anthropic orders a prompt)."""
    blocks: list[dict[str, Any]] = []
    system = body.get("system")
    if isinstance(system, list):
        blocks += system
    elif system:
        blocks.append({"text": system})
    for message in body.get("messages", []):
        content = message.get("content")
        blocks += content if isinstance(content, list) else [{"text": content or ""}]
    marked = [i for i, block in enumerate(blocks) if block.get("cache_control")]
    if not marked:
        return None
    return "".join(str(block.get("text", "")) for block in blocks[: marked[-1] + 1])


def _parse_anthropic(body: dict[str, Any], _: str) -> FakeRequest:
    config = body.get("output_config") or {}
    user = "".join(
        _text_of(m["content"]) for m in body.get("messages", []) if m.get("role") == "user"
    )
    return FakeRequest(
        "anthropic", body.get("model", ""), _text_of(body.get("system", "")), user,
        (config.get("format") or {}).get("schema"), body.get("max_tokens"), config.get("effort"), body,
        cache_prefix=_marked_prefix(body),
    )  # fmt: skip


def _gemini_parser(server: FakeLLMServer) -> Callable[[dict[str, Any], str], FakeRequest]:
    def parse(body: dict[str, Any], model: str) -> FakeRequest:
        config = body.get("generationConfig") or {}
        thinking = config.get("thinkingConfig") or {}
        # google-genai 3.6 sends the thinking keys in snake case; the REST docs spell them in camel case.
        effort = next(
            (
                thinking[k]
                for k in ("thinkingLevel", "thinking_level", "thinkingBudget", "thinking_budget")
                if k in thinking
            ),
            None,
        )
        cached = body.get("cachedContent")
        system = _text_of((body.get("systemInstruction") or {}).get("parts", []))
        if cached is not None:
            system = server.context_caches[cached] + system
        return FakeRequest(
            "gemini", model.removeprefix("models/"), system,
            "".join(_text_of(c.get("parts", [])) for c in body.get("contents", [])),
            config.get("responseJsonSchema"), config.get("maxOutputTokens"),
            str(effort).lower() if effort else None, body, cached_content=cached,
        )  # fmt: skip

    return parse


# --- response bodies: each provider's real JSON ------------------------------------------------


def _openai_body(model: str, text: str, truncated: bool, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
            "logprobs": None,
            "finish_reason": "length" if truncated else "stop",
        }],
        "usage": {
            "prompt_tokens": usage["input"],
            "completion_tokens": usage["output"] + usage["reasoning"],
            "total_tokens": usage["input"] + usage["output"] + usage["reasoning"],
            "prompt_tokens_details": {"cached_tokens": usage["cached"], "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": usage["reasoning"], "audio_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": None,
    }  # fmt: skip


def _anthropic_body(
    model: str, text: str, truncated: bool, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "max_tokens" if truncated else "end_turn",
        "stop_sequence": None,
        "usage": {
            # Anthropic counts here only the tokens after the last cache breakpoint.
            "input_tokens": usage["input"] - usage["cached"] - usage["written"],
            "output_tokens": usage["output"] + usage["reasoning"],
            "cache_creation_input_tokens": usage["written"],
            "cache_read_input_tokens": usage["cached"],
            "service_tier": "standard",
        },
    }


def _gemini_body(model: str, text: str, truncated: bool, usage: dict[str, int]) -> dict[str, Any]:
    counts = {
        "promptTokenCount": usage["input"],
        "candidatesTokenCount": usage["output"],
        "totalTokenCount": usage["input"] + usage["output"] + usage["reasoning"],
    }
    if usage["reasoning"]:
        counts["thoughtsTokenCount"] = usage["reasoning"]
    if usage["cached"]:
        counts["cachedContentTokenCount"] = usage["cached"]
    return {
        "candidates": [{
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "MAX_TOKENS" if truncated else "STOP",
            "index": 0,
        }],
        "usageMetadata": counts,
        "modelVersion": model,
        "responseId": "fake-response",
    }  # fmt: skip


def _responses_body(
    model: str, text: str, truncated: bool, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "error": None,
        "instructions": None,
        "output": [{
            "type": "message",
            "id": "msg_fake",
            "status": "incomplete" if truncated else "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
        }],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": usage["input"],
            "input_tokens_details": {"cached_tokens": usage["cached"], "cache_write_tokens": 0},
            "output_tokens": usage["output"] + usage["reasoning"],
            "output_tokens_details": {"reasoning_tokens": usage["reasoning"]},
            "total_tokens": usage["input"] + usage["output"] + usage["reasoning"],
        },
    }  # fmt: skip


_BODIES: dict[str, Callable[[str, str, bool, dict[str, int]], dict[str, Any]]] = {
    "openai": _openai_body,
    "openai-responses": _responses_body,
    "anthropic": _anthropic_body,
    "gemini": _gemini_body,
}
_STATUS_NAMES = {
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    400: "INVALID_ARGUMENT",
}
_ANTHROPIC_ERRORS = {
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
    400: "invalid_request_error",
}


def _error_body(provider: str, status: int, message: str | None) -> dict[str, Any]:
    message = message or f"injected HTTP {status}"
    if provider == "anthropic":
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"), "message": message},
        }
    if provider == "gemini":
        return {
            "error": {
                "code": status,
                "message": message,
                "status": _STATUS_NAMES.get(status, "UNKNOWN"),
            }
        }
    return {
        "error": {
            "message": message,
            "type": "server_error" if status >= 500 else "rate_limit",
            "code": None,
        }
    }


def _handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    parse_gemini = _gemini_parser(server)
    online: dict[str, tuple[str, Callable[[dict[str, Any], str], FakeRequest]]] = {
        "/v1/chat/completions": ("openai", _parse_openai),
        "/v1/responses": ("openai", _parse_responses),
        "/v1/messages": ("anthropic", _parse_anthropic),
    }

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/_fake/stats":  # for a server run in another process
                self._send(200, server.stats())
            elif path.startswith("/v1/files/") and path.endswith("/content"):
                data = server.files.get(path.split("/")[3])
                if data is None:
                    self._send(404, _error_body("openai", 404, f"no file {path}"))
                else:
                    self._send_bytes(200, data, "application/octet-stream")
            elif path.startswith("/v1/batches/batch_"):  # Gemini's batches/<id> share /v1
                job = server.poll_batch(path.split("/")[3])
                self._send(*((200, _openai_batch(server, job)) if job else _missing("openai")))
            elif m := re.fullmatch(r"/v1/messages/batches/([^/]+)(/results)?", path):
                job = server.poll_batch(m[1]) if not m[2] else server.batches.get(m[1])
                if job is None:
                    self._send(*_missing("anthropic"))
                elif m[2]:
                    lines = _anthropic_results(job)
                    self._send_bytes(200, lines.encode("utf-8"), "application/binary")
                else:
                    self._send(200, _anthropic_batch(server, job))
            elif (m := _GEMINI_RESOURCE.match(path)) and m["name"].startswith("batches/"):
                job = server.poll_batch(m["name"])
                self._send(*((200, _gemini_batch(job)) if job else _missing("gemini")))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_DELETE(self) -> None:
            m = _GEMINI_RESOURCE.match(self.path.split("?", 1)[0])
            if m and server.context_caches.pop(m["name"], None) is not None:
                server.deleted_caches.append(m["name"])
                self._send(200, {})
            else:
                self._send(*_missing("gemini"))

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if path == "/v1/files":
                self._send(200, _store_file(server, self.headers.get("Content-Type", ""), raw))
                return
            body = json.loads(raw or b"{}")
            if path == "/v1/batches":
                self._send(*_create_openai_batch(server, body))
                return
            if path == "/v1/messages/batches":
                self._send(*_create_anthropic_batch(server, body))
                return
            if m := _GEMINI_BATCH_PATH.match(path):
                self._send(*_create_gemini_batch(server, body, m["model"], parse_gemini))
                return
            if _GEMINI_CACHES.match(path):
                self._send(200, _create_context_cache(server, body))
                return
            gemini = _GEMINI_PATH.match(path)
            if path in online:
                provider, parse = online[path]
                model = ""
            elif gemini:
                provider, parse, model = "gemini", parse_gemini, gemini["model"]
            else:
                self._send(404, {"error": {"message": f"no route {path}"}})
                return
            client = self.client_address[0]
            failure = server._arrive(client)
            try:
                if server.latency_s:
                    time.sleep(server.latency_s)
                if failure is not None:
                    status, message, retry_after = failure
                    self._send(status, _error_body(provider, status, message), retry_after)
                else:
                    try:
                        status, payload = server._respond(provider, parse(body, model))
                    except Exception as exc:  # a bug in the test's script: say so to the client
                        self._send(500, _error_body(provider, 500, f"fake answer failed: {exc!r}"))
                        return
                    self._send(status, payload)
            finally:
                server._leave(client)

        def _send(self, status: int, payload: dict[str, Any], retry_after_s: float = 0) -> None:
            data = json.dumps(payload).encode("utf-8")
            self._send_bytes(status, data, "application/json", retry_after_s)

        def _send_bytes(
            self, status: int, data: bytes, content_type: str, retry_after_s: float = 0
        ) -> None:
            # The client may have given up waiting (the timeout tests): nothing to answer then.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", f"{retry_after_s:g}")
                self.end_headers()
                self.wfile.write(data)

    return Handler


def _missing(provider: str) -> tuple[int, dict[str, Any]]:
    return 404, _error_body(provider, 404, "no such resource")


# --- batch APIs, per provider --------------------------------------------------------------------


def _store_file(server: FakeLLMServer, content_type: str, raw: bytes) -> dict[str, Any]:
    """OpenAI's file upload (multipart/form-data with ``purpose`` and ``file``)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    fields = {
        part.get_param("name", header="content-disposition"): part
        for part in message.iter_parts()  # type: ignore[attr-defined,unused-ignore]
    }
    data = bytes(fields["file"].get_payload(decode=True))
    file_id = server.new_id("file-")
    server.files[file_id] = data
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(data),
        "created_at": int(time.time()),
        "filename": fields["file"].get_filename() or "upload.jsonl",
        "purpose": bytes(fields["purpose"].get_payload(decode=True)).decode(),
        "status": "processed",
    }


def _create_openai_batch(server: FakeLLMServer, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    data = server.files.get(body.get("input_file_id", ""))
    if data is None:
        return _missing("openai")
    parse = {"/v1/chat/completions": _parse_openai, "/v1/responses": _parse_responses}
    items = []
    for line in data.decode("utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("url") != body.get("endpoint") or entry["url"] not in parse:
            return 400, _error_body("openai", 400, f"line url {entry.get('url')} != endpoint")
        items.append((entry["custom_id"], parse[entry["url"]](entry["body"], "")))
    job = server.create_batch(
        "openai", items, {"endpoint": body["endpoint"], "input": body["input_file_id"]}
    )
    return 200, _openai_batch(server, job)


def _openai_batch(server: FakeLLMServer, job: dict[str, Any]) -> dict[str, Any]:
    results = job["results"]
    state: dict[str, Any] = {"status": "in_progress", "output_file_id": None, "error_file_id": None}
    counts = {"total": len(job["requests"]), "completed": 0, "failed": 0}
    if results is not None:
        good = [r for r in results if r[1] == 200]
        bad = [r for r in results if r[1] != 200]
        counts.update(completed=len(good), failed=len(bad))
        expired = any(r[2].get("outcome") == "expired" for r in bad)
        state["status"] = "expired" if expired else "completed"
        if "output_file" not in job:
            job["output_file"] = _openai_file(server, good, job)
            job["error_file"] = _openai_file(server, bad, job)
        state.update(output_file_id=job["output_file"], error_file_id=job["error_file"])
    return {
        "id": job["id"], "object": "batch", "endpoint": job["endpoint"], "errors": None,
        "input_file_id": job["input"], "completion_window": "24h", "created_at": job["created"],
        "request_counts": counts, "metadata": None, **state,
    }  # fmt: skip


def _openai_file(server: FakeLLMServer, results: list[Any], job: dict[str, Any]) -> str | None:
    """An output or error file of OpenAI's batch format; ``None`` when it would be empty."""
    if not results:
        return None
    lines = []
    for key, status, payload in results:
        line: dict[str, Any] = {"id": server.new_id("batch_req_"), "custom_id": key}
        if status == 200:
            line.update(
                response={"status_code": 200, "request_id": "req", "body": payload}, error=None
            )
        elif payload.get("outcome") == "expired":
            line.update(
                response=None,
                error={
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired.",
                },
            )
        elif payload.get("outcome"):
            body = _error_body("openai", 500, "injected batch failure")
            line.update(
                response={"status_code": 500, "request_id": "req", "body": body}, error=None
            )
        else:
            line.update(
                response={"status_code": status, "request_id": "req", "body": payload}, error=None
            )
        lines.append(json.dumps(line))
    file_id = server.new_id("file-")
    server.files[file_id] = ("\n".join(lines) + "\n").encode("utf-8")
    return file_id


def _create_anthropic_batch(
    server: FakeLLMServer, body: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    items = []
    for entry in body.get("requests", []):
        if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", entry.get("custom_id", "")):
            return 400, _error_body("anthropic", 400, f"bad custom_id {entry.get('custom_id')!r}")
        items.append((entry["custom_id"], _parse_anthropic(entry["params"], "")))
    return 200, _anthropic_batch(server, server.create_batch("anthropic", items, {}))


def _anthropic_batch(server: FakeLLMServer, job: dict[str, Any]) -> dict[str, Any]:
    results = job["results"]
    counts = {
        "processing": len(job["requests"]),
        "succeeded": 0,
        "errored": 0,
        "canceled": 0,
        "expired": 0,
    }
    if results is not None:
        outcomes = Counter(
            "succeeded" if status == 200 else payload.get("outcome", "errored")
            for _, status, payload in results
        )
        counts.update(processing=0, **outcomes)
    ended = results is not None
    return {
        "id": job["id"], "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": counts, "ended_at": _iso(time.time()) if ended else None,
        "created_at": _iso(job["created"]), "expires_at": _iso(job["created"] + 86400),
        "archived_at": None, "cancel_initiated_at": None,
        "results_url": f"{server.url}/v1/messages/batches/{job['id']}/results" if ended else None,
    }  # fmt: skip


def _anthropic_results(job: dict[str, Any]) -> str:
    lines = []
    for key, status, payload in job["results"] or []:
        if status == 200:
            result: dict[str, Any] = {"type": "succeeded", "message": payload}
        elif payload.get("outcome") == "expired":
            result = {"type": "expired"}
        else:
            error = (
                payload
                if "error" in payload
                else _error_body("anthropic", 500, "injected batch failure")
            )
            result = {"type": "errored", "error": error}
        lines.append(json.dumps({"custom_id": key, "result": result}))
    return "\n".join(lines) + "\n"


def _create_gemini_batch(
    server: FakeLLMServer,
    body: dict[str, Any],
    model: str,
    parse: Callable[[dict[str, Any], str], FakeRequest],
) -> tuple[int, dict[str, Any]]:
    batch = body.get("batch") or {}
    entries = (((batch.get("inputConfig") or {}).get("requests") or {}).get("requests")) or []
    items = [
        ((entry.get("metadata") or {}).get("key", ""), parse(entry.get("request", {}), model))
        for entry in entries
    ]
    job = server.create_batch(
        "gemini", items, {"model": model, "display": batch.get("displayName")}
    )
    return 200, _gemini_batch(job)


def _gemini_batch(job: dict[str, Any]) -> dict[str, Any]:
    """A batch as Gemini answers it: a long-running operation whose metadata is the batch."""
    results = job["results"]
    metadata: dict[str, Any] = {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
        "model": f"models/{job['model']}", "displayName": job["display"], "name": job["id"],
        "createTime": _iso(job["created"]), "updateTime": _iso(time.time()),
        "state": "BATCH_STATE_RUNNING" if results is None else "BATCH_STATE_SUCCEEDED",
    }  # fmt: skip
    if results is not None:
        responses = []
        for key, status, payload in results:
            if status == 200:
                responses.append({"response": payload, "metadata": {"key": key}})
            else:
                code = 4 if payload.get("outcome") == "expired" else 13
                responses.append(
                    {
                        "error": {"code": code, "message": f"injected: {payload}"},
                        "metadata": {"key": key},
                    }
                )
        metadata["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
        metadata["endTime"] = _iso(time.time())
    return {"name": job["id"], "metadata": metadata, "done": results is not None}


def _create_context_cache(server: FakeLLMServer, body: dict[str, Any]) -> dict[str, Any]:
    system = _text_of((body.get("systemInstruction") or {}).get("parts", []))
    contents = "".join(_text_of(c.get("parts", [])) for c in body.get("contents") or [])
    name = server.new_id("cachedContents/")
    server.context_caches[name] = system + contents
    now = time.time()
    return {
        "name": name, "model": body.get("model", ""), "displayName": body.get("displayName", ""),
        "createTime": _iso(now), "updateTime": _iso(now), "expireTime": _iso(now + 3600),
        "usageMetadata": {"totalTokenCount": tokens(system + contents)},
    }  # fmt: skip


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A running fake provider; provider keys set to a dummy and base-URL variables cleared."""
    for name in BASE_URL_ENV:
        monkeypatch.delenv(name, raising=False)
    for name in KEY_ENV:
        monkeypatch.setenv(name, FAKE_KEY)
    with FakeLLMServer() as server:
        yield server
