"""Pre-annotation's task: its request is the KB prompt, its reading the list of mentions, and an
answer without one is never cached."""

from __future__ import annotations

import json
from pathlib import Path

from goldloop.kb import KB
from goldloop.llm.base import LLMResponse
from goldloop.llm.prompt import OUTPUT_SCHEMA, system_prompt
from goldloop.llm.tasks.preannotate import DEFAULT_MAX_TOKENS, PreannotationTask
from goldloop.llm.tasks.task import outcome_of
from tests.fakes.llm_server import FakeLLMServer
from tests.llm.tasks.conftest import never_caches_the_unparsable

ITEM = {"surface": "inhibits", "occurrence": 1, "label": "inhibits", "direction": "forward"}


def test_the_request_is_the_kb_prompt_and_the_abstract(kb: KB) -> None:
    request = PreannotationTask(kb).request("A inhibits B.")
    assert request.system == system_prompt(kb)
    assert request.user == "Abstract:\nA inhibits B."
    assert (request.schema, request.max_tokens) == (OUTPUT_SCHEMA, DEFAULT_MAX_TOKENS)
    assert PreannotationTask(kb, 100).request("x").max_tokens == 100


def test_items_are_read_as_given_and_a_list_is_never_rejected_whole(kb: KB) -> None:
    task = PreannotationTask(kb)
    odd = [ITEM, "not an item", {"surface": ""}]
    result = outcome_of(task, LLMResponse(json.dumps({"mentions": odd}), truncated=False))
    assert (result.outcome, result.value) == ("ok", odd)
    bare = outcome_of(task, LLMResponse(json.dumps(ITEM), truncated=False))
    assert bare.value == [ITEM]
    assert outcome_of(task, LLMResponse('{"a": 1}', truncated=False)).outcome == "unparsable"


def test_an_answer_without_mentions_is_never_cached(
    llm_server: FakeLLMServer, kb: KB, tmp_path: Path
) -> None:
    last = never_caches_the_unparsable(
        llm_server, tmp_path / "cache.sqlite", PreannotationTask(kb), ["A inhibits B.", "C."],
        unparsable='{"mentions": [', good=json.dumps({"mentions": [ITEM]}),
    )  # fmt: skip
    assert [r.value for r in last] == [[ITEM]] * 2
