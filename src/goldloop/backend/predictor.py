"""Label Studio tasks in, review predictions out: the annotate core, then the review builder.

A task gets exactly what ``push`` would send: the review prediction built from annotator A (and B),
``model_version`` = the review tag. A task whose answer failed (truncated, unparsable, failed call)
or whose prediction does not fit the project's labeling config gets ``[]`` at its position, so
Label Studio stores nothing and asks again; each such task is logged with its reason. A task where
the model found nothing gets a prediction with an empty ``result``. A task that already carries
goldloop's review prediction under another tag (a pushed task) is answered from it, with no LLM
call; one carrying this backend's own gets ``[]``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from goldloop.backend.config import MAX_TASK_CHARS, BackendSettings
from goldloop.backend.interactive import Suggester
from goldloop.backend.protocol import Task
from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import REVIEW_PREFIX, latest_prediction
from goldloop.kb import KB, load_kb
from goldloop.llm import RetryPolicy, SQLiteCache, make_annotator
from goldloop.llm.annotate import Annotator, DocumentResult, annotate_documents, stored_outcomes
from goldloop.llm.answer import FAILED
from goldloop.llm.base import Provider
from goldloop.llm.cache import ResponseCache
from goldloop.llm.decode import Failure
from goldloop.studio.label_config import PredictionChecker, prediction_checker
from goldloop.studio.review import build_review_prediction, review_tag
from goldloop.text.nlp import load_nlp
from goldloop.text.parsing import Parsing

if TYPE_CHECKING:
    pass

log = logging.getLogger("goldloop.backend")

# The most tasks a request may have to be answered on the event loop (from stored outcomes):
# ~0.1 ms each, so the loop is never held for more than a few ms.
INLINE_MAX_TASKS = 16
# Label Studio gives up on /predict after ML_TIMEOUT_PREDICT (100 s): retry briefly and stop
# starting attempts after 50 s (two 45 s attempts at worst), then let the task come back later
# rather than answer too late.
BACKEND_RETRY = RetryPolicy(attempts=3, initial_s=0.5, max_s=8.0, timeout_s=45.0, deadline_s=50.0)


@dataclass(frozen=True)
class Skipped:
    """Why a task gets no prediction this time."""

    reason: str
    detail: str


class Predictor:
    """The backend's model: one KB, annotator A, optionally annotator B."""

    def __init__(
        self,
        kb: KB,
        annotator: Annotator,
        other: Annotator | None = None,
        *,
        concurrency: int = 16,
        max_task_chars: int = MAX_TASK_CHARS,
        parsing: Parsing = Parsing(),
        propose_occurrences: bool = True,
    ) -> None:
        self.kb = kb
        self.annotator = annotator
        self.other = other
        self.concurrency = concurrency
        self.max_task_chars = max_task_chars
        self.model_version = review_tag(annotator.tag, other.tag if other else None)
        self.parsing = parsing
        load_nlp(parsing.models)  # at start, so the first /predict does not pay for it
        self.suggester = Suggester(
            kb,
            parsing,
            annotator if isinstance(annotator, Provider) else None,
            propose_occurrences,
        )

    @classmethod
    def from_settings(cls, settings: BackendSettings) -> Predictor:
        kb = load_kb(settings.kb_path)
        cache = _cache(settings) if _uses_llm(settings) else None
        read = settings.environment
        annotator = make_annotator(
            settings.annotator, kb, cache=cache, retry=BACKEND_RETRY, settings=read
        )
        other = (
            make_annotator(settings.other, kb, cache=cache, retry=BACKEND_RETRY, settings=read)
            if settings.other
            else None
        )
        return cls(
            kb,
            annotator,
            other,
            concurrency=settings.concurrency,
            max_task_chars=settings.max_task_chars,
            parsing=Parsing.from_settings(read),
            propose_occurrences=settings.propose_occurrences,
        )

    async def predict(
        self, tasks: Sequence[Task], label_config: str | None, context: object = None
    ) -> list[Any]:
        """One result per task, in order; with a ``context`` (a drawn region), interactive
        suggestions instead. The work runs off the event loop, except for a small batch that
        needs none (every task already predicted, or its outcome stored): handing that to a
        thread costs more than answering it (0.6-0.8 ms a request, against ~0.3 ms of work)."""
        if context:
            return await asyncio.to_thread(self.suggest_batch, tasks, label_config, context)
        if len(tasks) <= INLINE_MAX_TASKS:
            served = self.predict_batch(tasks, label_config, stored_only=True)
            if served is not None:
                return served
        return await asyncio.to_thread(self.predict_batch, tasks, label_config)

    def suggest_batch(
        self, tasks: Sequence[Task], label_config: str | None, context: object
    ) -> list[Any]:
        """Suggestions for the region drawn in ``context``, one prediction per task (the review
        prediction a task may hold does not matter here); an empty one when there is nothing to
        suggest or the context cannot be used."""
        check = prediction_checker(label_config) if label_config else None
        results: list[Any] = []
        for task in tasks:
            too_large = self._too_large(task)
            if too_large is not None:  # the same bound as pre-annotation: an empty suggestion
                _log_skip(task, too_large)
            items = self.suggester.suggest(task, context) if too_large is None else []
            prediction: dict[str, Any] = {"model_version": self.model_version, "result": items}
            if items and check is not None:
                errors = check(prediction)
                if errors:
                    _log_skip(task, Skipped("invalid_for_label_config", "; ".join(errors)))
                    prediction["result"] = []
            results.append(prediction)
        return results

    @overload
    def predict_batch(
        self, tasks: Sequence[Task], label_config: str | None, *, stored_only: Literal[False] = ...
    ) -> list[Any]: ...

    @overload
    def predict_batch(
        self, tasks: Sequence[Task], label_config: str | None, *, stored_only: bool
    ) -> list[Any] | None: ...

    def predict_batch(
        self, tasks: Sequence[Task], label_config: str | None, *, stored_only: bool = False
    ) -> list[Any] | None:
        """One result per task, in order. ``stored_only``: only when no task needs a parse or a
        provider call (:func:`goldloop.llm.annotate.stored_outcomes`), else None."""
        results: list[Any] = [[] for _ in tasks]  # [] stores nothing: Label Studio asks again
        documents: dict[int, Document] = {}
        skipped: list[tuple[Task, Skipped]] = []
        for position, task in enumerate(tasks):
            pushed = self._from_pushed_review(task)
            if pushed is not None:
                results[position] = pushed
                continue
            document_or_skip = self._document(task, position)
            if isinstance(document_or_skip, Skipped):
                skipped.append((task, document_or_skip))
            else:
                documents[position] = document_or_skip
        runs: list[dict[str, DocumentResult]] = []
        if documents:
            batch = list(documents.values())
            found = self._stored(batch) if stored_only else self._annotate(batch)
            if found is None:
                return None
            runs = found
        for task, skip in skipped:  # logged once, by the pass that answers
            _log_skip(task, skip)
        if not documents:
            return results
        check = prediction_checker(label_config) if label_config else None
        for position, document in documents.items():
            outcome = self._prediction(document, [run[document.doc_id] for run in runs], check)
            if isinstance(outcome, Skipped):
                _log_skip(tasks[position], outcome)
            else:
                results[position] = outcome
        return results

    def _from_pushed_review(self, task: Task) -> dict[str, Any] | None:
        """The review prediction ``task`` already carries under another tag, answered under this
        backend's: no LLM call for a task ``push`` pre-annotated.

        Label Studio 1.23.2 asks for a task in the label stream when the project's model version
        is this backend's title and the task holds no prediction of the version ``/setup`` gives
        (a campaign pushed with other candidates than this backend's annotator). It stores and
        shows what it gets: the same regions once more under this tag, after which it does not
        ask again. None when the task holds no review prediction, or one of this backend's.
        """
        if any(_model_version(p) == self.model_version for p in task.predictions):
            return None
        review = latest_prediction({"predictions": task.predictions}, REVIEW_PREFIX)
        if review is None:
            return None
        log.info("task %s: answered from its %s prediction", task.id, review["model_version"])
        prediction = {"model_version": self.model_version, "result": review.get("result") or []}
        if review.get("score") is not None:
            prediction["score"] = review["score"]
        return prediction

    def _document(self, task: Task, position: int) -> Document | Skipped:
        if any(_model_version(p) == self.model_version for p in task.predictions):
            return Skipped("already_predicted", f"the task has a {self.model_version} prediction")
        text = task.data.get("text")
        if not isinstance(text, str):
            return Skipped("no_text", "task data has no string field 'text'")
        too_large = self._too_large(task)
        if too_large is not None:
            return too_large
        # Keyed by position: a project may hold the same doc_id twice, and results come back by id.
        doc_id = task.data.get("doc_id") or f"ls-task:{task.id}"
        return Document(doc_id=f"{doc_id}#{position}", text=text)

    def _too_large(self, task: Task) -> Skipped | None:
        """A task whose text is over ``GOLDLOOP_MAX_TASK_CHARS``: neither pre-annotated nor
        given suggestions (a parse of a million characters would take the worker down)."""
        text = task.data.get("text")
        if isinstance(text, str) and len(text) > self.max_task_chars:
            return Skipped(
                "too_large",
                f"{len(text)} characters, over the limit of {self.max_task_chars} "
                "(GOLDLOOP_MAX_TASK_CHARS)",
            )
        return None

    def _stored(self, documents: list[Document]) -> list[dict[str, DocumentResult]] | None:
        """Each annotator's stored outcomes over the batch, when all are stored (else None)."""
        runs = []
        for annotator in (a for a in (self.annotator, self.other) if a is not None):
            outcomes = stored_outcomes(documents, annotator, self.kb, parsing=self.parsing)
            if outcomes is None:
                return None
            runs.append({result.doc_id: result for result in outcomes})
        return runs

    def _annotate(self, documents: list[Document]) -> list[dict[str, DocumentResult]]:
        """Each annotator's results over the batch by doc_id; A and B run side by side."""
        annotators = [a for a in (self.annotator, self.other) if a is not None]
        if len(annotators) == 1:  # already off the event loop: a thread more is ~1 ms per batch
            return [self._annotate_with(annotators[0], documents)]
        with ThreadPoolExecutor(max_workers=len(annotators)) as pool:
            futures = [
                pool.submit(self._annotate_with, annotator, documents) for annotator in annotators
            ]
            return [future.result() for future in futures]

    def _annotate_with(
        self, annotator: Annotator, documents: list[Document]
    ) -> dict[str, DocumentResult]:
        results: dict[str, DocumentResult] = {}
        annotate_documents(
            documents,
            annotator,
            self.kb,
            concurrency=self.concurrency,
            parsing=self.parsing,
            on_document=lambda result: results.__setitem__(result.doc_id, result),
        )
        return results

    def _prediction(
        self, document: Document, results: list[DocumentResult], check: PredictionChecker | None
    ) -> dict[str, Any] | Skipped:
        for result in results:
            if result.failure is not None or result.document is None:
                failure = result.failure or Failure(FAILED, "no document")
                return Skipped(failure.reason, str(failure.detail))
        a = results[0].document
        b = results[1].document if len(results) > 1 else None
        assert a is not None
        prediction = build_review_prediction(
            document.text,
            a.ground_truth,
            b.ground_truth if b is not None else None,
            self.annotator.tag,
            self.other.tag if self.other else None,
            self.kb,
        )
        if check is not None:
            errors = check(prediction)
            if errors:
                return Skipped("invalid_for_label_config", "; ".join(errors))
        return prediction


def _uses_llm(settings: BackendSettings) -> bool:
    return any(spec is not None and spec.is_llm for spec in (settings.annotator, settings.other))


def _cache(settings: BackendSettings) -> ResponseCache:
    """Redis when ``REDIS_URL`` is set (replicas share answers), else the local SQLite file."""
    if settings.redis_url:
        from goldloop.llm.redis_cache import RedisCache  # redis loads only with REDIS_URL

        return RedisCache(settings.redis_url)
    assert settings.cache_path is not None
    return SQLiteCache(settings.cache_path)


def _model_version(prediction: Any) -> Any:
    return prediction.get("model_version") if isinstance(prediction, dict) else None


def _log_skip(task: Task, skipped: Skipped) -> None:
    # An existing prediction is routine; anything else means the task will be asked for again.
    level = logging.INFO if skipped.reason == "already_predicted" else logging.WARNING
    log.log(level, "task %s: no prediction (%s): %s", task.id, skipped.reason, skipped.detail)
