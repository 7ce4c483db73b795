"""The llm linking baseline's task: which KB relation does a marked span express?

The span is sent marked ``[[…]]`` in its abstract with every KB label; the answer names one
label, or ``NONE``. An answer without a label is unparsable; ``NONE`` and a label the KB does not
know are rejected (``none``, ``unknown_label``). The value is the named label's relation id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldloop.kb import KB
from goldloop.llm.answer import Unparsable, json_object
from goldloop.llm.base import LLMRequest
from goldloop.llm.tasks.task import Rejected

NONE_LABEL = "NONE"
MARK_OPEN, MARK_CLOSE = "[[", "]]"
MAX_TOKENS = 64

LINKING_SYSTEM_PROMPT = (
    "You link a marked predicate mention in a scientific abstract to a relation of a knowledge "
    "base. The mention is enclosed in [[ and ]]. Answer with the one relation label from the "
    "list that the marked words express between their arguments, exactly as listed, or NONE when "
    "no listed relation fits. A label and its converse (e.g. 'regulates' and 'regulated by') are "
    "both listed: pick the one that reads correctly with the subject before the mention."
)


def marked(text: str, a: int, b: int) -> str:
    """``text`` with ``[a, b)`` enclosed in the marks."""
    return f"{text[:a]}{MARK_OPEN}{text[a:b]}{MARK_CLOSE}{text[b:]}"


@dataclass(frozen=True)
class Span:
    """A span ``[a, b)`` of ``text`` to be linked: the linking task's question.

    Not the core :class:`goldloop.formats.mention.Mention`: it has no KB id yet (that is the
    task's answer), and the task reads only the text around it, not a document.
    """

    text: str
    a: int
    b: int


class LinkingTask:
    """A relation id for each marked :class:`Span`, chosen among every label of ``kb``."""

    name = "linking"

    def __init__(self, kb: KB, max_tokens: int = MAX_TOKENS) -> None:
        self.kb = kb
        self.max_tokens = max_tokens
        self.labels = sorted((relation.label for relation in kb), key=str.casefold)
        self.schema: dict[str, Any] = {
            "type": "object",
            "properties": {"label": {"type": "string", "enum": [*self.labels, NONE_LABEL]}},
            "required": ["label"],
            "additionalProperties": False,
        }

    def request(self, span: Span) -> LLMRequest:
        text, a, b = span.text, span.a, span.b
        listing = "\n".join(f"- {label}" for label in self.labels)
        question = f"Which relation does {MARK_OPEN}{text[a:b]}{MARK_CLOSE} express?"
        user = f"Relations:\n{listing}\n\nAbstract:\n{marked(text, a, b)}\n\n{question}"
        return LLMRequest(LINKING_SYSTEM_PROMPT, user, self.schema, self.max_tokens)

    def read(self, text: str) -> str:
        """The named relation's id (the matched label's: scoring folds it)."""
        label = json_object(text).get("label")
        if not isinstance(label, str):
            raise Unparsable(f"no label in the answer (got {label!r})")
        if label.strip().upper() == NONE_LABEL:
            raise Rejected("none")
        relation = self.kb.lookup(label)
        if relation is None:
            raise Rejected("unknown_label")
        return relation.entity_id
