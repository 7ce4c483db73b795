"""Interactive suggestions' task: the relation and direction of a phrase an annotator marked.

The prompt is the sentence alone and the phrase (with which occurrence in the sentence, when it
repeats), over the KB's canonical relations (:func:`goldloop.llm.prompt.relation_line`). An
answer that is not a JSON object is unparsable; one without a label, or naming a label the KB does
not know, is rejected (``no_label``, ``unknown_label``). The value is the folded relation id and
its direction (None when the KB does not allow the direction given, or none was).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldloop.kb import DIRECTIONS, KB
from goldloop.llm.answer import json_object
from goldloop.llm.base import LLMRequest
from goldloop.llm.prompt import relation_line
from goldloop.llm.tasks.task import Rejected

MAX_TOKENS = 400

SUGGESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "direction": {"type": "string", "enum": list(DIRECTIONS)},
    },
    "required": ["label", "direction"],
    "additionalProperties": False,
}

_INSTRUCTIONS = """\
An annotator marked a phrase of one sentence from a scientific abstract as a relation mention.
Name the relation of the list below that the phrase states, and its direction: "forward" when the
sentence states it in the label's own order ("A inhibits B"), "inverse" when it states the converse
("B is inhibited by A"), "symmetric" for relations marked symmetric (only them), "na" when the
sentence does not settle it.

Answer with JSON only: {"label": "<a label exactly as written in the list>", "direction": "..."}.

Relations (label: definition):
"""


@dataclass(frozen=True)
class Phrase:
    """The marked phrase, its sentence, and which occurrence in it (None: the only one)."""

    sentence: str
    surface: str
    occurrence: int | None = None


class SuggestTask:
    """A relation id and direction for each :class:`Phrase`, among ``kb``'s relations."""

    name = "suggest"

    def __init__(self, kb: KB) -> None:
        self.kb = kb
        self.system = _INSTRUCTIONS + "\n".join(
            relation_line(r, kb) for r in kb.canonical_relations()
        )

    def request(self, phrase: Phrase) -> LLMRequest:
        user = f"Sentence: {phrase.sentence}\nPhrase: {phrase.surface}"
        if phrase.occurrence is not None:
            user += f" (occurrence {phrase.occurrence} in the sentence)"
        return LLMRequest(self.system, user, SUGGESTION_SCHEMA, MAX_TOKENS)

    def read(self, text: str) -> tuple[str, str | None]:
        data = json_object(text)
        label = data.get("label")
        if not isinstance(label, str):
            raise Rejected("no_label")
        direction = data.get("direction")
        direction = direction if isinstance(direction, str) and direction in DIRECTIONS else None
        folded = self.kb.decode_label(label, direction)
        if folded is None:
            raise Rejected("unknown_label")
        if folded.direction is not None and not self.kb.direction_allowed(
            folded.entity_id, folded.direction
        ):
            return folded.entity_id, None
        return folded.entity_id, folded.direction
