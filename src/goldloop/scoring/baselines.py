"""Baseline systems on the gold: ``lexical`` (the floor), ``encoder`` and ``llm`` (linking-only).

``lexical`` is the shared mention detector (:func:`goldloop.text.detector.detect_mentions`): spans and ids
from lemma matches to KB labels, scored end-to-end and linking-only. ``encoder`` embeds each
span's sentence (the span marked) with a local sentence encoder (:mod:`goldloop.llm.encoder`) and
takes the canonical relation whose ``label: description`` is nearest by cosine: on the gold spans
(linking-only) and on the lexical detector's spans (end-to-end). ``llm`` is given each gold
span marked in its abstract and picks one KB label or ``NONE``, through the providers and cache
of :mod:`goldloop.llm`; it is scored linking-only. Use a model that did not annotate the gold, or
the comparison is circular (nothing enforces this).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm.answer import FAILED, OK, REJECTED
from goldloop.llm.tasks.linking import MAX_TOKENS, LinkingTask, Span, marked
from goldloop.llm.tasks.task import TaskReport, TaskResult, run_task
from goldloop.scoring.inputs import SystemPredictions, rows_to_predictions
from goldloop.scoring.modes import BASELINES
from goldloop.text.parsing import Parsing

if TYPE_CHECKING:
    # numpy's modules (the encoder, the scorer, the design), imported when a baseline runs.
    from goldloop.llm import Provider
    from goldloop.llm.encoder import Encoder
    from goldloop.scoring.design import Design
    from goldloop.scoring.score_result import BaselineReport, ScoreResult

# Which regimes each baseline is scored in.
BASELINE_REGIMES = {
    "lexical": ("end-to-end", "linking-only"),
    "encoder": ("end-to-end", "linking-only"),
    "llm": ("linking-only",),
}
# ``progress(system, total)`` returns the function to call once per unit of work done.
Progress = Callable[[str, int], Callable[[], None]]


def _silent(_: str, __: int) -> Callable[[], None]:
    return lambda: None


@dataclass(frozen=True)
class LexicalReport:
    """The lexical baseline's mentions found, and the KB it matched against."""

    mentions: int
    kb_tag: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EncoderReport:
    """The sentence encoder used, the KB, and the spans embedded per regime."""

    encoder: str
    encoder_identity: str
    kb_tag: str
    spans: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FailedSpan:
    """A gold span whose linking request failed, and the error."""

    doc_id: str
    a: int
    b: int
    error: str | None


@dataclass(frozen=True)
class LlmReport:
    """The LLM linker's requests: their outcomes (keys in the order first met), token usage, and
    the requests that failed."""

    annotator: str
    requests: int
    outcomes: dict[str, int]
    usage: dict[str, Any]
    failed: list[FailedSpan]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BaselineRun:
    """A baseline's predictions, how long producing them took, and what happened on the way;
    ``by_regime``: other predictions for a regime (the encoder's end-to-end spans)."""

    predictions: SystemPredictions
    wall_time_s: float
    report: BaselineReport
    by_regime: dict[str, SystemPredictions] = field(default_factory=dict)


def lexical_baseline(
    documents: Sequence[Document],
    kb: KB,
    parsing: Parsing = Parsing(),
    progress: Progress | None = None,
) -> BaselineRun:
    """Mentions found by the shared detector, one row per mention."""
    from goldloop.text.detector import detect_mentions  # spaCy: only to run
    from goldloop.text.nlp import parse_many

    started = time.perf_counter()
    step = (progress or _silent)("lexical", len(documents))
    rows: list[dict[str, Any]] = []
    texts = (d.text for d in documents)
    for document, doc in zip(documents, parse_many(texts, parsing), strict=True):
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
    return BaselineRun(predictions, time.perf_counter() - started, LexicalReport(len(rows), kb.tag))


def encoder_baseline(
    documents: Sequence[Document],
    kb: KB,
    encoder: Encoder,
    parsing: Parsing = Parsing(),
    progress: Progress | None = None,
) -> BaselineRun:
    """Cosine top 1 over the canonical relations, for each gold span (linking-only) and each
    span the lexical detector finds (end-to-end)."""
    from goldloop.llm.encoder import kb_embeddings

    # spaCy loads only when a baseline runs.
    from goldloop.text.detector import detect_mentions
    from goldloop.text.nlp import parse_many, sentence_of

    started = time.perf_counter()
    relations, vectors = kb_embeddings(encoder, kb)
    step = (progress or _silent)("encoder", len(documents))
    spans: dict[str, list[tuple[str, int, int, str]]] = {"linking-only": [], "end-to-end": []}
    texts = (d.text for d in documents)
    for document, doc in zip(documents, parse_many(texts, parsing), strict=True):
        found = [(m.a, m.b) for m in detect_mentions(doc, kb)]
        gold = [(h.a, h.b) for h in document.ground_truth]
        for regime, pairs in (("linking-only", gold), ("end-to-end", found)):
            for a, b in pairs:
                sent = sentence_of(doc, a, b)
                spans[regime].append(
                    (
                        document.doc_id,
                        a,
                        b,
                        marked(sent.text, a - sent.start_char, b - sent.start_char),
                    )
                )
        step()
    runs: dict[str, SystemPredictions] = {}
    for regime, rows in spans.items():
        embedded = encoder.embed([marked for *_, marked in rows])
        best = (embedded @ vectors.T).argmax(axis=1) if rows else []
        predicted = [
            {"doc_id": doc_id, "a": a, "b": b, "entity_id_predicted": relations[int(i)].entity_id}
            for (doc_id, a, b, _), i in zip(rows, best, strict=True)
        ]
        runs[regime] = rows_to_predictions("encoder", None, "encoder", predicted, documents)
    report = EncoderReport(
        encoder=str(encoder.path),
        encoder_identity=encoder.identity,
        kb_tag=kb.tag,
        spans={regime: len(rows) for regime, rows in spans.items()},
    )
    return BaselineRun(
        runs["linking-only"],
        time.perf_counter() - started,
        report,
        {"end-to-end": runs["end-to-end"]},
    )


def llm_baseline(
    documents: Sequence[Document],
    kb: KB,
    provider: Provider,
    max_tokens: int = MAX_TOKENS,
    progress: Progress | None = None,
    concurrency: int = 8,
) -> BaselineRun:
    """One constrained choice per gold span (:class:`~goldloop.llm.tasks.linking.LinkingTask`),
    ``concurrency`` requests in flight; answers that cannot be used become abstentions, counted
    by reason (``none``, ``unknown_label``, ``unparsable``, ``truncated``, ``failed``: the request
    failed, listed in ``failed``). An unparsable answer is not cached, so a re-run asks again."""
    started = time.perf_counter()
    spans = [(document, hit) for document in documents for hit in document.ground_truth]
    step = (progress or _silent)("llm", len(spans))
    results = run_task(
        provider,
        LinkingTask(kb, max_tokens),
        [Span(document.text, hit.a, hit.b) for document, hit in spans],
        concurrency=concurrency,
        on_result=lambda _, __: step(),
    )
    # Counted span by span in input order, as the report always was (its keys keep that order).
    outcomes: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    failed: list[FailedSpan] = []
    for (document, hit), result in zip(spans, results, strict=True):
        if result.outcome == FAILED:
            failed.append(FailedSpan(document.doc_id, hit.a, hit.b, result.detail))
        else:
            outcomes["cached" if result.cached else "called"] += 1
        outcomes[_spelled(result)] += 1
        rows.append(
            {"doc_id": document.doc_id, "a": hit.a, "b": hit.b, "entity_id_predicted": result.value}
        )
    predictions = rows_to_predictions("llm", None, "llm", rows, documents)
    report = LlmReport(
        annotator=provider.tag,
        requests=len(spans),
        outcomes=dict(outcomes),
        usage=dict(TaskReport.of(LinkingTask.name, results).usage),
        failed=failed,
    )
    return BaselineRun(predictions, time.perf_counter() - started, report)


def _spelled(result: TaskResult[str]) -> str:
    """The report's own spelling of an outcome: ``answered`` for ``ok``, the reason (``none``,
    ``unknown_label``) for ``rejected``, the others as they are."""
    if result.outcome == OK:
        return "answered"
    if result.outcome == REJECTED and result.detail:
        return result.detail
    return result.outcome


def run_baselines(
    documents: Sequence[Document],
    systems: Sequence[str],
    kb: KB,
    *,
    provider: Provider | None = None,
    encoder: Encoder | None = None,
    parsing: Parsing = Parsing(),
    match_mode: str = "overlap",
    bootstrap: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
    concurrency: int = 8,
    design: Design | None = None,
) -> list[ScoreResult]:
    """Run each named baseline and score it in its regimes; ``wall_time_s`` covers producing the
    predictions and scoring them. Each result's ``corpus`` is None without a ``design``;
    ``parsing``: how the lexical and encoder baselines parse."""
    from goldloop.scoring.regimes import score_system

    unknown = [name for name in systems if name not in BASELINES]
    if unknown:
        raise GoldloopError(
            f"unknown baseline(s) {', '.join(unknown)} (known: {', '.join(BASELINES)})"
        )
    results: list[ScoreResult] = []
    for name in systems:
        if name == "llm":
            if provider is None:
                raise GoldloopError("the llm baseline needs an LLM provider")
            run = llm_baseline(documents, kb, provider, progress=progress, concurrency=concurrency)
        elif name == "encoder":
            if encoder is None:
                raise GoldloopError("the encoder baseline needs a sentence encoder")
            run = encoder_baseline(documents, kb, encoder, parsing, progress)
        else:
            run = lexical_baseline(documents, kb, parsing, progress)
        for regime in BASELINE_REGIMES[name]:
            started = time.perf_counter()
            result = score_system(
                documents,
                run.by_regime.get(regime, run.predictions),
                kb=kb,
                regime=regime,
                match_mode=match_mode,
                bootstrap=bootstrap,
                seed=seed,
                design=design,
            )
            elapsed = round(run.wall_time_s + time.perf_counter() - started, 4)
            results.append(replace(result, wall_time_s=elapsed, baseline=run.report))
    return results
