"""The LLM judge over a precision study's mentions: one :class:`~goldloop.llm.tasks.judge.JudgeTask`
request per mention, run through :func:`goldloop.llm.tasks.task.run_task` (cached and retried by
the provider).

A verdict the judge cannot give (a rejected, cut-off or unparsable answer, or a failed request)
leaves the mention ``unchecked`` with the reason, counted in the report (failed requests are listed
there too). An unparsable answer is never cached, so a re-run asks for it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm import Provider
from goldloop.llm.answer import FAILED, OK, REJECTED
from goldloop.llm.tasks.judge import Claim, JudgeTask
from goldloop.llm.tasks.task import TaskReport, TaskResult, run_task
from goldloop.precision.mentions import UNCHECKED, JudgedMention


def claim_of(mention: JudgedMention, text: str, kb: KB) -> Claim:
    """The claim to judge for one mention of ``text``: its label, definition and direction."""
    relation = kb.get(mention.entity_id)
    definition = relation.description if relation is not None else None
    return Claim(text, mention, definition)


def verdict_of(result: TaskResult[tuple[str, str | None]]) -> tuple[str, str | None]:
    """(verdict, reason); ``unchecked`` with the outcome (or the rejection) when there is none."""
    if result.outcome == OK and result.value is not None:
        return result.value
    return UNCHECKED, result.detail if result.outcome == REJECTED else result.outcome


@dataclass
class JudgeRun:
    mentions: list[JudgedMention]
    judge: str
    counts: Counter[str] = field(default_factory=Counter)
    outcomes: TaskReport = field(default_factory=lambda: TaskReport(JudgeTask.name))
    failed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unchecked_reasons(self) -> Counter[str]:
        """Why mentions stayed unchecked: a rejection's reason, or the outcome's name."""
        reasons = Counter(self.outcomes.reasons)
        reasons.update({o: n for o, n in self.outcomes.outcomes.items() if o not in (OK, REJECTED)})
        return reasons

    @property
    def cached(self) -> int:
        return self.outcomes.cached

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "n_mentions": len(self.mentions),
            "verdicts": dict(sorted(self.counts.items())),
            "unchecked_reasons": dict(sorted(self.unchecked_reasons.items())),
            "cached": self.cached,
            "usage": dict(sorted(self.outcomes.usage.items())),
            "failed": self.failed,
        }


@dataclass(frozen=True)
class JudgeReport:
    """A judge run's report (``<verdicts>.report.json``): the run's figures, and what of the
    system's file was not judged (rows that abstained, rows left out by reason) and its path."""

    run: JudgeRun
    abstained_rows: int
    rows_left_out: dict[str, int]
    system: str

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.run.to_dict(),
            "abstained_rows": self.abstained_rows,
            "rows_left_out": self.rows_left_out,
            "system": self.system,
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
    claims = [claim_of(m, documents[m.doc_id].text, kb) for m in mentions]
    tick = None if advance is None else (lambda _, __: advance())
    results = run_task(provider, JudgeTask(), claims, concurrency=concurrency, on_result=tick)
    run = JudgeRun([], provider.tag)
    for index, (mention, result) in enumerate(zip(mentions, results, strict=True)):
        run.outcomes.add(index, result)
        if result.outcome == FAILED:
            run.failed.append({"key": mention.key, "error": result.detail})
        verdict, reason = verdict_of(result)
        run.counts[verdict] += 1
        run.mentions.append(mention.judged(verdict, reason))
    return run
