"""The precision judge's task: does the passage, at the marked mention, state the claimed relation?

The abstract is sent with the mention between ``⟦`` and ``⟧`` and the claim (label, definition,
direction); the answer is a verdict among :data:`VERDICTS` with a one-sentence reason. An answer
that is not a JSON object is unparsable; one whose verdict is not among them is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldloop.formats.mention import Mention
from goldloop.llm.answer import json_object
from goldloop.llm.base import LLMRequest
from goldloop.llm.tasks.task import Rejected

VERDICTS = ("supported", "contradicted", "not_found")
OPEN, CLOSE = "⟦", "⟧"
MAX_TOKENS = 400

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}

_INSTRUCTIONS = f"""\
You check one claim about a scientific abstract. In the abstract, the mention under review is
the text between {OPEN} and {CLOSE}. The claim says that this mention states the given relation,
read in the given direction, between two things the abstract names.

Answer with a verdict:
- "supported": the abstract, at this mention, states this relation in this direction;
- "contradicted": the mention states something else: another relation, the reverse
  direction, or a negation of the relation;
- "not_found": the mention states no relation between two named things.
Give a one-sentence reason. Answer in JSON only."""

_DIRECTIONS = {
    "forward": "in the label's own order (subject {label} object)",
    "inverse": "as the converse (the text says object {label} subject, e.g. in the passive)",
    "symmetric": "either way (the relation is symmetric)",
    "na": "in a direction the text does not settle",
}


@dataclass(frozen=True)
class Claim:
    """One mention to judge: the abstract it sits in, the mention (its span, the label it claims
    (its KB id without one) and direction), and the relation's definition."""

    text: str
    mention: Mention
    definition: str | None = None

    @property
    def label(self) -> str:
        return self.mention.label or self.mention.entity_id


class JudgeTask:
    """A verdict and its reason (None when the answer gives none) for each :class:`Claim`."""

    name = "judge"

    def request(self, claim: Claim) -> LLMRequest:
        """The abstract with the mention marked, and the claim."""
        text, a, b, direction = (
            claim.text,
            claim.mention.a,
            claim.mention.b,
            claim.mention.direction,
        )
        marked = f"{text[:a]}{OPEN}{text[a:b]}{CLOSE}{text[b:]}"
        lines = [f'Relation: "{claim.label}"']
        if claim.definition:
            lines.append(f"Definition: {claim.definition}")
        if direction:
            lines.append("Direction: " + _DIRECTIONS[direction].format(label=claim.label))
        user = "\n".join([f"Abstract:\n{marked}", "", *lines])
        return LLMRequest(_INSTRUCTIONS, user, VERDICT_SCHEMA, MAX_TOKENS)

    def read(self, text: str) -> tuple[str, str | None]:
        answer = json_object(text)
        verdict = answer.get("verdict")
        if verdict not in VERDICTS:
            raise Rejected(f"unknown verdict {verdict!r}")
        reason = answer.get("reason")
        return verdict, reason if isinstance(reason, str) else None
