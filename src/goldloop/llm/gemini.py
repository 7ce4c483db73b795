"""Google Gemini through google-genai: a JSON schema, a thinking level for the effort, an explicit
context cache for the KB catalog when a run is large enough to pay for it, and batch mode.

Gemini caches a shared prefix implicitly; an explicit cache guarantees the cached price but bills
storage by the hour, so :meth:`GeminiProvider.prompt_cache` creates one only when the run has at
least :func:`goldloop.llm.pricing.explicit_cache_min_requests` requests and the prefix reaches the
model's minimum cache size, both from the price table, and deletes it when the run ends.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from google import genai
from google.genai import types

from goldloop.llm.base import BatchResult, BatchStatus, LLMError, LLMRequest, LLMResponse, Provider
from goldloop.llm.pricing import EXPLICIT_CACHE_HOURS, explicit_cache_min_requests, load_prices
from goldloop.llm.usage import usage_dict

log = logging.getLogger(__name__)

ENDED = frozenset(
    {
        types.JobState.JOB_STATE_SUCCEEDED,
        types.JobState.JOB_STATE_FAILED,
        types.JobState.JOB_STATE_CANCELLED,
        types.JobState.JOB_STATE_EXPIRED,
        types.JobState.JOB_STATE_PARTIALLY_SUCCEEDED,
    }
)
# The cache outlives a slow run; it is deleted as soon as the run ends.
CACHE_TTL_S = 6 * 3600


class GeminiProvider(Provider):
    name = "gemini"

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self._client = genai.Client(
            api_key=self._api_key(),
            http_options=types.HttpOptions(
                base_url=self.base_url,
                timeout=int(self.retry.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )
        self._thinking = self._thinking_config()
        self._context_cache: tuple[str, str] | None = None  # (system prompt, cache name)

    def _thinking_config(self) -> types.ThinkingConfig | None:
        """An effort is a thinking level (minimal, low, medium, high) or a token budget."""
        if not self.effort:
            return None
        if self.effort.isdigit():
            return types.ThinkingConfig(thinking_budget=int(self.effort))
        levels = [
            level.value.lower()
            for level in types.ThinkingLevel
            if level.name != "THINKING_LEVEL_UNSPECIFIED"
        ]
        if self.effort.lower() not in levels:
            raise LLMError(
                f"gemini: effort {self.effort!r} is not a thinking level ({', '.join(levels)}) or a token budget"
            )
        return types.ThinkingConfig(thinking_level=types.ThinkingLevel(self.effort.upper()))

    def _config(self, request: LLMRequest) -> types.GenerateContentConfig:
        cache = self._context_cache
        in_cache = cache is not None and cache[0] == request.system
        return types.GenerateContentConfig(
            system_instruction=None if in_cache else request.system,
            cached_content=cache[1] if in_cache and cache is not None else None,
            response_mime_type="application/json",
            response_json_schema=request.schema,
            max_output_tokens=request.max_tokens,
            thinking_config=self._thinking,
        )

    def _call(self, request: LLMRequest) -> LLMResponse:
        response = self._client.models.generate_content(
            model=self.model, contents=request.user, config=self._config(request)
        )
        return self._read(response)

    @staticmethod
    def _read(response: types.GenerateContentResponse) -> LLMResponse:
        candidate = response.candidates[0] if response.candidates else None
        parts = candidate.content.parts if candidate and candidate.content else None
        text = "".join(part.text or "" for part in parts or [] if not part.thought)
        usage = response.usage_metadata
        return LLMResponse(
            text=text,
            truncated=candidate is not None
            and candidate.finish_reason == types.FinishReason.MAX_TOKENS,
            usage=usage_dict(
                input_tokens=usage.prompt_token_count if usage else None,
                # Gemini bills thoughts as output but counts them apart from the candidates.
                output_tokens=(usage.candidates_token_count or 0)
                + (usage.thoughts_token_count or 0)
                if usage
                else None,
                reasoning_tokens=usage.thoughts_token_count if usage else None,
                cached_input_tokens=usage.cached_content_token_count if usage else None,
            ),
        )

    @contextmanager
    def prompt_cache(self, system: str, requests: int) -> Iterator[None]:
        name = self._create_context_cache(system, requests)
        if name is None:
            yield
            return
        self._context_cache = (system, name)
        try:
            yield
        finally:
            self._context_cache = None
            try:
                self.with_retries(lambda: self._client.caches.delete(name=name))
            except LLMError as exc:  # it expires by itself; say so rather than fail the run
                log.warning(
                    "%s: context cache %s not deleted (it expires by itself): %s",
                    self.label,
                    name,
                    exc,
                )

    def _create_context_cache(self, system: str, requests: int) -> str | None:
        """The name of a new explicit cache of ``system``, or ``None`` when implicit caching is
        cheaper (too few requests, a prefix under the minimum, or a model the table lacks)."""
        price = load_prices(env=self.env).price(self.name, self.model)
        threshold = None if price is None else explicit_cache_min_requests(price)
        minimum = price.cache_min_tokens if price is not None else None
        if threshold is None or requests < threshold or math.ceil(len(system) / 4) < (minimum or 0):
            return None
        config = types.CreateCachedContentConfig(
            system_instruction=system, ttl=f"{CACHE_TTL_S}s", display_name="goldloop"
        )
        try:
            cache = self.with_retries(
                lambda: self._client.caches.create(model=self.model, config=config)
            )
        except LLMError as exc:  # implicit caching still applies
            log.warning(
                "%s: no explicit context cache (%s); implicit caching applies", self.label, exc
            )
            return None
        log.info(
            "%s: explicit context cache %s for %d requests (pays from %d in %g h)",
            self.label,
            cache.name,
            requests,
            threshold,
            EXPLICIT_CACHE_HOURS,
        )
        return cache.name

    def batch_submit(self, items: Sequence[tuple[str, LLMRequest]]) -> str:
        inlined = [
            types.InlinedRequest(
                model=self.model, contents=r.user, config=self._config(r), metadata={"key": key}
            )
            for key, r in items
        ]
        job = self.with_retries(
            lambda: self._client.batches.create(
                model=self.model,
                src=inlined,
                config=types.CreateBatchJobConfig(display_name="goldloop"),
            )
        )
        if not job.name:
            raise LLMError(f"{self.label}: the batch job has no name")
        return job.name

    def batch_status(self, job: str) -> BatchStatus:
        batch = self.with_retries(lambda: self._client.batches.get(name=job))
        ended = batch.state in ENDED
        total = len(batch.dest.inlined_responses or []) if batch.dest else 0
        return BatchStatus(
            ended, total if ended else 0, total, str(batch.state.value if batch.state else "")
        )

    def batch_results(self, job: str) -> Iterator[BatchResult]:
        batch = self.with_retries(lambda: self._client.batches.get(name=job))
        for item in (batch.dest.inlined_responses if batch.dest else None) or []:
            key = (item.metadata or {}).get("key", "")
            if item.response is not None and item.error is None:
                yield key, self._read(item.response), False
            else:
                error = item.error
                detail = f"{error.code} {error.message}" if error else "no response"
                yield key, LLMError(f"{self.label}: batch request failed: {detail}"), True
