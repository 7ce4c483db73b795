"""Google Gemini through google-genai, with a JSON schema and a thinking level for the effort."""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

from goldloop.llm.base import LLMError, LLMRequest, LLMResponse, Provider
from goldloop.llm.usage import usage_dict


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

    def _call(self, request: LLMRequest) -> LLMResponse:
        response = self._client.models.generate_content(
            model=self.model,
            contents=request.user,
            config=types.GenerateContentConfig(
                system_instruction=request.system,
                response_mime_type="application/json",
                response_json_schema=request.schema,
                max_output_tokens=request.max_tokens,
                thinking_config=self._thinking,
            ),
        )
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
                output_tokens=usage.candidates_token_count if usage else None,
                reasoning_tokens=usage.thoughts_token_count if usage else None,
                cached_input_tokens=usage.cached_content_token_count if usage else None,
            ),
        )
