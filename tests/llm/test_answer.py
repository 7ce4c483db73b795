"""The one JSON-answer parser every LLM task reads its answers with, and its ``usable`` check."""

from __future__ import annotations

import json

import pytest

from goldloop.llm.answer import (
    OUTCOMES,
    Unparsable,
    json_object,
    parse_json_answer,
)

VALUE = {"verdict": "supported", "reason": "ok"}


@pytest.mark.parametrize(
    "answer",
    [
        "VALUE",
        "  \n VALUE \n",
        "```json\nVALUE\n```",
        "```json VALUE```",
        "```\nVALUE\n```",
        "  ```json\n\n VALUE \n\n```  ",
        "```json\nVALUE",  # the closing fence cut off: the judge and suggestions read it
        "VALUE\n```",
    ],
)
def test_whitespace_and_a_code_fence_are_stripped(answer: str) -> None:
    text = answer.replace("VALUE", json.dumps(VALUE))
    assert parse_json_answer(text) == VALUE
    assert json_object(text) == VALUE


@pytest.mark.parametrize(
    ("answer", "value"), [("[1, 2]", [1, 2]), ('"text"', "text"), ("42", 42), ("null", None)]
)
def test_any_json_value_parses(answer: str, value: object) -> None:
    assert parse_json_answer(f"```json\n{answer}\n```") == value


@pytest.mark.parametrize(
    "answer", ["", "   ", "I think so", '{"verdict": ', "```json\n```", "Sure: ```json\n{}\n```"]
)
def test_what_is_not_json_is_unparsable(answer: str) -> None:
    with pytest.raises(Unparsable, match=r"^not JSON: "):
        parse_json_answer(answer)


def test_the_reason_names_the_decoders_error_inside_the_fence() -> None:
    # the decoder's position is counted in the fenced text, as pre-annotation reports it
    with pytest.raises(Unparsable) as fenced:
        parse_json_answer("```json\n  not json \n```")
    with pytest.raises(Unparsable) as bare:
        parse_json_answer("not json")
    expected = "not JSON: Expecting value: line 1 column 1 (char 0)"
    assert str(fenced.value) == str(bare.value) == expected


@pytest.mark.parametrize("answer", ["[1]", '"supported"', "null"])
def test_json_object_wants_an_object(answer: str) -> None:
    with pytest.raises(Unparsable, match="expected a JSON object"):
        json_object(answer)


def test_the_outcome_vocabulary() -> None:
    assert OUTCOMES == ("ok", "rejected", "truncated", "unparsable", "failed")
