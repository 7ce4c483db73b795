"""Anthropic messages, with structured output through ``output_config``, the system block marked
for prompt caching, and Message Batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import anthropic as sdk
from anthropic.types import Message

from goldloop.llm.base import BatchResult, BatchStatus, LLMError, LLMRequest, LLMResponse, Provider
from goldloop.llm.usage import usage_dict


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self._client = sdk.Anthropic(
            api_key=self._api_key(),
            base_url=self.base_url,
            max_retries=0,
            timeout=self.retry.timeout_s,
        )

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        output_config: dict[str, Any] = {
            "format": {"type": "json_schema", "schema": request.schema}
        }
        if self.effort:
            output_config["effort"] = self.effort
        return {
            "model": self.model,
            # Anthropic caches a prefix only up to a block marked so: the KB catalog, shared by
            # every document of a run.
            "system": [
                {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [{"role": "user", "content": request.user}],
            "max_tokens": request.max_tokens,
            "output_config": output_config,
        }

    def _call(self, request: LLMRequest) -> LLMResponse:
        return self._read(self._client.messages.create(**cast(Any, self._params(request))))

    @staticmethod
    def _read(message: Message) -> LLMResponse:
        text = "".join(block.text for block in message.content if block.type == "text")
        usage = message.usage
        read = usage.cache_read_input_tokens or 0
        written = usage.cache_creation_input_tokens or 0
        return LLMResponse(
            text=text,
            truncated=message.stop_reason == "max_tokens",
            usage=usage_dict(
                # Anthropic's input_tokens are only those after the last cache breakpoint.
                input_tokens=usage.input_tokens + read + written,
                output_tokens=usage.output_tokens,
                cached_input_tokens=read,
                cache_write_input_tokens=written,
            ),
        )

    def batch_submit(self, items: Sequence[tuple[str, LLMRequest]]) -> str:
        requests = [{"custom_id": key, "params": self._params(r)} for key, r in items]
        batch = self.with_retries(
            lambda: self._client.messages.batches.create(requests=cast(Any, requests))
        )
        return batch.id

    def batch_status(self, job: str) -> BatchStatus:
        batch = self.with_retries(lambda: self._client.messages.batches.retrieve(job))
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        return BatchStatus(
            batch.processing_status == "ended",
            done,
            done + counts.processing,
            batch.processing_status,
        )

    def batch_results(self, job: str) -> Iterator[BatchResult]:
        for line in self.with_retries(lambda: list(self._client.messages.batches.results(job))):
            result = line.result
            if result.type == "succeeded":
                yield line.custom_id, self._read(result.message), False
            elif result.type == "errored":
                error = result.error.error
                yield (
                    line.custom_id,
                    LLMError(f"{self.label}: batch request errored: {error.type}: {error.message}"),
                    True,
                )
            else:  # expired or canceled
                yield line.custom_id, LLMError(f"{self.label}: batch request {result.type}"), True
