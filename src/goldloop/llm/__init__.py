"""LLM providers behind one small interface, with an on-disk response cache.

``make_provider(name, model, effort=..., base_url=..., cache=...)`` gives a :class:`Provider`
whose ``complete(LLMRequest) -> LLMResponse`` is cached and retried. Credentials come only from
the environment: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any, Final

from goldloop.llm.base import (
    CREDENTIALS,
    LLMError,
    LLMRequest,
    LLMResponse,
    Provider,
    RetryPolicy,
    env_credential,
)
from goldloop.llm.cache import CachedAnswer, ResponseCache, SQLiteCache, cache_key
from goldloop.settings import default_cache_path

__all__ = [
    "DEFAULT_MODELS",
    "PROVIDERS",
    "CachedAnswer",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "Provider",
    "ResponseCache",
    "RetryPolicy",
    "SQLiteCache",
    "cache_key",
    "credentials_set",
    "make_provider",
]

# name -> (module, class); modules import their SDK only when that provider is used.
PROVIDERS: Final = {
    "openai": ("goldloop.llm.openai", "OpenAIProvider"),
    "anthropic": ("goldloop.llm.anthropic", "AnthropicProvider"),
    "gemini": ("goldloop.llm.gemini", "GeminiProvider"),
}
# Used when ``goldloop annotate`` gets no --model; any model the provider serves can be named.
DEFAULT_MODELS: Final = {
    "openai": "gpt-5-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}


class _DefaultCache:
    """Sentinel: the SQLite cache at ``settings.default_cache_path()``."""


DEFAULT_CACHE: Final = _DefaultCache()


def credentials_set() -> list[str]:
    """Providers whose credential is in the environment (never the credential itself)."""
    return [name for name, env in CREDENTIALS.items() if env_credential(*env)]


def make_provider(
    name: str,
    model: str,
    *,
    effort: str | None = None,
    base_url: str | None = None,
    cache: ResponseCache | _DefaultCache | str | Path | None = DEFAULT_CACHE,
    retry: RetryPolicy | None = None,
) -> Provider:
    """A provider by name; ``cache`` is a cache object, a SQLite path, ``None`` (off) or the default."""
    if name not in PROVIDERS:
        raise LLMError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")
    module_name, class_name = PROVIDERS[name]
    try:
        provider_class: Any = getattr(import_module(module_name), class_name)
    except ImportError as exc:
        raise LLMError(f"{name}: its SDK is not installed; install goldloop[llm] ({exc})") from exc
    if isinstance(cache, _DefaultCache):
        cache = SQLiteCache(default_cache_path())
    elif isinstance(cache, str | Path):
        cache = SQLiteCache(cache)
    provider: Provider = provider_class(
        model, effort=effort, base_url=base_url, cache=cache, retry=retry
    )
    return provider
