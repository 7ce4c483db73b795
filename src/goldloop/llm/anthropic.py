"""Anthropic messages, with structured output through ``output_config``."""

from __future__ import annotations

from typing import Any, cast

import anthropic as sdk

from goldloop.llm.base import LLMRequest, LLMResponse, Provider
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

    def _call(self, request: LLMRequest) -> LLMResponse:
        output_config: dict[str, Any] = {
            "format": {"type": "json_schema", "schema": request.schema}
        }
        if self.effort:
            output_config["effort"] = self.effort
        message = self._client.messages.create(
            model=self.model,
            system=request.system,
            messages=[{"role": "user", "content": request.user}],
            max_tokens=request.max_tokens,
            output_config=cast(Any, output_config),  # the effort is a free string here
        )
        text = "".join(block.text for block in message.content if block.type == "text")
        usage = message.usage
        return LLMResponse(
            text=text,
            truncated=message.stop_reason == "max_tokens",
            usage=usage_dict(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_input_tokens=usage.cache_read_input_tokens,
            ),
        )
