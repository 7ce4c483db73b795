"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama, LM Studio) by base URL."""

from __future__ import annotations

from typing import Any

import openai as sdk

from goldloop.llm.base import LLMRequest, LLMResponse, Provider
from goldloop.llm.usage import usage_dict


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self._client = sdk.OpenAI(
            api_key=self._api_key(),
            base_url=self.base_url,
            max_retries=0,
            timeout=self.retry.timeout_s,
        )

    def _call(self, request: LLMRequest) -> LLMResponse:
        extra: dict[str, Any] = {"reasoning_effort": self.effort} if self.effort else {}
        completion = self._client.chat.completions.create(
            model=self.model,
            messages=[
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
            max_completion_tokens=request.max_tokens,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "mentions", "schema": request.schema, "strict": False},
            },
            **extra,
        )
        choice = completion.choices[0]
        usage = completion.usage
        details = usage.completion_tokens_details if usage else None
        cached = usage.prompt_tokens_details if usage else None
        return LLMResponse(
            text=choice.message.content or "",
            truncated=choice.finish_reason == "length",
            usage=usage_dict(
                input_tokens=usage.prompt_tokens if usage else None,
                output_tokens=usage.completion_tokens if usage else None,
                reasoning_tokens=details.reasoning_tokens if details else None,
                cached_input_tokens=cached.cached_tokens if cached else None,
            ),
        )
