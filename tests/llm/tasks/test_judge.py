"""The precision judge's task: its request, its reading of a verdict, and its cache rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.formats.mention import Mention
from goldloop.llm.base import LLMResponse
from goldloop.llm.tasks.judge import VERDICTS, Claim, JudgeTask
from goldloop.llm.tasks.task import outcome_of
from goldloop.precision.llm_judge import verdict_of
from tests.fakes.llm_server import FakeLLMServer
from tests.llm.tasks.conftest import never_caches_the_unparsable


def claim_on(
    text: str, surface: str, label: str | None, direction: str | None = None, **kw: str
) -> Claim:
    """A claim on the first ``surface`` of ``text`` (a mention of the KB id ``X``)."""
    a = text.index(surface)
    return Claim(text, Mention("d", a, a + len(surface), "X", surface, label, direction), **kw)


def test_the_request_marks_the_mention_and_states_the_claim() -> None:
    text = "C is activated by D."
    claim = claim_on(text, "activated by", "activates", "inverse", definition="makes active")
    request = JudgeTask().request(claim)
    assert "C is ⟦activated by⟧ D." in request.user
    assert 'Relation: "activates"' in request.user and "Definition: makes active" in request.user
    assert "as the converse" in request.user
    assert request.schema["properties"]["verdict"]["enum"] == list(VERDICTS)
    bare = JudgeTask().request(claim_on(text, "activated by", "activates"))
    assert "Definition" not in bare.user and "Direction" not in bare.user
    # Without a label, the claim names the relation by its KB id.
    assert 'Relation: "X"' in JudgeTask().request(claim_on(text, "activated by", None)).user


@pytest.mark.parametrize(
    ("answer", "outcome", "expected"),
    [
        ('{"verdict": "not_found", "reason": "no relation"}', "ok", ("not_found", "no relation")),
        ('```json\n{"verdict": "supported", "reason": "ok"}```', "ok", ("supported", "ok")),
        ('{"verdict": "supported", "reason": 3}', "ok", ("supported", None)),
        ('{"verdict": "maybe"}', "rejected", ("unchecked", "unknown verdict 'maybe'")),
        ("I think so", "unparsable", ("unchecked", "unparsable")),
        ('["supported"]', "unparsable", ("unchecked", "unparsable")),  # JSON, but no object
    ],
)
def test_reading_a_verdict(answer: str, outcome: str, expected: tuple[str, str | None]) -> None:
    result = outcome_of(JudgeTask(), LLMResponse(answer, truncated=False))
    assert result.outcome == outcome
    assert verdict_of(result) == expected


def test_an_unparsable_verdict_is_never_cached(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    claims = [
        claim_on("A inhibits B.", "inhibits", "inhibits"),
        claim_on("C activates D.", "activates", "activates"),
    ]
    last = never_caches_the_unparsable(
        llm_server, tmp_path / "cache.sqlite", JudgeTask(), claims,
        unparsable='{"verdict": ', good='{"verdict": "supported", "reason": "stated"}',
    )  # fmt: skip
    assert [r.value for r in last] == [("supported", "stated")] * 2
