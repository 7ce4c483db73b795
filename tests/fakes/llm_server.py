"""A fake LLM provider on 127.0.0.1 speaking OpenAI, Anthropic and Gemini wire formats.

The real SDKs are pointed at it by base URL, so their request building, response parsing, stop
reasons and usage objects all run for real. Answers are scripted by a function of the request;
latency, HTTP errors (429, 500, ...) and truncation can be injected, and every request is counted
(``request_count``; ``max_in_flight`` is the most requests it held at once; both also at
``GET /_fake/stats`` when the server runs in another process).

    with FakeLLMServer(lambda req: '{"mentions": []}') as server:
        provider = server.provider("anthropic", "claude-x", cache=None)

Endpoints: ``POST /v1/chat/completions`` (OpenAI), ``POST /v1/messages`` (Anthropic),
``POST /{v1,v1beta}/models/{model}:generateContent`` (Gemini; google-genai uses ``v1`` by default).
"""

from __future__ import annotations

import json
import re
import threading
import time
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


class FakeLLMServer:
    """The server; ``answer`` and ``latency_s`` may be changed while it runs."""

    def __init__(self, answer: Answer = empty_answer, *, latency_s: float = 0.0) -> None:
        self.answer = answer
        self.latency_s = latency_s
        self.requests: list[FakeRequest] = []
        self.request_count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._failures: list[tuple[int, str | None, float]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
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
        """A real goldloop provider pointed at this server, retrying fast."""
        from goldloop.llm import RetryPolicy, make_provider

        options.setdefault(
            "retry", RetryPolicy(attempts=4, initial_s=0.01, max_s=0.05, timeout_s=10)
        )
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

    def _arrive(self) -> tuple[int, str | None, float] | None:
        """Count a request; the status of an injected failure, if one is due."""
        with self._lock:
            self.request_count += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._failures.pop(0) if self._failures else None

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

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
        }
        return 200, _BODIES[provider](request.model, text, truncated, usage)


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


def _parse_anthropic(body: dict[str, Any], _: str) -> FakeRequest:
    config = body.get("output_config") or {}
    user = "".join(
        _text_of(m["content"]) for m in body.get("messages", []) if m.get("role") == "user"
    )
    return FakeRequest(
        "anthropic", body.get("model", ""), _text_of(body.get("system", "")), user,
        (config.get("format") or {}).get("schema"), body.get("max_tokens"), config.get("effort"), body,
    )  # fmt: skip


def _parse_gemini(body: dict[str, Any], model: str) -> FakeRequest:
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
    return FakeRequest(
        "gemini", model, _text_of((body.get("systemInstruction") or {}).get("parts", [])),
        "".join(_text_of(c.get("parts", [])) for c in body.get("contents", [])),
        config.get("responseJsonSchema"), config.get("maxOutputTokens"),
        str(effort).lower() if effort else None, body,
    )  # fmt: skip


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
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
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
            "input_tokens": usage["input"],
            "output_tokens": usage["output"] + usage["reasoning"],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
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


_BODIES: dict[str, Callable[[str, str, bool, dict[str, int]], dict[str, Any]]] = {
    "openai": _openai_body,
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
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_GET(self) -> None:
            if self.path == "/_fake/stats":  # for a server run in another process
                self._send(
                    200,
                    {"request_count": server.request_count, "max_in_flight": server.max_in_flight},
                )
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            gemini = _GEMINI_PATH.match(path)
            if path == "/v1/chat/completions":
                provider, parse, model = "openai", _parse_openai, ""
            elif path == "/v1/messages":
                provider, parse, model = "anthropic", _parse_anthropic, ""
            elif gemini:
                provider, parse, model = "gemini", _parse_gemini, gemini["model"]
            else:
                self._send(404, {"error": {"message": f"no route {path}"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            failure = server._arrive()
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
                server._leave()

        def _send(self, status: int, payload: dict[str, Any], retry_after_s: float = 0) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", f"{retry_after_s:g}")
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A running fake provider; provider keys set to a dummy and base-URL variables cleared."""
    for name in BASE_URL_ENV:
        monkeypatch.delenv(name, raising=False)
    for name in KEY_ENV:
        monkeypatch.setenv(name, FAKE_KEY)
    with FakeLLMServer() as server:
        yield server
