"""Sending requests through a provider's batch API: submit once, poll, collect into the cache.

:func:`collect_batch` yields ``(index, answer)`` pairs exactly as :func:`goldloop.llm.runner.
stream_requests` does, so one decoding path serves both modes. Each request goes out under its
response cache key as its id, and each answer is stored under that key: a batch answer and an
online answer to the same request are one cache entry, and cached requests are never submitted.

The job ids live in a state file (JSON, written atomically after every submission and every
collection), so a re-run of the same command polls the jobs it left running instead of
submitting again; a first Ctrl-C during a submission waits until its job is recorded. Requests
a job failed or let expire go into a new job ``resubmit`` times, then come back as
:class:`LLMError`. Polling is bounded by :class:`BatchPolicy`: past ``wait_s`` the
run stops with :class:`goldloop.errors.Pending` and the jobs keep running. Once every job is
collected the state file is removed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError, Pending, ServiceError
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_json
from goldloop.files.interrupts import deferred_interrupt
from goldloop.llm.base import LLMError, LLMRequest, LLMResponse, Provider
from goldloop.llm.runner import Answer

STATE_VERSION = 1


@dataclass(frozen=True)
class BatchPolicy:
    """How a batch run polls: the first wait, the longest wait between two polls, how long one
    run polls before leaving the jobs running (0: submit or poll once, then leave), and how many
    times failed requests are submitted again."""

    poll_initial_s: float = 10.0
    poll_max_s: float = 300.0
    wait_s: float = 24 * 3600.0
    resubmit: int = 1
    max_requests: int = 10_000  # per job: the providers' own caps are 50,000 to 100,000
    max_bytes: int = 15_000_000  # per job, under Gemini's 20 MB for inline requests


@dataclass(frozen=True)
class BatchProgress:
    """What polling has found: jobs still running, requests answered of those submitted."""

    open_jobs: int
    done: int
    total: int
    waited_s: float


class BatchStateError(GoldloopError):
    """The state file is unreadable or belongs to another annotator."""


class BatchState:
    """The open jobs of one output: ``[{"id", "round", "keys"}]``, saved atomically."""

    def __init__(self, path: Path, provider: Provider) -> None:
        self.path = path
        self.identity = {"provider": provider.name, "annotator": provider.tag, "api": provider.api}
        self.jobs: list[dict[str, Any]] = []
        if path.exists():
            self._load()

    def _load(self) -> None:
        try:
            data = jsonl.loads(self.path.read_text(encoding="utf-8"))
            identity = {key: data[key] for key in self.identity}
            jobs = [
                {"id": str(j["id"]), "round": int(j["round"]), "keys": [str(k) for k in j["keys"]]}
                for j in data["jobs"]
            ]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BatchStateError(f"{self.path}: not a batch state file ({exc})") from exc
        if identity != self.identity:
            raise BatchStateError(
                f"{self.path}: holds batch jobs of {identity['provider']} {identity['annotator']} "
                f"({identity['api'] or 'its API'}), not of this run: collect them with that "
                "annotator, or delete the file to abandon them"
            )
        self.jobs = jobs

    def add(self, job_id: str, round_: int, keys: Sequence[str]) -> None:
        self.jobs.append({"id": job_id, "round": round_, "keys": list(keys)})
        self.save()

    def close(self, job_id: str) -> None:
        self.jobs = [job for job in self.jobs if job["id"] != job_id]
        self.save()

    def save(self) -> None:
        if not self.jobs:
            self.path.unlink(missing_ok=True)
            return
        atomic_write_json(self.path, {"version": STATE_VERSION, **self.identity, "jobs": self.jobs})


def collect_batch(
    provider: Provider,
    requests: Sequence[LLMRequest],
    *,
    state_path: Path,
    policy: BatchPolicy | None = None,
    usable: Callable[[str], bool] | None = None,
    on_progress: Callable[[BatchProgress], None] | None = None,
) -> Iterator[list[tuple[int, Answer]]]:
    """``(index, answer)`` pairs in batches, as jobs end (cached answers first).

    Raises :class:`goldloop.errors.Pending` once ``policy.wait_s`` has passed with jobs still
    running (they are in the state file; a re-run collects them), and
    :class:`goldloop.errors.ServiceError` when the batch API itself fails after retries.
    """
    try:
        yield from _collect_batch(
            provider, requests, state_path, policy or BatchPolicy(), usable, on_progress
        )
    except LLMError as exc:
        kept = f"; the jobs submitted are listed in {state_path}" if state_path.exists() else ""
        raise ServiceError(f"{exc}{kept}") from exc


def _collect_batch(
    provider: Provider,
    requests: Sequence[LLMRequest],
    state_path: Path,
    policy: BatchPolicy,
    usable: Callable[[str], bool] | None,
    on_progress: Callable[[BatchProgress], None] | None,
) -> Iterator[list[tuple[int, Answer]]]:
    run = _BatchRun(provider, requests, state_path, policy, usable)
    started = time.monotonic()
    ready = run.cached_answers()
    run.submit(run.unsent(), round_=1)
    interval = policy.poll_initial_s
    while True:
        collected = run.poll()
        if collected:
            yield collected
        if not run.state.jobs:
            break
        waited = time.monotonic() - started
        if on_progress is not None:
            on_progress(BatchProgress(len(run.state.jobs), run.done, run.total, waited))
        if waited >= policy.wait_s:
            ids = ", ".join(job["id"] for job in run.state.jobs)
            raise Pending(
                f"{provider.label}: {run.total - run.done} request(s) still running in batch "
                f"job(s) {ids} (listed in {state_path}); run the same command again to collect them"
            )
        if ready:  # the run goes on: decode what the cache held while the jobs run
            yield ready
            ready = []
        time.sleep(min(interval, max(0.0, policy.wait_s - waited)))
        interval = min(interval * 2, policy.poll_max_s)
    if ready:
        yield ready


class _BatchRun:
    """The bookkeeping of one :func:`collect_batch` call."""

    def __init__(
        self,
        provider: Provider,
        requests: Sequence[LLMRequest],
        state_path: Path,
        policy: BatchPolicy,
        usable: Callable[[str], bool] | None,
    ) -> None:
        self.provider = provider
        self.policy = policy
        self.usable = usable
        self.state = BatchState(state_path, provider)
        self.indices: dict[str, list[int]] = {}
        self.requests: dict[str, LLMRequest] = {}
        for index, request in enumerate(requests):
            key = provider.key(request)
            self.indices.setdefault(key, []).append(index)
            self.requests[key] = request
        self.answered: set[str] = set()
        self.collected = 0  # submitted requests with a final answer or error
        self.done = 0
        self.total = 0

    def cached_answers(self) -> list[tuple[int, Answer]]:
        pairs: list[tuple[int, Answer]] = []
        for key in self.indices:
            hit = self.provider.cached_response(key)
            if hit is not None:
                pairs += self._answer(key, hit)
        return pairs

    def unsent(self) -> list[str]:
        """Keys neither answered from the cache nor in a job still running."""
        running = {key for job in self.state.jobs for key in job["keys"]}
        self.total = sum(len(job["keys"]) for job in self.state.jobs)
        return [key for key in self.indices if key not in self.answered and key not in running]

    def submit(self, keys: Sequence[str], round_: int) -> None:
        for chunk in self._chunks(keys):
            # A job the provider created but the state file does not list would be paid for
            # twice: the next run would submit its requests again.
            with deferred_interrupt("submitting a batch job and recording it"):
                job_id = self.provider.batch_submit([(key, self.requests[key]) for key in chunk])
                self.state.add(job_id, round_, chunk)
            if round_ == 1:
                self.total += len(chunk)

    def _chunks(self, keys: Sequence[str]) -> Iterator[list[str]]:
        chunk: list[str] = []
        size = 0
        for key in keys:
            request = self.requests[key]
            weight = len(request.system.encode()) + len(request.user.encode()) + 1024
            if chunk and (
                len(chunk) >= self.policy.max_requests or size + weight > self.policy.max_bytes
            ):
                yield chunk
                chunk, size = [], 0
            chunk.append(key)
            size += weight
        if chunk:
            yield chunk

    def poll(self) -> list[tuple[int, Answer]]:
        """Answers of every job that has ended since the last poll (each job is read once)."""
        pairs: list[tuple[int, Answer]] = []
        running = 0
        for job in list(self.state.jobs):
            status = self.provider.batch_status(job["id"])
            if status.ended:
                pairs += self._collect(job, status.state)
            elif job["round"] == 1:
                running += min(status.done, len(job["keys"]))
        self.done = min(self.total, self.collected + running)
        return pairs

    def _collect(self, job: dict[str, Any], state: str) -> list[tuple[int, Answer]]:
        pairs: list[tuple[int, Answer]] = []
        retry: list[str] = []
        errors: dict[str, LLMError] = {}
        seen: set[str] = set()
        for key, answer, retryable in self.provider.batch_results(job["id"]):
            if key not in job["keys"] or key in seen:
                continue  # not this job's request, or a duplicate line
            seen.add(key)
            self.collected += not retryable or job["round"] > self.policy.resubmit
            if isinstance(answer, LLMResponse):
                # Every paid answer is cached, this run's or not (a job submitted by a run with
                # another selection): the state file is closed below, and a later run that wants
                # the answer finds it instead of paying again.
                self.provider.remember(key, self.requests.get(key), answer, self.usable)
                pairs += self._answer(key, answer)
            elif retryable:
                retry.append(key)
                errors[key] = answer
            else:
                pairs += self._answer(key, answer)
        missing = [key for key in job["keys"] if key not in seen]
        for key in missing:
            errors[key] = LLMError(
                f"{self.provider.label}: batch {job['id']} ended ({state}) without its answer"
            )
        retry += missing
        again = [key for key in retry if key in self.requests]
        if job["round"] <= self.policy.resubmit:
            self.submit(again, job["round"] + 1)
        else:
            for key in again:
                pairs += self._answer(key, errors[key])
        self.state.close(job["id"])
        return pairs

    def _answer(self, key: str, answer: Answer) -> list[tuple[int, Answer]]:
        if key in self.answered or key not in self.indices:
            return []
        self.answered.add(key)
        return [(index, answer) for index in self.indices[key]]


@dataclass(frozen=True)
class BatchMode:
    """A run through the provider's batch API: where its state lives, how it polls, and whom
    it tells of progress."""

    state_path: Path
    policy: BatchPolicy = BatchPolicy()
    on_progress: Callable[[BatchProgress], None] | None = None


def state_path_for(output: Path) -> Path:
    """The state file beside an output: ``<output>.batch.json``."""
    return output.with_name(output.name + ".batch.json")
