"""Reading an LLM's answer: the one JSON-answer parser, and the outcomes every LLM task shares.

Every task (:mod:`goldloop.llm.tasks`) asks for JSON and reads the answer with
:func:`parse_json_answer`: surrounding whitespace and a Markdown code fence (three backticks, with
or without ``json``; the closing one optional) are stripped, the rest must be one JSON value, else
:class:`Unparsable` says why. A task's own reader raises :class:`Unparsable` too when the value
does not have the shape it asked for; :func:`goldloop.llm.tasks.task.cache_check` turns that reader
into the runner's ``usable=`` check, so an answer the task cannot parse is never cached and a
re-run asks again.

Outcomes, one vocabulary (:data:`Outcome`): ``ok``, ``rejected`` (parsed, but not something the
task can use: an unknown label or verdict), ``truncated`` (cut off at the token limit),
``unparsable``, ``failed`` (the request failed). Reports spell ``truncated``, ``unparsable`` and
``failed`` this way; what a report writes for ``ok`` and ``rejected`` stays the task's own (the llm
baseline's ``answered``, ``none`` and ``unknown_label``, the judge's verdicts and
``unknown verdict ...``, the decoder's per-item rejection reasons).
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from goldloop.files import jsonl

Outcome = Literal["ok", "rejected", "truncated", "unparsable", "failed"]
OK: Final = "ok"
REJECTED: Final = "rejected"
TRUNCATED: Final = "truncated"
UNPARSABLE: Final = "unparsable"
FAILED: Final = "failed"
OUTCOMES: tuple[Outcome, ...] = (OK, REJECTED, TRUNCATED, UNPARSABLE, FAILED)

FENCE = "```"


class Unparsable(ValueError):
    """The answer is not the JSON the task asked for (the message says why)."""


def parse_json_answer(text: str) -> Any:
    """The JSON value an answer holds, inside a code fence or not; :class:`Unparsable` when it
    holds none (the message is ``not JSON: `` and the decoder's error)."""
    stripped = text.strip()
    if stripped.startswith(FENCE):
        stripped = stripped.removeprefix(FENCE).removeprefix("json")
    stripped = stripped.removesuffix(FENCE).strip()
    try:
        return jsonl.loads(stripped)
    except json.JSONDecodeError as exc:
        raise Unparsable(f"not JSON: {exc}") from exc


def json_object(text: str) -> dict[str, Any]:
    """The JSON object an answer holds; :class:`Unparsable` for anything else."""
    value = parse_json_answer(text)
    if not isinstance(value, dict):
        raise Unparsable(f"expected a JSON object, got {type(value).__name__}")
    return value
