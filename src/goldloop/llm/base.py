"""The provider interface every LLM door shares: a request, a response, caching and retries.

A provider module only turns an :class:`LLMRequest` into one SDK call and reads the answer, its
stop reason and its usage back; caching and retrying live here, once. The SDKs' own retries are
switched off so that retry behaviour is goldloop's and testable.
"""

from __future__ import annotations

import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from goldloop.errors import GoldloopError
from goldloop.llm.cache import CachedAnswer, ResponseCache, cache_key

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
# Where each provider's credential is read from, in order.
CREDENTIALS: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
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
    """Exponential backoff with jitter on rate limits, server errors and timeouts."""

    attempts: int = 6
    initial_s: float = 1.0
    max_s: float = 60.0
    timeout_s: float = 300.0


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


def env_credential(*names: str) -> str | None:
    """The first of ``names`` set in the environment (credentials come from nowhere else)."""
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


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
    ) -> None:
        self.model = model
        self.effort = effort or None
        self.base_url = base_url
        self.cache = cache
        self.retry = retry or RetryPolicy()

    @property
    def tag(self) -> str:
        """The annotator tag: ``model`` or ``model@effort``."""
        return f"{self.model}@{self.effort}" if self.effort else self.model

    def _api_key(self) -> str:
        names = CREDENTIALS[self.name]
        key = env_credential(*names)
        if key:
            return key
        if self.base_url:
            # A local OpenAI-compatible server (vLLM, Ollama) often needs no key; the SDK wants one.
            return "no-key"
        raise LLMError(f"{self.name}: set {' or '.join(names)} in the environment")

    def complete(
        self, request: LLMRequest, *, usable: Callable[[str], bool] | None = None
    ) -> LLMResponse:
        """The answer from the cache, else from the provider.

        A truncated answer is never cached, nor one that ``usable`` (the caller's check of the
        text, e.g. "parses as JSON") refuses, so a re-run asks for those again.
        """
        key = cache_key(
            self.name, self.model, self.effort, request.system, request.user, request.schema
        )
        hit = self._cached(key)
        if hit is not None:
            return LLMResponse(hit.text, False, dict(hit.usage), cached=True)
        response = self._call_with_retries(request)
        keep = not response.truncated and (usable is None or usable(response.text))
        if self.cache is not None and keep:
            try:
                self.cache.put(key, CachedAnswer(response.text, response.usage))
            except Exception as exc:  # a broken cache must not lose a paid-for answer
                log.warning("%s: the answer was not cached: %s", self.name, exc)
        return response

    def _cached(self, key: str) -> CachedAnswer | None:
        if self.cache is None:
            return None
        try:
            return self.cache.get(key)
        except Exception as exc:
            log.warning("%s: response cache unreadable, asking the provider: %s", self.name, exc)
            return None

    def _call_with_retries(self, request: LLMRequest) -> LLMResponse:
        retrying = Retrying(
            stop=stop_after_attempt(self.retry.attempts),
            wait=self._wait,
            retry=retry_if_exception(self._retryable),
            reraise=True,
        )
        try:
            return retrying(self._call, request)
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self.name} {self.model}: {self._describe(exc)}") from exc

    def _wait(self, state: RetryCallState) -> float:
        """Exponential backoff with jitter, or longer when the server says ``Retry-After``."""
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
        """The error for reports, with the credential masked should the server echo it."""
        status = self._status(exc)
        prefix = f"HTTP {status} " if status else ""
        text = str(exc)
        key = env_credential(*CREDENTIALS[self.name])
        if key:
            text = text.replace(key, "***")
        return f"{prefix}{type(exc).__name__}: {text[:300]}"

    @abstractmethod
    def _call(self, request: LLMRequest) -> LLMResponse:
        """One SDK call: the answer text, whether it was cut at the limit, and token usage."""
