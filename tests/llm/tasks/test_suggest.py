"""Interactive suggestions' task: its request, its reading of a relation, and its cache rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.kb import KB
from goldloop.llm.base import LLMResponse
from goldloop.llm.tasks.suggest import Phrase, SuggestTask
from goldloop.llm.tasks.task import outcome_of
from tests.fakes.llm_server import FakeLLMServer
from tests.llm.tasks.conftest import never_caches_the_unparsable


def test_the_request_holds_the_sentence_the_phrase_and_its_occurrence(kb: KB) -> None:
    task = SuggestTask(kb)
    once = task.request(Phrase("A boosts B.", "boosts"))
    assert once.user == "Sentence: A boosts B.\nPhrase: boosts"
    twice = task.request(Phrase("A boosts B; C boosts D.", "boosts", 2))
    assert twice.user.endswith("Phrase: boosts (occurrence 2 in the sentence)")
    assert "- inhibits" in task.system and once.system == task.system


def _read(kb: KB, answer: object) -> tuple[str, object, str | None]:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    result = outcome_of(SuggestTask(kb), LLMResponse(text, truncated=False))
    return result.outcome, result.value, result.detail


def test_reading_a_relation(kb: KB) -> None:
    inhibits = kb.lookup("inhibits")
    assert inhibits is not None
    ok = _read(kb, {"label": "inhibits", "direction": "forward"})
    assert ok == ("ok", (inhibits.entity_id, "forward"), None)
    assert _read(kb, {"label": "teleports", "direction": "forward"})[::2] == (
        "rejected",
        "unknown_label",
    )
    assert _read(kb, {"direction": "forward"})[::2] == ("rejected", "no_label")
    assert _read(kb, "inhibits, forward")[0] == "unparsable"
    assert _read(kb, '["inhibits"]')[0] == "unparsable"


@pytest.mark.parametrize("answer", ["inhibits, forward", '{"label": "inhibits"'])
def test_an_unparsable_suggestion_is_never_cached(
    llm_server: FakeLLMServer, kb: KB, tmp_path: Path, answer: str
) -> None:
    phrases = [Phrase("A boosts B.", "boosts"), Phrase("C raises D.", "raises")]
    good = json.dumps({"label": "inhibits", "direction": "forward"})
    last = never_caches_the_unparsable(
        llm_server, tmp_path / "cache.sqlite", SuggestTask(kb), phrases,
        unparsable=answer, good=good,
    )  # fmt: skip
    assert all(r.outcome == "ok" for r in last)
