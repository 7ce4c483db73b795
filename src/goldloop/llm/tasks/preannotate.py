"""Pre-annotation's task: every relation mention of one abstract, linked to the KB.

The prompt, its answer schema and the reading of its list of mentions are
:mod:`goldloop.llm.prompt`'s (built once per KB). An answer that holds no list of mentions is
unparsable; the items of one that does are judged one by one afterwards, with the text and its
parse (:mod:`goldloop.llm.decode`), so no answer is rejected whole.
"""

from __future__ import annotations

from typing import Any

from goldloop.kb import KB
from goldloop.llm.base import LLMRequest
from goldloop.llm.prompt import OUTPUT_SCHEMA, parse_mentions, system_prompt, user_prompt

DEFAULT_MAX_TOKENS = 16000


class PreannotationTask:
    """The list of items the model returned for each abstract text, as given."""

    name = "preannotate"

    def __init__(self, kb: KB, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.system = system_prompt(kb)
        self.max_tokens = max_tokens

    def request(self, text: str) -> LLMRequest:
        return LLMRequest(self.system, user_prompt(text), OUTPUT_SCHEMA, self.max_tokens)

    def read(self, text: str) -> list[Any]:
        return parse_mentions(text)
