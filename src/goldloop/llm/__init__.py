"""LLM providers behind one small interface, with an on-disk response cache.

:func:`choose_annotator` applies the one rule that picks a pre-annotator from what a door was
given, and :func:`make_annotator` / :func:`make_llm` build it (see :mod:`goldloop.llm.factory`).
``make_provider(name, model, effort=..., base_url=..., cache=...)`` gives a :class:`Provider`
whose ``complete(LLMRequest) -> LLMResponse`` is cached and retried; :mod:`goldloop.llm.runner`
sends many requests at once, :mod:`goldloop.llm.batch` sends them through the provider's batch
API, :mod:`goldloop.llm.pricing` and :mod:`goldloop.llm.estimate` price a run before and after.
Credentials come only from the environment: ``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``.
"""

from __future__ import annotations

from goldloop.llm.base import (
    LLMError,
    LLMRequest,
    LLMResponse,
    Provider,
    RetryPolicy,
    annotator_tag,
    endpoint_identity,
)
from goldloop.llm.cache import CachedAnswer, ResponseCache, SQLiteCache, cache_key
from goldloop.llm.factory import (
    DEFAULT_CACHE,
    DEFAULT_MODELS,
    LEXICAL,
    PROVIDERS,
    AmbiguousProvider,
    AnnotatorChoiceError,
    AnnotatorSpec,
    InvalidBaseUrl,
    MissingKey,
    ModelRequired,
    NoProvider,
    UnknownProvider,
    annotator_from_env,
    choose_annotator,
    credentials_set,
    make_annotator,
    make_llm,
    make_provider,
)

__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_MODELS",
    "LEXICAL",
    "PROVIDERS",
    "AmbiguousProvider",
    "AnnotatorChoiceError",
    "AnnotatorSpec",
    "CachedAnswer",
    "InvalidBaseUrl",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "MissingKey",
    "ModelRequired",
    "NoProvider",
    "Provider",
    "ResponseCache",
    "RetryPolicy",
    "SQLiteCache",
    "UnknownProvider",
    "annotator_from_env",
    "annotator_tag",
    "cache_key",
    "choose_annotator",
    "credentials_set",
    "endpoint_identity",
    "make_annotator",
    "make_llm",
    "make_provider",
]
