"""Batch mode end to end: each provider's batch API through its real SDK against the fake server,
the same cache and decoding as online runs, resubmission, pending runs and the state file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from goldloop.errors import Pending
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm import SQLiteCache
from goldloop.llm.annotate import annotate_documents
from goldloop.llm.batch import BatchMode, BatchPolicy, BatchProgress, BatchStateError
from tests.conftest import environment_parsing
from tests.fakes.llm_server import FakeLLMServer, FakeRequest
from tests.llm.conftest import PROVIDER_NAMES, answers_by_text, mentions_json

TEXTS = [
    "TNF binds to TNFR1 and increases apoptosis.",
    "IL-6 is activated by TNF in macrophages.",
    "STAT3 inhibits SOCS3 in a dose-dependent manner.",
    "Nothing to see in this abstract.",
]
DOCUMENTS = [Document(doc_id=f"pmid:{k}", text=t, role="primary") for k, t in enumerate(TEXTS)]
ANSWERS = answers_by_text(
    {
        TEXTS[0]: mentions_json(
            [
                {
                    "surface": "binds to",
                    "occurrence": 1,
                    "label": "binds to",
                    "direction": "symmetric",
                }
            ]
        ),
        TEXTS[1]: mentions_json(
            [
                {
                    "surface": "activated by",
                    "occurrence": 1,
                    "label": "activates",
                    "direction": "inverse",
                }
            ]
        ),
        TEXTS[2]: mentions_json(
            [{"surface": "inhibits", "occurrence": 1, "label": "inhibits", "direction": "forward"}]
        ),
    }
)
FAST = BatchPolicy(poll_initial_s=0.01, poll_max_s=0.02)


def hits(documents: list[Document]) -> list[tuple[str, str, str, str]]:
    return [(d.doc_id, h.surface, h.label, h.direction) for d in documents for h in d.ground_truth]


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_a_batch_answer_and_an_online_answer_are_one_cache_entry(
    llm_server: FakeLLMServer, kb: KB, tmp_path: Path, name: str
) -> None:
    llm_server.answer = ANSWERS
    llm_server.batch_polls = 2
    cache = SQLiteCache(tmp_path / "cache.sqlite")
    provider = llm_server.provider(name, "m", cache=cache)
    seen: list[BatchProgress] = []
    state = tmp_path / "gold.json.batch.json"
    batch = BatchMode(state, FAST, seen.append)
    run = annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=batch)
    stats = llm_server.stats()
    assert (stats["batches"], stats["batch_requests"], llm_server.request_count) == (1, 4, 0)
    assert len(seen) == 2 and seen[0].open_jobs == 1 and seen[0].total == 4
    assert not state.exists()  # everything collected
    assert (
        run.report.to_dict()["mode"] == "batch" and run.report.to_dict()["counts"]["requests"] == 4
    )
    assert len(cache) == 4

    # An online run on a cache of its own answers the same; on the batch's cache it sends nothing.
    (job,) = llm_server.batches.values()
    submitted = sorted(
        (r.system, r.user, json.dumps(r.schema), r.max_tokens) for _, r in job["requests"]
    )
    online_cache = SQLiteCache(tmp_path / "online.sqlite")
    online = annotate_documents(
        DOCUMENTS,
        llm_server.provider(name, "m", cache=online_cache),
        kb,
        parsing=environment_parsing(),
    )
    sent = sorted(
        (r.system, r.user, json.dumps(r.schema), r.max_tokens) for r in llm_server.requests[-4:]
    )
    assert submitted == sent and all(r[0] and r[2] != "null" for r in sent)  # one request
    assert hits(online.documents) == hits(run.documents) and len(hits(run.documents)) == 3
    llm_server.reset()
    again = annotate_documents(
        DOCUMENTS, llm_server.provider(name, "m", cache=cache), kb, parsing=environment_parsing()
    )
    assert llm_server.request_count == 0 and again.report.to_dict()["counts"]["from_cache"] == 4
    assert hits(again.documents) == hits(run.documents)


def test_cached_requests_are_never_submitted(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path
) -> None:
    llm_server.answer = ANSWERS
    provider = llm_server.provider("anthropic", "m", cache=cache)
    annotate_documents(DOCUMENTS[:2], provider, kb, parsing=environment_parsing())
    batch = BatchMode(tmp_path / "state.json", FAST)
    run = annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=batch)
    submitted = [r.user for job in llm_server.batches.values() for _, r in job["requests"]]
    assert sorted(submitted) == sorted(f"Abstract:\n{t}" for t in TEXTS[2:])
    assert (
        run.report.to_dict()["counts"]["from_cache"] == 2
        and run.report.to_dict()["counts"]["requests"] == 2
    )
    # Everything cached: nothing is submitted at all.
    annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=batch)
    assert len(llm_server.batches) == 1


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_failed_and_expired_requests_go_into_one_new_batch_then_fail(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path, name: str
) -> None:
    llm_server.answer = ANSWERS
    tries: Counter[str] = Counter()

    def outcome(request: FakeRequest) -> str | None:
        tries[request.user] += 1
        if TEXTS[0] in request.user:
            return "errored"  # every time
        if TEXTS[1] in request.user and tries[request.user] == 1:
            return "expired"  # only in the first batch
        return None

    llm_server.batch_outcome = outcome
    provider = llm_server.provider(name, "m", cache=cache)
    batch = BatchMode(tmp_path / "state.json", FAST)
    run = annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=batch)
    jobs = list(llm_server.batches.values())
    assert [len(job["requests"]) for job in jobs] == [4, 2]  # the two failures, once more
    assert run.report.to_dict()["counts"]["failed"] == 1
    assert [f["doc_id"] for f in run.report.to_dict()["failed_documents"]] == ["pmid:0"]
    assert [d.doc_id for d in run.documents] == ["pmid:1", "pmid:2", "pmid:3"]
    assert len(cache) == 3 and not (tmp_path / "state.json").exists()


def test_a_run_that_may_not_wait_is_pending_and_the_next_collects_once(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path
) -> None:
    llm_server.answer = ANSWERS
    llm_server.batch_polls = 1
    provider = llm_server.provider("openai", "m", cache=cache)
    state = tmp_path / "gold.json.batch.json"
    no_wait = BatchMode(state, BatchPolicy(wait_s=0))
    with pytest.raises(Pending, match="run the same command again") as raised:
        annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=no_wait)
    assert raised.value.exit_code == 5
    saved = json.loads(state.read_text())
    assert saved["annotator"] == provider.tag and len(saved["jobs"]) == 1
    assert sorted(saved["jobs"][0]["keys"]) == sorted(
        {provider.key(r) for _, r in llm_server.batches[saved["jobs"][0]["id"]]["requests"]}
    )
    run = annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=no_wait)
    assert len(llm_server.batches) == 1 and not state.exists()
    assert sorted(llm_server.answered.values()) == [1, 1, 1, 1]
    assert [d.doc_id for d in run.documents] == [d.doc_id for d in DOCUMENTS]


def test_a_state_file_of_another_annotator_is_refused(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path
) -> None:
    llm_server.batch_polls = 5
    state = tmp_path / "state.json"
    with pytest.raises(Pending):
        annotate_documents(
            DOCUMENTS, llm_server.provider("anthropic", "m", cache=cache), kb, parsing=environment_parsing(),
            batch=BatchMode(state, BatchPolicy(wait_s=0)),
        )  # fmt: skip
    with pytest.raises(BatchStateError, match="holds batch jobs of anthropic m@"):
        annotate_documents(
            DOCUMENTS, llm_server.provider("anthropic", "other", cache=cache), kb, parsing=environment_parsing(),
            batch=BatchMode(state, FAST),
        )  # fmt: skip
    state.write_text("{not json")
    with pytest.raises(BatchStateError, match="not a batch state file"):
        annotate_documents(
            DOCUMENTS, llm_server.provider("anthropic", "m", cache=cache), kb, parsing=environment_parsing(),
            batch=BatchMode(state, FAST),
        )  # fmt: skip


def test_large_runs_are_split_into_several_jobs(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path
) -> None:
    llm_server.answer = ANSWERS
    policy = BatchPolicy(poll_initial_s=0.01, max_requests=3)
    run = annotate_documents(
        DOCUMENTS, llm_server.provider("gemini", "m", cache=cache), kb, parsing=environment_parsing(),
        batch=BatchMode(tmp_path / "state.json", policy),
    )  # fmt: skip
    assert [len(job["requests"]) for job in llm_server.batches.values()] == [3, 1]
    assert len(run.documents) == 4


def test_a_batch_api_that_fails_is_a_service_error_and_keeps_the_jobs(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path
) -> None:
    from goldloop.errors import ServiceError

    llm_server.answer = ANSWERS
    llm_server.batch_polls = 1
    state = tmp_path / "state.json"
    provider = llm_server.provider("openai", "m", cache=cache)
    with pytest.raises(Pending):
        annotate_documents(
            DOCUMENTS,
            provider,
            kb,
            parsing=environment_parsing(),
            batch=BatchMode(state, BatchPolicy(wait_s=0)),
        )
    (job_id,) = llm_server.batches
    del llm_server.batches[job_id]  # the provider no longer knows the job: 404 on every poll
    with pytest.raises(ServiceError, match=f"HTTP 404.*listed in {state}") as raised:
        annotate_documents(
            DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=BatchMode(state, FAST)
        )
    assert raised.value.exit_code == 4
    assert json.loads(state.read_text())["jobs"][0]["id"] == job_id


def test_a_batch_collected_by_a_run_with_another_selection_caches_every_paid_answer(
    llm_server: FakeLLMServer, kb: KB, cache: SQLiteCache, tmp_path: Path
) -> None:
    llm_server.answer = ANSWERS
    llm_server.batch_polls = 1
    provider = llm_server.provider("openai", "m", cache=cache)
    state = tmp_path / "gold.json.batch.json"
    no_wait = BatchMode(state, BatchPolicy(wait_s=0))
    with pytest.raises(Pending):
        annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=no_wait)
    # Collected by a run that wants only the first two documents (--limit 2).
    first = annotate_documents(
        DOCUMENTS[:2], provider, kb, parsing=environment_parsing(), batch=no_wait
    )
    assert [d.doc_id for d in first.documents] == ["pmid:0", "pmid:1"] and not state.exists()
    # The other two were paid for in that job: the full run finds them all in the cache.
    again = annotate_documents(
        DOCUMENTS, provider, kb, parsing=environment_parsing(), batch=no_wait
    )
    assert len(llm_server.batches) == 1
    assert sorted(llm_server.answered.values()) == [1, 1, 1, 1]
    assert hits(again.documents) == hits(
        annotate_documents(DOCUMENTS, provider, kb, parsing=environment_parsing()).documents
    )
    assert [d.doc_id for d in again.documents] == [d.doc_id for d in DOCUMENTS]
