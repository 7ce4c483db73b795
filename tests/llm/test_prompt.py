"""The prompt built from the KB and the defensive parsing of answers."""

from __future__ import annotations

import re

import pytest

from goldloop.kb import KB
from goldloop.llm.prompt import (
    OUTPUT_SCHEMA,
    Unparsable,
    clean_definition,
    parse_mentions,
    system_prompt,
)


def test_clean_definition_drops_prefixes_urls_and_formal_tails() -> None:
    raw = "[copied from inverse property 'occurs in'] x precedes y (https://example.org/ro) when x ends first, see http://x.org/a. Formally: ω(x) <= α(y)."
    assert clean_definition(raw) == "x precedes y when x ends first, see"


def test_clean_definition_cuts_on_a_word_boundary() -> None:
    text = "word " * 60
    cleaned = clean_definition(text, limit=32)
    assert cleaned == "word word word word word word…"
    assert len(cleaned) <= 33


def test_prompt_offers_canonical_labels_only_and_no_ids(kb: KB) -> None:
    prompt = system_prompt(kb)
    lines = [line for line in prompt.splitlines() if line.startswith("- ") and ":" not in line[:3]]
    labels = {line[2:].split(":")[0].split(" [")[0] for line in lines}
    canonical = {r.label for r in kb.canonical_relations()}
    assert canonical <= labels
    assert not labels & {r.label for r in kb if not r.is_canonical}
    for relation in kb:
        assert relation.entity_id not in prompt
    assert not re.search(r"https?://", prompt)
    assert "Formally:" not in prompt


def test_prompt_gives_converse_wording_and_marks_symmetric(kb: KB) -> None:
    prompt = system_prompt(kb)
    assert re.search(r'^- activates: .*\[converse: "activated by"\]$', prompt, flags=re.M)
    assert re.search(r"^- interacts with: .*\[symmetric\]$", prompt, flags=re.M)
    assert re.search(r"^- has part: [^\[]*$", prompt, flags=re.M)  # no converse in this KB


def test_schema_requires_the_contract_fields() -> None:
    item = OUTPUT_SCHEMA["properties"]["mentions"]["items"]
    assert item["required"] == ["surface", "occurrence", "label", "direction"]
    assert set(item["properties"]) == {
        "surface", "occurrence", "label", "direction", "subject_text", "object_text", "confidence",
    }  # fmt: skip


ITEM = {"surface": "activates", "occurrence": 1, "label": "activates", "direction": "forward"}


@pytest.mark.parametrize(
    "answer",
    [
        '{"mentions": [ITEM]}',
        "[ITEM]",
        '{"results": [ITEM]}',
        "ITEM",
        '```json\n{"mentions": [ITEM]}\n```',
    ],
)
def test_parse_unwraps(answer: str) -> None:
    import json

    assert parse_mentions(answer.replace("ITEM", json.dumps(ITEM))) == [ITEM]


@pytest.mark.parametrize(
    "answer", ["", "not json", '{"mentions": ', "42", '{"a": [1], "b": [2]}', '"text"']
)
def test_parse_rejects_what_is_not_a_list_of_mentions(answer: str) -> None:
    with pytest.raises(Unparsable):
        parse_mentions(answer)


def test_parse_keeps_malformed_items_for_the_report() -> None:
    assert parse_mentions('[1, {"surface": "x"}]') == [1, {"surface": "x"}]
