"""The provider interface every LLM door shares: a request, a response, caching and retries.

A provider module only turns an :class:`LLMRequest` into one SDK call and reads the answer, its
stop reason and its usage back; caching and retrying live here, once. The SDKs' own retries are
switched off so that retry behaviour is goldloop's and testable.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from goldloop.errors import GoldloopError
from goldloop.llm.cache import CachedAnswer, ResponseCache, cache_key

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

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The answer from the cache, else from the provider (truncated answers are not cached)."""
        key = cache_key(self.name, self.model, self.effort, request.system, request.user, request.schema)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return LLMResponse(hit.text, False, dict(hit.usage), cached=True)
        response = self._call_with_retries(request)
        if self.cache is not None and not response.truncated:
            self.cache.put(key, CachedAnswer(response.text, response.usage))
        return response

    def _call_with_retries(self, request: LLMRequest) -> LLMResponse:
        retrying = Retrying(
            stop=stop_after_attempt(self.retry.attempts),
            wait=wait_exponential_jitter(initial=self.retry.initial_s, max=self.retry.max_s),
            retry=retry_if_exception(self._retryable),
            reraise=True,
        )
        try:
            return retrying(self._call, request)
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self.name} {self.model}: {self._describe(exc)}") from exc

    def _retryable(self, exc: BaseException) -> bool:
        if "Timeout" in type(exc).__name__ or "Connect" in type(exc).__name__:
            return True
        return status_retryable(self._status(exc))

    @staticmethod
    def _status(exc: BaseException) -> int | None:
        status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
        return status if isinstance(status, int) else None

    def _describe(self, exc: BaseException) -> str:
        status = self._status(exc)
        prefix = f"HTTP {status} " if status else ""
        return f"{prefix}{type(exc).__name__}: {str(exc)[:300]}"

    @abstractmethod
    def _call(self, request: LLMRequest) -> LLMResponse:
        """One SDK call: the answer text, whether it was cut at the limit, and token usage."""
