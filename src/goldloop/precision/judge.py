"""The LLM judge: does the passage, at the marked mention, state the claimed relation?

One request per mention, through :mod:`goldloop.llm.runner` (cached and retried by the provider).
The answer is a verdict among ``supported``, ``contradicted``, ``not_found``; an answer that
cannot be read or was cut off, or a request that failed, leaves the mention ``unchecked`` with the
reason, counted in the report (failed requests are listed there too). An answer that is not JSON
is never cached, so a re-run asks for it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm import LLMError, LLMRequest, Provider
from goldloop.llm.answer import FAILED, TRUNCATED, UNPARSABLE, Unparsable, parse_json_answer, usable
from goldloop.llm.runner import run_requests
from goldloop.precision.mentions import LABELS, UNCHECKED, JudgedMention

OPEN, CLOSE = "⟦", "⟧"
MAX_TOKENS = 400

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(LABELS)},
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


def judge_request(mention: JudgedMention, text: str, kb: KB) -> LLMRequest:
    """The request for one mention: the abstract with the mention marked, and the claim."""
    relation = kb.get(mention.entity_id)
    marked = f"{text[: mention.a]}{OPEN}{text[mention.a : mention.b]}{CLOSE}{text[mention.b :]}"
    claim = [f'Relation: "{mention.label}"']
    if relation is not None and relation.description:
        claim.append(f"Definition: {relation.description}")
    if mention.direction:
        claim.append("Direction: " + _DIRECTIONS[mention.direction].format(label=mention.label))
    user = "\n".join([f"Abstract:\n{marked}", "", *claim])
    return LLMRequest(_INSTRUCTIONS, user, VERDICT_SCHEMA, MAX_TOKENS)


def parse_verdict(text: str) -> tuple[str, str | None]:
    """(verdict, reason) from an answer; ``unchecked`` with the problem when it cannot be read."""
    try:
        answer = parse_json_answer(text)
    except Unparsable:
        return UNCHECKED, UNPARSABLE
    verdict = answer.get("verdict") if isinstance(answer, dict) else None
    if verdict not in LABELS:
        return UNCHECKED, f"unknown verdict {verdict!r}"
    reason = answer.get("reason")
    return verdict, reason if isinstance(reason, str) else None


@dataclass
class JudgeRun:
    mentions: list[JudgedMention]
    judge: str
    counts: Counter[str] = field(default_factory=Counter)
    unchecked_reasons: Counter[str] = field(default_factory=Counter)
    usage: Counter[str] = field(default_factory=Counter)
    cached: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "n_mentions": len(self.mentions),
            "verdicts": dict(sorted(self.counts.items())),
            "unchecked_reasons": dict(sorted(self.unchecked_reasons.items())),
            "cached": self.cached,
            "usage": dict(sorted(self.usage.items())),
            "failed": self.failed,
        }


def judge_mentions(
    mentions: Sequence[JudgedMention],
    documents: dict[str, Document],
    kb: KB,
    provider: Provider,
    advance: Callable[[], None] | None = None,
    concurrency: int = 8,
) -> JudgeRun:
    """Judge every mention, ``concurrency`` requests in flight; ``advance`` ticks after each."""
    requests = [judge_request(m, documents[m.doc_id].text, kb) for m in mentions]
    tick = None if advance is None else (lambda _, __: advance())
    answers = run_requests(
        provider,
        requests,
        concurrency=concurrency,
        usable=usable(parse_json_answer),
        on_answer=tick,
    )
    run = JudgeRun([], provider.tag)
    for mention, answer in zip(mentions, answers, strict=True):
        reason: str | None
        if isinstance(answer, LLMError):
            verdict, reason = UNCHECKED, FAILED
            run.failed.append({"key": mention.key, "error": str(answer)})
        else:
            verdict, reason = (
                (UNCHECKED, TRUNCATED) if answer.truncated else parse_verdict(answer.text)
            )
            run.cached += answer.cached
            run.usage.update(answer.usage)
        if verdict == UNCHECKED:
            run.unchecked_reasons[reason or ""] += 1
        run.counts[verdict] += 1
        run.mentions.append(mention.judged(verdict, reason))
    return run
