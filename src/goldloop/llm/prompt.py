"""The annotation prompt built from the KB, its output schema, and reading its list of mentions.

The prompt offers canonical labels only (one line each: label, a cleaned short definition, the
converse wording, a symmetric mark) and no ids; the model answers with labels and a verbatim
surface plus a 1-based occurrence, never with offsets.
"""

from __future__ import annotations

import re
from typing import Any

from goldloop.kb import DIRECTIONS, KB, Relation
from goldloop.llm.answer import Unparsable, parse_json_answer

DEFINITION_LIMIT = 160

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mentions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "surface": {"type": "string"},
                    "occurrence": {"type": "integer"},
                    "label": {"type": "string"},
                    "direction": {"type": "string", "enum": list(DIRECTIONS)},
                    "subject_text": {"type": "string"},
                    "object_text": {"type": "string"},
                    "confidence": {"type": "number"},
                },
                "required": ["surface", "occurrence", "label", "direction"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["mentions"],
    "additionalProperties": False,
}

_INSTRUCTIONS = """\
You find relation mentions in one scientific abstract and link each to a relation of the list below.

A relation mention is the word or short phrase of the abstract that states one of these relations
between two things the abstract names, most often a verb group ("inhibits", "is regulated by",
"leads to"). Mark only mentions whose relation is in the list.

For every mention give:
- surface: the mention copied exactly from the abstract, character for character (same case,
  same spacing, no added or dropped words); keep it short: the predicate, not the whole clause;
- occurrence: which occurrence of that exact string in the abstract you mean, counting from 1
  in reading order;
- label: the relation's label exactly as written in the list;
- direction: "forward" when the text states it in the label's own order ("A inhibits B"),
  "inverse" when the text states the converse ("B is inhibited by A"), "symmetric" for the
  relations marked symmetric (and only for them), "na" when the text does not settle it;
- subject_text and object_text (optional): the two things related, copied from the abstract,
  such that "subject <label> object" holds;
- confidence (optional): from 0 to 1.

Answer with JSON only: {"mentions": [...]}; an empty list when the abstract has no mention.

Relations (label: definition):
"""


def clean_definition(text: str, limit: int = DEFINITION_LIMIT) -> str:
    """A short definition: no bracketed prefix, URL or "Formally: …" tail; cut on a word boundary."""
    text = re.sub(r"^\s*(?:\[[^\]]*\]\s*)+", "", text)
    text = re.sub(r"https?://[^\s)\]>]+", "", text)
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text)  # brackets that held only a URL
    text = re.split(r"\bFormally:", text, maxsplit=1)[0]
    text = " ".join(text.split()).strip(" ,;:")
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:(") + "…"


def relation_line(relation: Relation, kb: KB) -> str:
    """One prompt line: label, definition, converse wording or symmetric mark."""
    definition = clean_definition(relation.description)
    line = f"- {relation.label}: {definition}" if definition else f"- {relation.label}"
    converse = kb.converse_of(relation.entity_id)
    if relation.is_symmetric:
        line += " [symmetric]"
    elif converse is not None:
        line += f' [converse: "{converse.label}"]'
    return line


_prompts: dict[str, str] = {}  # by KB sha256


def system_prompt(kb: KB) -> str:
    """The instructions and one line per canonical relation, in KB order (built once per KB
    content: the backend asks for it on every ``/predict``)."""
    prompt = _prompts.get(kb.sha256)
    if prompt is None:
        lines = [relation_line(r, kb) for r in kb.canonical_relations()]
        prompt = _prompts[kb.sha256] = _INSTRUCTIONS + "\n".join(lines) + "\n"
    return prompt


def user_prompt(text: str) -> str:
    return f"Abstract:\n{text}"


def parse_mentions(answer: str) -> list[Any]:
    """The list of items the model returned; a bare object wrapping the list is unwrapped.

    Items are returned as given (even malformed ones) so the decoder can report each of them;
    :class:`~goldloop.llm.answer.Unparsable` when the answer is not JSON (read by
    :func:`~goldloop.llm.answer.parse_json_answer`) or not a list of mentions.
    """
    data = parse_json_answer(answer)
    if isinstance(data, dict):
        if "surface" in data:
            return [data]
        lists = [value for value in data.values() if isinstance(value, list)]
        if "mentions" in data and isinstance(data["mentions"], list):
            return list(data["mentions"])
        if len(lists) == 1:
            return list(lists[0])
        raise Unparsable(
            f"an object without one list of mentions (keys: {', '.join(map(str, data))})"
        )
    if isinstance(data, list):
        return data
    raise Unparsable(f"expected a list of mentions, got {type(data).__name__}")
