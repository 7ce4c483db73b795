"""The llm linking baseline's task: its request, its reading of a label, and its cache rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.kb import KB
from goldloop.llm.base import LLMResponse
from goldloop.llm.tasks.linking import LinkingTask, Span
from goldloop.llm.tasks.task import outcome_of
from tests.fakes.llm_server import FakeLLMServer
from tests.llm.tasks.conftest import never_caches_the_unparsable


def test_the_request_marks_the_span_and_constrains_the_answer(kb: KB) -> None:
    request = LinkingTask(kb).request(Span("A inhibits B.", 2, 10))
    assert (
        "A [[inhibits]] B." in request.user and "Which relation does [[inhibits]]" in request.user
    )
    enum = request.schema["properties"]["label"]["enum"]
    assert enum[-1] == "NONE" and len(enum) == len(kb) + 1
    assert enum[:-1] == sorted(enum[:-1], key=str.casefold)
    assert request.max_tokens == 64


@pytest.mark.parametrize(
    ("answer", "outcome", "detail"),
    [
        ('{"label": "inhibits"}', "ok", None),
        ('{"label": " none "}', "rejected", "none"),
        ('{"label": "frobnicates"}', "rejected", "unknown_label"),
        ('{"choice": "inhibits"}', "unparsable", "no label in the answer (got None)"),
        ("NONE, I think", "unparsable", "not JSON: Expecting value: line 1 column 1 (char 0)"),
    ],
)
def test_reading_a_label(kb: KB, answer: str, outcome: str, detail: str | None) -> None:
    result = outcome_of(LinkingTask(kb), LLMResponse(answer, truncated=False))
    assert (result.outcome, result.detail) == (outcome, detail)
    relation = kb.lookup("inhibits")
    assert relation is not None
    assert result.value == (relation.entity_id if outcome == "ok" else None)


def test_an_unparsable_label_is_never_cached(
    llm_server: FakeLLMServer, kb: KB, tmp_path: Path
) -> None:
    spans = [Span("A inhibits B.", 2, 10), Span("C activates D.", 2, 11)]
    last = never_caches_the_unparsable(
        llm_server, tmp_path / "cache.sqlite", LinkingTask(kb), spans,
        unparsable='{"choice": "inhibits"}', good='{"label": "NONE"}',
    )  # fmt: skip
    assert [(r.outcome, r.detail) for r in last] == [("rejected", "none")] * 2
