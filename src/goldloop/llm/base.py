"""The provider interface every LLM door shares: a request, a response, caching and retries.

A provider module only turns an :class:`LLMRequest` into one SDK call and reads the answer, its
stop reason and its usage back; caching and retrying live here, once. The SDKs' own retries are
switched off so that retry behaviour is goldloop's and testable. Who a provider is (its
credential, its endpoint, the wire API it speaks, and so its answers' cache key and annotator
tag) is here too, as functions: the factory names an annotator by them without building one.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from goldloop.errors import GoldloopError
from goldloop.llm.cache import CachedAnswer, ResponseCache, cache_key

if TYPE_CHECKING:
    from tenacity import RetryCallState

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})
# Where each provider's credential is read from, in order.
CREDENTIALS: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
}
# Where each SDK reads a base URL from when none is given.
BASE_URL_VARIABLES: dict[str, str] = {
    "gemini": "GOOGLE_GEMINI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
}
# The providers' own endpoints: answers from there keep the cache keys and tags they always had.
OFFICIAL_ENDPOINTS: dict[str, str] = {
    "gemini": "https://generativelanguage.googleapis.com",
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}


class LLMError(GoldloopError):
    """A request failed for good (after retries, or with an error retrying cannot fix)."""


@dataclass(frozen=True)
class LLMRequest:
    system: str
    user: str
    schema: dict[str, Any]
    max_tokens: int


@dataclass(frozen=True)
class LLMResponse:
    """An answer; ``truncated`` when the provider stopped at the token limit."""

    text: str
    truncated: bool
    usage: dict[str, int] = field(default_factory=dict)
    cached: bool = False


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter on rate limits, server errors and timeouts.

    ``timeout_s`` bounds each attempt; no attempt starts once ``deadline_s`` (default: two
    attempts' worth) has passed since the first, so a server that never answers is given up on
    after two attempts.
    """

    attempts: int = 6
    initial_s: float = 1.0
    max_s: float = 30.0
    timeout_s: float = 120.0
    deadline_s: float | None = None

    @property
    def give_up_after_s(self) -> float:
        return self.deadline_s if self.deadline_s is not None else 2 * self.timeout_s


def status_retryable(status: int | None) -> bool:
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


def retry_after_s(exc: BaseException | None) -> float:
    """The seconds a ``Retry-After`` header asks for (0 when absent or a date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else 0.0
    except ValueError:
        return 0.0


# No variables: what a provider built without a door's environment reads.
NO_ENV: Mapping[str, str] = MappingProxyType({})


def env_credential(*names: str, env: Mapping[str, str]) -> str | None:
    """The first of ``names`` set in ``env``, the environment a door read (credentials come from
    nowhere else)."""
    for name in names:
        value = env.get(name)
        if value:
            return value
    return None


def normalise_endpoint(url: str) -> str:
    """``scheme://host[:port]/path``: lower-cased, default port and trailing slash dropped, never
    the credentials, query or fragment a URL may carry."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    host = parts.hostname
    if parts.scheme.lower() not in ("http", "https") or not host or port == -1:
        raise LLMError("the base URL must be an http(s) URL with a host")
    scheme = parts.scheme.lower()
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def env_base_url(provider: str, env: Mapping[str, str]) -> str | None:
    """The provider's base URL variable in ``env`` (its SDK reads the same one)."""
    return env.get(BASE_URL_VARIABLES.get(provider, "")) or None


def endpoint_identity(provider: str, base_url: str | None, env: Mapping[str, str]) -> str | None:
    """The normalised endpoint when it is not the provider's own (``None`` for the official one):
    ``base_url``, else the provider's variable in ``env``. Two servers may serve different
    models under one name, so it joins the cache key and tag."""
    url = base_url or env_base_url(provider, env)
    if url is None:
        return None
    endpoint = normalise_endpoint(url)
    return None if endpoint == OFFICIAL_ENDPOINTS.get(provider) else endpoint


@dataclass(frozen=True)
class BatchStatus:
    """Where a provider batch job is: ``ended`` once its results can be read."""

    ended: bool
    done: int
    total: int
    state: str


# A batch result: the answer, or why the provider gave none (``retry`` when a new batch may
# still answer it: errored, expired or cancelled in the batch).
BatchResult = tuple[str, "LLMResponse | LLMError", bool]


def annotator_tag(model: str, effort: str | None, endpoint: str | None = None) -> str:
    """``model``, ``model@effort``, and ``@endpoint`` after either for a server of one's own."""
    tag = f"{model}@{effort}" if effort else model
    return f"{tag}@{endpoint}" if endpoint else tag


# The wire APIs a provider can speak, the first being the one its cache keys were made with
# before there was a choice (that one stays out of the key, so those keys never change).
PROVIDER_APIS: dict[str, tuple[str, ...]] = {"openai": ("chat", "responses")}


def resolve_api(provider: str, api: str | None, endpoint: str | None) -> str | None:
    """The API a provider is spoken to with: ``api`` when given; else the Responses API on
    OpenAI's own endpoint and chat completions (the one API they all have) on an
    OpenAI-compatible server; ``None`` for a provider with a single API."""
    apis = PROVIDER_APIS.get(provider, ())
    if api is not None and api not in apis:
        speaks = ", ".join(apis) or "only its own API"
        raise LLMError(f"{provider}: there is no API {api!r} (it speaks {speaks})")
    if api is not None or not apis:
        return api
    return "responses" if provider == "openai" and endpoint is None else apis[0]


def request_key(
    provider: str,
    model: str,
    effort: str | None,
    endpoint: str | None,
    api: str | None,
    request: LLMRequest,
) -> str:
    """The response cache key of ``request`` to that provider, endpoint and API."""
    first = PROVIDER_APIS.get(provider, (None,))[0]
    return cache_key(
        provider,
        model,
        effort,
        request.system,
        request.user,
        request.schema,
        endpoint,
        None if api == first else api,
    )


class Provider(ABC):
    """One model of one provider; :meth:`complete` is cached and retried."""

    name: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        effort: str | None = None,
        base_url: str | None = None,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
        api: str | None = None,
        env: Mapping[str, str] = NO_ENV,
    ) -> None:
        self.model = model
        self.effort = effort or None
        self.base_url = base_url
        self.cache = cache
        self.retry = retry or RetryPolicy()
        # The environment the door read: the key, a base URL variable, the price table.
        self.env = env
        self.endpoint = endpoint_identity(self.name, base_url, env)
        self.api = resolve_api(self.name, api, self.endpoint)

    @property
    def source(self) -> str:
        """``provider/model``: whose usage a dry run calibrates on."""
        return f"{self.name}/{self.model}"

    @property
    def tag(self) -> str:
        """The annotator tag (see :func:`annotator_tag`)."""
        return annotator_tag(self.model, self.effort, self.endpoint)

    @property
    def label(self) -> str:
        """How messages name this provider: its name, model and a server of one's own."""
        where = f" at {self.endpoint}" if self.endpoint else ""
        return f"{self.name} {self.model}{where}"

    def key(self, request: LLMRequest) -> str:
        """The response cache key of ``request`` to this provider."""
        return request_key(self.name, self.model, self.effort, self.endpoint, self.api, request)

    def _api_key(self) -> str:
        names = CREDENTIALS[self.name]
        key = env_credential(*names, env=self.env)
        if key:
            return key
        if self.base_url:
            # A local OpenAI-compatible server (vLLM, Ollama) often needs no key; the SDK wants one.
            return "no-key"
        raise LLMError(f"{self.name}: set {' or '.join(names)} in the environment")

    def complete(
        self,
        request: LLMRequest,
        *,
        usable: Callable[[str], bool] | None = None,
        cancel: threading.Event | None = None,
    ) -> LLMResponse:
        """The answer from the cache, else from the provider.

        A truncated answer is never cached, nor one that ``usable`` (the caller's check of the
        text, e.g. "parses as JSON") refuses, so a re-run asks for those again. Once ``cancel``
        is set, no further attempt starts.
        """
        key = self.key(request)
        hit = self.cached_response(key)
        if hit is not None:
            return hit
        response = self._call_with_retries(request, cancel)
        self.remember(key, request, response, usable)
        return response

    def remember(
        self,
        key: str,
        request: LLMRequest | None,
        response: LLMResponse,
        usable: Callable[[str], bool] | None = None,
    ) -> None:
        """Cache a fresh answer unless it was truncated or ``usable`` refuses its text.

        ``request`` is None for a paid answer whose request this run did not make (a batch job
        submitted by a run with another selection): it is kept, its prompt length unknown.
        """
        keep = not response.truncated and (usable is None or usable(response.text))
        if self.cache is None or not keep:
            return
        chars = None if request is None else len(request.system) + len(request.user)
        answer = CachedAnswer(response.text, response.usage, chars, self.source)
        try:
            self.cache.put(key, answer)
        except Exception as exc:  # a broken cache must not lose a paid-for answer
            log.warning("%s: the answer was not cached: %s", self.name, exc)

    def cached_response(self, key: str) -> LLMResponse | None:
        """The cached answer under ``key`` as a response, or ``None``."""
        hit = self._cached(key)
        return None if hit is None else LLMResponse(hit.text, False, dict(hit.usage), cached=True)

    def _cached(self, key: str) -> CachedAnswer | None:
        if self.cache is None:
            return None
        try:
            return self.cache.get(key)
        except Exception as exc:
            log.warning("%s: response cache unreadable, asking the provider: %s", self.name, exc)
            return None

    def _call_with_retries(
        self, request: LLMRequest, cancel: threading.Event | None = None
    ) -> LLMResponse:
        return self.with_retries(lambda: self._call(request), cancel)

    def with_retries(self, call: Callable[[], T], cancel: threading.Event | None = None) -> T:
        """``call()`` (one SDK call) under the retry policy; a final failure is an
        :class:`LLMError` naming the provider."""
        # Here, not at import: the CLI's options read this package's defaults for their help.
        from tenacity import (
            Retrying,
            retry_if_exception,
            stop_after_attempt,
            stop_after_delay,
            stop_any,
            stop_when_event_set,
        )

        cancel = cancel or threading.Event()

        def sleep(seconds: float) -> None:
            cancel.wait(seconds)  # a cancelled run does not sit out a backoff

        retrying = Retrying(
            stop=stop_any(
                stop_after_attempt(self.retry.attempts),
                stop_after_delay(self.retry.give_up_after_s),
                stop_when_event_set(cancel),
            ),
            wait=self._wait,
            sleep=sleep,
            retry=retry_if_exception(self._retryable),
            reraise=True,
        )
        started = time.monotonic()

        def attempt() -> T:
            if cancel.is_set():  # cancelled during a backoff: no further attempt
                raise LLMError(f"{self.label}: cancelled before an answer came")
            return call()

        try:
            return retrying(attempt)
        except LLMError:
            raise
        except Exception as exc:
            attempts = retrying.statistics.get("attempt_number", 1)
            waited = time.monotonic() - started
            raise LLMError(
                f"{self.label}: {self._describe(exc)} "
                f"(gave up after {attempts} attempt(s), {waited:.1f} s)"
            ) from exc

    def _wait(self, state: RetryCallState) -> float:
        """Exponential backoff with jitter, or longer when the server says ``Retry-After``."""
        from tenacity import wait_exponential_jitter

        backoff = wait_exponential_jitter(initial=self.retry.initial_s, max=self.retry.max_s)(state)
        exc = state.outcome.exception() if state.outcome else None
        return min(max(backoff, retry_after_s(exc)), self.retry.max_s)

    def _retryable(self, exc: BaseException) -> bool:
        if "Timeout" in type(exc).__name__ or "Connect" in type(exc).__name__:
            return True
        return status_retryable(self._status(exc))

    @staticmethod
    def _status(exc: BaseException) -> int | None:
        status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
        return status if isinstance(status, int) else None

    def _describe(self, exc: BaseException) -> str:
        """The error for reports, with the credentials masked should the server echo them (the
        key, and a password in the base URL)."""
        if "Timeout" in type(exc).__name__:
            return f"no answer within {self.retry.timeout_s:g} s"
        status = self._status(exc)
        prefix = f"HTTP {status} " if status else ""
        text = str(exc)
        for secret in self._secrets():
            text = text.replace(secret, "***")
        return f"{prefix}{type(exc).__name__}: {text[:300]}"

    def _secrets(self) -> list[str]:
        password = urlsplit(self.base_url).password if self.base_url else None
        secrets = [env_credential(*CREDENTIALS[self.name], env=self.env), password]
        return [secret for secret in secrets if secret]

    @abstractmethod
    def _call(self, request: LLMRequest) -> LLMResponse:
        """One SDK call: the answer text, whether it was cut at the limit, and token usage."""

    @contextmanager
    def prompt_cache(self, system: str, requests: int) -> Iterator[None]:
        """Around a run of ``requests`` requests sharing ``system``: a provider whose prompt
        cache must be created (Gemini's explicit cache) creates it here and deletes it after."""
        yield

    # Provider batch APIs (see goldloop.llm.batch): each request carries its cache key as its id.

    @abstractmethod
    def batch_submit(self, items: Sequence[tuple[str, LLMRequest]]) -> str:
        """Submit ``(id, request)`` pairs as one batch job; its id."""

    @abstractmethod
    def batch_status(self, job: str) -> BatchStatus:
        """Where the job is (one status read)."""

    @abstractmethod
    def batch_results(self, job: str) -> Iterator[BatchResult]:
        """``(id, answer or error, retry)`` for each request of an ended job."""
