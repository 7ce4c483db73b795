"""OpenAI: the Responses API on OpenAI's own endpoint, chat completions for any OpenAI-compatible
server (vLLM, Ollama, LM Studio) by base URL; the Batch API (a JSONL file, then a batch) for both.

Every request to OpenAI's own endpoint carries ``prompt_cache_key``, so requests sharing the KB
catalog are routed to the same prompt cache (OpenAI caches the longest shared prefix by itself).
Other servers get no such key: they cache prefixes their own way, and some refuse fields they do
not know (vLLM logs a warning for each).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any, cast

import openai as sdk
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from goldloop.files import jsonl
from goldloop.llm.base import BatchResult, BatchStatus, LLMError, LLMRequest, LLMResponse, Provider
from goldloop.llm.usage import usage_dict

# A batch is over once it reaches one of these; "completed" may still hold failed requests.
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
SCHEMA_NAME = "mentions"


def prompt_cache_key(system: str) -> str:
    """The same for every request sharing one system prompt (and nothing of the prompt itself)."""
    return "goldloop-" + hashlib.sha256(system.encode("utf-8")).hexdigest()[:32]


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

    @property
    def _path(self) -> str:
        return "/v1/responses" if self.api == "responses" else "/v1/chat/completions"

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        common = {"model": self.model}
        if self.endpoint is None:  # OpenAI's own endpoint
            common["prompt_cache_key"] = prompt_cache_key(request.system)
        if self.api == "responses":
            return {
                **common,
                "instructions": request.system,
                "input": request.user,
                "max_output_tokens": request.max_tokens,
                "text": {
                    "format": {
                        "type": "json_schema",
                        "name": SCHEMA_NAME,
                        "schema": request.schema,
                        "strict": False,
                    }
                },
                **({"reasoning": {"effort": self.effort}} if self.effort else {}),
            }
        return {
            **common,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
            "max_completion_tokens": request.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": request.schema, "strict": False},
            },
            **({"reasoning_effort": self.effort} if self.effort else {}),
        }

    def _call(self, request: LLMRequest) -> LLMResponse:
        params = cast(Any, self._params(request))
        if self.api == "responses":
            return self._read_response(self._client.responses.create(**params))
        return self._read_chat(self._client.chat.completions.create(**params))

    @staticmethod
    def _read_chat(completion: ChatCompletion) -> LLMResponse:
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

    @staticmethod
    def _read_response(response: Response) -> LLMResponse:
        usage = response.usage
        incomplete = response.incomplete_details
        return LLMResponse(
            text=response.output_text,
            truncated=response.status == "incomplete"
            and incomplete is not None
            and incomplete.reason == "max_output_tokens",
            usage=usage_dict(
                input_tokens=usage.input_tokens if usage else None,
                output_tokens=usage.output_tokens if usage else None,
                reasoning_tokens=usage.output_tokens_details.reasoning_tokens if usage else None,
                cached_input_tokens=usage.input_tokens_details.cached_tokens if usage else None,
            ),
        )

    def _read_body(self, body: dict[str, Any]) -> LLMResponse:
        """A batch line's body, read as leniently as the SDK reads an online answer."""
        if self.api == "responses":
            return self._read_response(Response.construct(**body))
        return self._read_chat(ChatCompletion.construct(**body))

    def batch_submit(self, items: Sequence[tuple[str, LLMRequest]]) -> str:
        lines = "".join(
            json.dumps(
                {"custom_id": key, "method": "POST", "url": self._path, "body": self._params(r)},
                ensure_ascii=False,
            )
            + "\n"
            for key, r in items
        )
        data = lines.encode("utf-8")
        upload = self.with_retries(
            lambda: self._client.files.create(file=("goldloop.files.jsonl", data), purpose="batch")
        )
        batch = self.with_retries(
            lambda: self._client.batches.create(
                input_file_id=upload.id,
                endpoint=cast(Any, self._path),
                completion_window="24h",
                metadata={"goldloop": self.tag[:500]},
            )
        )
        return batch.id

    def batch_status(self, job: str) -> BatchStatus:
        batch = self.with_retries(lambda: self._client.batches.retrieve(job))
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts else 0
        return BatchStatus(batch.status in ENDED, done, counts.total if counts else 0, batch.status)

    def batch_results(self, job: str) -> Iterator[BatchResult]:
        batch = self.with_retries(lambda: self._client.batches.retrieve(job))
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                for line in self._file_text(file_id).splitlines():
                    if line.strip():
                        yield self._batch_line(jsonl.loads(line))

    def _file_text(self, file_id: str) -> str:
        return self.with_retries(lambda: self._client.files.content(file_id).text)

    def _batch_line(self, line: dict[str, Any]) -> BatchResult:
        key = str(line.get("custom_id"))
        response = line.get("response") or {}
        if line.get("error") is None and response.get("status_code") == 200:
            return key, self._read_body(response["body"]), False
        error = line.get("error") or (response.get("body") or {}).get("error") or {}
        status = response.get("status_code")
        where = f"HTTP {status} " if status else ""
        message = f"{where}{error.get('code') or ''} {error.get('message') or ''}".strip()
        return key, LLMError(f"{self.label}: batch request failed: {message}"), True
