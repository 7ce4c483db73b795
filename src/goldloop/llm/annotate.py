"""Pre-annotation: documents in, hits and a report accounting for every item out.

:func:`annotate_documents` is the one core behind ``goldloop annotate``, the demo and the ML
backend. With an LLM provider, requests go out through :mod:`goldloop.llm.runner` (online) or
:mod:`goldloop.llm.batch` (the provider's batch API) while this thread decodes answers as they
arrive (:mod:`goldloop.llm.decode`) and parses each text that needs it once with spaCy, so the
post-cache checks overlap the requests. A truncated, unparsable or failed answer leaves its
document out of the output, is listed in the report and is not cached, so a re-run asks for it
again. The report prices the run's usage (:mod:`goldloop.llm.pricing`); :func:`dry_run` counts
and prices what a run would send (:mod:`goldloop.llm.estimate`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from goldloop.errors import GoldloopError, SettingError
from goldloop.formats.gold import Document
from goldloop.formats.sampledir import SURROGATE_ROLE
from goldloop.kb import KB
from goldloop.llm.answer import FAILED, OK
from goldloop.llm.base import LLMResponse, Provider
from goldloop.llm.batch import BatchMode
from goldloop.llm.cache import ResponseCache
from goldloop.llm.decode import (
    DOCUMENT_FAILURES,
    DocumentResult,
    Failure,
    Rejection,
    decode_lexical,
    finish_answer,
    read_answer,
)
from goldloop.llm.decoded_store import DecodedStore
from goldloop.llm.estimate import CostEstimate, estimate_cost
from goldloop.llm.factory import AnnotatorSpec
from goldloop.llm.pricing import PriceTable, load_prices, usage_cost
from goldloop.llm.runner import DEFAULT_CONCURRENCY
from goldloop.llm.tasks.preannotate import DEFAULT_MAX_TOKENS, PreannotationTask
from goldloop.llm.tasks.task import TaskReport, stream_answers
from goldloop.text.lexical import LexicalAnnotator
from goldloop.text.nlp import parse_many
from goldloop.text.parse_cache import WINDOW
from goldloop.text.parsing import Parsing

Annotator = Provider | LexicalAnnotator


@dataclass(frozen=True)
class RunCost:
    """How a run was sent (``online`` or ``batch``, the wire API) and what its fresh usage cost
    at the price table's prices (``usd`` None when the table does not price the model)."""

    mode: str
    api: str | None
    usd: float | None
    prices: str
    prices_date: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "api": self.api,
            "cost": {"usd": self.usd, "prices": self.prices, "prices_date": self.prices_date},
        }


@dataclass(frozen=True)
class FailedDocument:
    """A document the run left out, and why."""

    doc_id: str
    failure: Failure

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, **self.failure.to_dict()}


@dataclass(frozen=True)
class AnnotateReport:
    """A pre-annotation run's report (``<out>.report.json``): who annotated (tag, provider,
    model, effort, endpoint, source), the KB, the options, the counts, token usage (fresh and from
    the cache), every failed document and rejected item; a provider's run adds its cost."""

    annotator: str
    provider: str
    model: str | None
    effort: str | None
    endpoint: str | None
    source: str
    kb: dict[str, str]
    verbal_only: bool
    max_tokens: int | None
    counts: dict[str, int]
    rejections_by_reason: dict[str, int]
    usage: dict[str, int]
    usage_from_cache: dict[str, int]
    failed_documents: list[FailedDocument]
    rejections: list[Rejection]
    cost: RunCost | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "annotator": self.annotator,
            "provider": self.provider,
            "model": self.model,
            "effort": self.effort,
            "endpoint": self.endpoint,
            "source": self.source,
            "kb": self.kb,
            "verbal_only": self.verbal_only,
            "max_tokens": self.max_tokens,
            "counts": self.counts,
            "rejections_by_reason": self.rejections_by_reason,
            "usage": self.usage,
            "usage_from_cache": self.usage_from_cache,
            "failed_documents": [f.to_dict() for f in self.failed_documents],
            "rejections": [r.to_dict() for r in self.rejections],
        }
        if self.cost is not None:
            out |= self.cost.to_dict()
        return out


@dataclass
class AnnotationRun:
    """The annotated documents (failed ones left out) and the report for ``<out>.report.json``."""

    documents: list[Document]
    report: AnnotateReport


def annotate_documents(
    documents: list[Document],
    annotator: Annotator,
    kb: KB,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    concurrency: int = DEFAULT_CONCURRENCY,
    verbal_only: bool = True,
    parsing: Parsing = Parsing(),
    on_document: Callable[[DocumentResult], None] | None = None,
    batch: BatchMode | None = None,
    prices: PriceTable | None = None,
) -> AnnotationRun:
    """Annotate one document or a batch; ``concurrency`` requests are in flight at once.

    ``verbal_only=False`` switches the ``non_verbal`` check off (no new LLM call: the answers come
    from the cache). ``on_document`` is called once per finished document, as each finishes; the
    returned documents keep the input order. ``batch`` sends the requests through the provider's
    batch API instead (:mod:`goldloop.llm.batch`). The report prices the run's usage with
    ``prices`` (default: :func:`goldloop.llm.pricing.load_prices`). ``parsing``: the pipeline
    the checks parse with and the parse cache that keeps parses and decoded outcomes.
    """
    if isinstance(annotator, LexicalAnnotator):
        results = _annotate_lexically(documents, annotator, kb, verbal_only, parsing, on_document)
    else:
        results = _annotate_with_llm(
            documents,
            annotator,
            kb,
            max_tokens,
            concurrency,
            verbal_only,
            parsing,
            on_document,
            batch,
        )
    report = build_report(results, annotator, kb, verbal_only=verbal_only, max_tokens=max_tokens)
    if isinstance(annotator, Provider):
        report = replace(report, cost=run_cost(report.usage, annotator, batch is not None, prices))
    return AnnotationRun(
        documents=[r.document for r in results if r.document is not None], report=report
    )


def stored_outcomes(
    documents: list[Document],
    annotator: Annotator,
    kb: KB,
    *,
    parsing: Parsing,
    verbal_only: bool = True,
) -> list[DocumentResult] | None:
    """What :func:`annotate_documents` would give each document, when every outcome is stored
    (:mod:`goldloop.llm.decoded_store`) and so needs no parse and no request; else None. Only the
    lexical annotator's qualify: an LLM's is keyed by its answer, read from the response cache."""
    if not isinstance(annotator, LexicalAnnotator):
        return None
    store = DecodedStore.open(parsing, "lexical", annotator.tag, kb, verbal_only)
    if store is None:
        return None
    keys = [DecodedStore.key(d.text) for d in documents]
    stored = store.get_many(keys)
    if any(key not in stored for key in keys):
        return None
    results = [DecodedStore.load(d, stored[key]) for d, key in zip(documents, keys, strict=True)]
    kept = [result for result in results if result is not None]
    return kept if len(kept) == len(results) else None


def _annotate_lexically(
    documents: list[Document],
    annotator: LexicalAnnotator,
    kb: KB,
    verbal_only: bool,
    parsing: Parsing,
    on_document: Callable[[DocumentResult], None] | None,
) -> list[DocumentResult]:
    """Stored outcomes where the parse cache has them (:mod:`goldloop.llm.decoded_store`); the
    other texts parsed in one stream, decoded and stored, a window of documents at a time."""
    store = DecodedStore.open(parsing, "lexical", annotator.tag, kb, verbal_only)
    results: list[DocumentResult] = []
    for start in range(0, len(documents), WINDOW):
        window = documents[start : start + WINDOW]
        keys = [DecodedStore.key(d.text) for d in window]
        stored = store.get_many(keys) if store is not None else {}
        # A stored outcome that does not fit its text (a damaged file) is decoded again.
        loaded = [
            DecodedStore.load(d, stored[k]) if k in stored else None
            for d, k in zip(window, keys, strict=True)
        ]
        parsed = parse_many(
            (d.text for d, result in zip(window, loaded, strict=True) if result is None), parsing
        )
        new: list[tuple[bytes, bytes]] = []
        for document, key, stored_result in zip(window, keys, loaded, strict=True):
            result = stored_result
            if result is None:
                result = decode_lexical(document, next(parsed), annotator, kb, verbal_only)
                new.append((key, DecodedStore.dump(result)))
            results.append(result)
            if on_document is not None:
                on_document(result)
        if store is not None and new:
            store.put_many(new)
    return results


def _annotate_with_llm(
    documents: list[Document],
    provider: Provider,
    kb: KB,
    max_tokens: int,
    concurrency: int,
    verbal_only: bool,
    parsing: Parsing,
    on_document: Callable[[DocumentResult], None] | None,
    batch_mode: BatchMode | None = None,
) -> list[DocumentResult]:
    """Decode answers as they arrive, parsing (once, per arriving batch) only the texts that
    have candidates left, so spaCy overlaps the requests. The checks read the full pipeline's
    parse, the one the sampler and pull read too: one parse per text serves the whole loop.
    An answer decoded before (the same text and answer text) is read from the parse cache
    (:mod:`goldloop.llm.decoded_store`) instead."""
    task = PreannotationTask(kb, max_tokens)
    requests = [task.request(d.text) for d in documents]
    results: list[DocumentResult | None] = [None] * len(documents)
    store = DecodedStore.open(parsing, "llm", provider.tag, kb, verbal_only)
    answers = stream_answers(
        provider,
        task,
        requests,
        concurrency=concurrency,
        batch=batch_mode,
        shared_system=task.system,
    )
    for batch in answers:
        # Only a complete answer can decode to a document; the rest are decided each time.
        responses = {i: a for i, a in batch if isinstance(a, LLMResponse) and not a.truncated}
        keys = (
            {i: DecodedStore.key(documents[i].text, a.text) for i, a in responses.items()}
            if store is not None
            else {}
        )
        stored = store.get_many(list(keys.values())) if store is not None and keys else {}
        loaded = {
            i: DecodedStore.load(documents[i], stored[key], responses[i].usage, responses[i].cached)
            for i, key in keys.items()
            if key in stored
        }
        done = {i: result for i, result in loaded.items() if result is not None}
        read = {i: read_answer(documents[i], a, kb, max_tokens) for i, a in batch if i not in done}
        to_parse = sorted(i for i, answer in read.items() if answer.candidates)
        texts = (documents[i].text for i in to_parse)
        parsed = dict(zip(to_parse, parse_many(texts, parsing), strict=True))
        new: list[tuple[bytes, bytes]] = []
        for index in sorted(i for i, _ in batch):
            result = done.get(index)
            if result is None:
                result = finish_answer(
                    read[index], documents[index], parsed.get(index), provider.tag, verbal_only
                )
                if index in keys and result.failure is None:
                    new.append((keys[index], DecodedStore.dump(result)))
            results[index] = result
            if on_document is not None:
                on_document(result)
        if store is not None and new:
            store.put_many(new)
    return [r for r in results if r is not None]


def run_cost(
    usage: dict[str, int], provider: Provider, batch: bool, prices: PriceTable | None
) -> RunCost:
    """The report's mode, API and cost: what this run's fresh ``usage`` cost at the table's
    prices (None when the table does not price the model)."""
    table = prices or load_prices(env=provider.env)
    price = table.price(provider.name, provider.model)
    usd = None if price is None else usage_cost(usage, price, batch=batch)
    return RunCost(
        mode="batch" if batch else "online",
        api=provider.api,
        usd=None if usd is None else round(usd, 6),
        prices=str(table.path),
        prices_date=table.date,
    )


def build_report(
    results: list[DocumentResult],
    annotator: Annotator,
    kb: KB,
    *,
    verbal_only: bool,
    max_tokens: int,
) -> AnnotateReport:
    """The sidecar report: who annotated, counts, token usage, every failure and rejection."""
    rejections = [r for result in results for r in result.rejections]
    failures = [FailedDocument(r.doc_id, r.failure) for r in results if r.failure]
    outcomes = TaskReport(PreannotationTask.name)  # each document's outcome, as every task's
    for index, r in enumerate(results):
        outcome, detail = (r.failure.reason, r.failure.detail) if r.failure else (OK, None)
        outcomes.count(index, outcome, detail, r.cached, r.usage)
    lexical = isinstance(annotator, LexicalAnnotator)
    counts = {
        "documents": len(results),
        "annotated": sum(r.document is not None for r in results),
        **{reason: outcomes.outcomes[reason] for reason in DOCUMENT_FAILURES},
        # A failed request is never a cached answer: the rest were sent, or came from the cache.
        "requests": 0 if lexical else len(results) - outcomes.outcomes[FAILED] - outcomes.cached,
        "from_cache": outcomes.cached,
        "items": sum(r.items for r in results),
        "hits": sum(len(r.document.ground_truth) for r in results if r.document is not None),
        "rejections": len(rejections),
        "documents_without_hits": sum(
            1 for r in results if r.document is not None and not r.document.ground_truth
        ),
    }
    return AnnotateReport(
        annotator=annotator.tag,
        provider=annotator.name,
        model=annotator.model,
        effort=annotator.effort,
        endpoint=annotator.endpoint,
        source="lexical" if lexical else "llm",
        kb={"path": str(kb.path), "tag": kb.tag},
        verbal_only=verbal_only,
        max_tokens=None if lexical else max_tokens,
        counts=counts,
        rejections_by_reason=dict(Counter(reason for r in rejections for reason in r.reasons)),
        usage=dict(outcomes.usage),
        usage_from_cache=dict(outcomes.usage_from_cache),
        failed_documents=failures,
        rejections=rejections,
    )


@dataclass(frozen=True)
class DryRun:
    """What a run would send: counts, estimated tokens and cost (:mod:`goldloop.llm.estimate`)."""

    documents: int
    cached: int
    requests: int
    input_tokens: int
    max_output_tokens: int
    input_cost: float | None
    estimate: CostEstimate
    prices: PriceTable


def dry_run(
    documents: list[Document],
    kb: KB,
    max_tokens: int,
    spec: AnnotatorSpec,
    *,
    cache: ResponseCache | None = None,
    input_price_per_mtok: float | None = None,
    prices: PriceTable | None = None,
) -> DryRun:
    """Count and price what an LLM ``spec`` would be asked without calling anything (no client,
    no key needed); answers already in the cache cost nothing. ``input_price_per_mtok`` prices
    the input alone at a price of one's own."""
    assert spec.model is not None, "a dry run is for an LLM annotator"
    if input_price_per_mtok is not None and not (
        math.isfinite(input_price_per_mtok) and input_price_per_mtok >= 0
    ):
        raise SettingError("input_price", f"{input_price_per_mtok!r} is not a price (USD ≥ 0)")
    task = PreannotationTask(kb, max_tokens)
    pending = [
        request
        for request in (task.request(d.text) for d in documents)
        if cache is None or cache.get(spec.key(request)) is None
    ]
    table = prices or load_prices()
    calibrate = getattr(cache, "calibration", None)
    calibration = calibrate(f"{spec.provider}/{spec.model}") if calibrate else None
    estimate = estimate_cost(pending, table.price(spec.provider, spec.model), calibration)
    tokens = estimate.usage["input_tokens"]
    cost = None if input_price_per_mtok is None else tokens * input_price_per_mtok / 1e6
    return DryRun(
        len(documents),
        len(documents) - len(pending),
        len(pending),
        tokens,
        max_tokens * len(pending),
        cost,
        estimate,
        table,
    )


def select_documents(
    documents: list[Document], roles: Iterable[str] | None, limit: int | None
) -> list[Document]:
    """Documents whose role is one of ``roles`` (a document without a role, or of a surrogate
    part, is kept: a surrogate dir holds nothing else), first ``limit``; none at all is refused
    (a run over nothing would write an empty gold)."""
    wanted = set(roles) if roles else None
    chosen = [
        d
        for d in documents
        if wanted is None or d.role in (None, SURROGATE_ROLE) or d.role in wanted
    ]
    if not chosen:
        raise GoldloopError(
            "holds no documents"
            if not documents
            else f"none of its {len(documents)} documents has a role among {sorted(wanted or ())}"
        )
    return chosen if limit is None else chosen[:limit]
