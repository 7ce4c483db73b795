"""Baseline systems on the gold: ``lexical`` (the floor) and ``llm`` (linking-only).

``lexical`` is the shared mention detector (:func:`goldloop.text.nlp.detect_mentions`): spans and ids
from lemma matches to KB labels, scored end-to-end and linking-only. ``llm`` is given each gold
span marked in its abstract and picks one KB label or ``NONE``, through the providers and cache
of :mod:`goldloop.llm`; it is scored linking-only. Use a model that did not annotate the gold, or
the comparison is circular (nothing enforces this).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm.answer import FAILED, TRUNCATED, UNPARSABLE, Unparsable, json_object, usable
from goldloop.scoring.inputs import SystemPredictions, rows_to_predictions
from goldloop.scoring.regimes import score_system

if TYPE_CHECKING:
    from goldloop.llm import Provider

BASELINES = ("lexical", "llm")
# Which regimes each baseline is scored in.
BASELINE_REGIMES = {"lexical": ("end-to-end", "linking-only"), "llm": ("linking-only",)}
NONE_LABEL = "NONE"
MARK_OPEN, MARK_CLOSE = "[[", "]]"

LINKING_SYSTEM_PROMPT = (
    "You link a marked predicate mention in a scientific abstract to a relation of a knowledge "
    "base. The mention is enclosed in [[ and ]]. Answer with the one relation label from the "
    "list that the marked words express between their arguments, exactly as listed, or NONE when "
    "no listed relation fits. A label and its converse (e.g. 'regulates' and 'regulated by') are "
    "both listed: pick the one that reads correctly with the subject before the mention."
)


# ``progress(system, total)`` returns the function to call once per unit of work done.
Progress = Callable[[str, int], Callable[[], None]]


def _silent(_: str, __: int) -> Callable[[], None]:
    return lambda: None


@dataclass
class BaselineRun:
    """A baseline's predictions, how long producing them took, and what happened on the way."""

    predictions: SystemPredictions
    wall_time_s: float
    report: dict[str, Any] = field(default_factory=dict)


def lexical_baseline(
    documents: Sequence[Document],
    kb: KB,
    model: str | None = None,
    progress: Progress | None = None,
) -> BaselineRun:
    """Mentions found by the shared detector, one row per mention."""
    from goldloop.text.nlp import detect_mentions, load_nlp, parse_many

    started = time.perf_counter()
    nlp = load_nlp(model)
    step = (progress or _silent)("lexical", len(documents))
    rows: list[dict[str, Any]] = []
    texts = (d.text for d in documents)
    for document, doc in zip(documents, parse_many(texts, nlp=nlp), strict=True):
        rows.extend(
            {
                "doc_id": document.doc_id,
                "a": m.a,
                "b": m.b,
                "entity_id_predicted": m.entity_id,
                "direction_predicted": m.direction,
            }
            for m in detect_mentions(doc, kb)
        )
        step()
    predictions = rows_to_predictions("lexical", None, "lexical", rows, documents)
    return BaselineRun(
        predictions, time.perf_counter() - started, {"mentions": len(rows), "kb_tag": kb.tag}
    )


def linking_request(
    text: str, a: int, b: int, labels: Sequence[str]
) -> tuple[str, str, dict[str, Any]]:
    """The user prompt and answer schema for one marked span: a choice over ``labels`` or NONE."""
    marked = f"{text[:a]}{MARK_OPEN}{text[a:b]}{MARK_CLOSE}{text[b:]}"
    listing = "\n".join(f"- {label}" for label in labels)
    question = f"Which relation does {MARK_OPEN}{text[a:b]}{MARK_CLOSE} express?"
    user = f"Relations:\n{listing}\n\nAbstract:\n{marked}\n\n{question}"
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": [*labels, NONE_LABEL]}},
        "required": ["label"],
        "additionalProperties": False,
    }
    return LINKING_SYSTEM_PROMPT, user, schema


def llm_baseline(
    documents: Sequence[Document],
    kb: KB,
    provider: Provider,
    max_tokens: int = 64,
    progress: Progress | None = None,
    concurrency: int = 8,
) -> BaselineRun:
    """One constrained choice per gold span, ``concurrency`` requests in flight; answers that
    cannot be used become abstentions, counted by reason (``none``, ``unknown_label``,
    ``unparsable``, ``truncated``, ``failed``: the request failed, listed in ``failed``). An
    unparsable answer is not cached, so a re-run asks for it again."""
    from goldloop.llm import LLMError, LLMRequest
    from goldloop.llm.runner import run_requests

    started = time.perf_counter()
    labels = sorted((relation.label for relation in kb), key=str.casefold)
    spans = [(document, hit) for document in documents for hit in document.ground_truth]
    requests = [
        LLMRequest(*linking_request(document.text, hit.a, hit.b, labels), max_tokens)
        for document, hit in spans
    ]
    step = (progress or _silent)("llm", len(requests))
    answers = run_requests(
        provider,
        requests,
        concurrency=concurrency,
        usable=usable(_read_label),
        on_answer=lambda _, __: step(),
    )
    outcomes: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for (document, hit), answer in zip(spans, answers, strict=True):
        span = {"doc_id": document.doc_id, "a": hit.a, "b": hit.b}
        if isinstance(answer, LLMError):
            entity_id, outcome = None, FAILED
            failed.append({**span, "error": str(answer)})
        else:
            usage.update(answer.usage)
            outcomes["cached" if answer.cached else "called"] += 1
            entity_id, outcome = _decode(answer.text, answer.truncated, kb)
        outcomes[outcome] += 1
        rows.append({**span, "entity_id_predicted": entity_id})
    predictions = rows_to_predictions("llm", None, "llm", rows, documents)
    report = {
        "annotator": provider.tag,
        "requests": len(requests),
        "outcomes": dict(outcomes),
        "usage": dict(usage),
        "failed": failed,
    }
    return BaselineRun(predictions, time.perf_counter() - started, report)


def _decode(text: str, truncated: bool, kb: KB) -> tuple[str | None, str]:
    """``(entity_id or None, outcome)``; the id is the matched label's (scoring folds it).

    The report keeps its own spellings of :data:`goldloop.llm.answer.Outcome`: ``answered`` for
    ``ok``, ``none`` and ``unknown_label`` for ``rejected``; ``truncated``, ``unparsable`` and
    ``failed`` as there."""
    if truncated:
        return None, TRUNCATED
    try:
        label = _read_label(text)
    except Unparsable:
        return None, UNPARSABLE
    if label.strip().upper() == NONE_LABEL:
        return None, "none"
    relation = kb.lookup(label)
    return (None, "unknown_label") if relation is None else (relation.entity_id, "answered")


def _read_label(text: str) -> str:
    """The label an answer names; :class:`Unparsable` when it names none."""
    label = json_object(text).get("label")
    if not isinstance(label, str):
        raise Unparsable(f"no label in the answer (got {label!r})")
    return label


def run_baselines(
    documents: Sequence[Document],
    systems: Sequence[str],
    kb: KB,
    *,
    provider: Provider | None = None,
    spacy_model: str | None = None,
    match_mode: str = "overlap",
    bootstrap: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
    concurrency: int = 8,
) -> list[dict[str, Any]]:
    """Run each named baseline and score it in its regimes; ``wall_time_s`` covers producing the
    predictions and scoring them."""
    unknown = [name for name in systems if name not in BASELINES]
    if unknown:
        raise GoldloopError(
            f"unknown baseline(s) {', '.join(unknown)} (known: {', '.join(BASELINES)})"
        )
    results: list[dict[str, Any]] = []
    for name in systems:
        if name == "llm":
            if provider is None:
                raise GoldloopError("the llm baseline needs an LLM provider")
            run = llm_baseline(documents, kb, provider, progress=progress, concurrency=concurrency)
        else:
            run = lexical_baseline(documents, kb, spacy_model, progress)
        for regime in BASELINE_REGIMES[name]:
            started = time.perf_counter()
            result = score_system(
                documents,
                run.predictions,
                kb=kb,
                regime=regime,
                match_mode=match_mode,
                bootstrap=bootstrap,
                seed=seed,
            )
            result["wall_time_s"] = round(run.wall_time_s + time.perf_counter() - started, 4)
            result["baseline"] = run.report
            results.append(result)
    return results
