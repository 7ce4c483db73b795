"""Predictions through Label Studio on PostgreSQL from two backend replicas (gunicorn) sharing the
tests' own Redis, behind one round-robin URL: answers shared through Redis, a replica killed
mid-run (the operator retrieves again for the tasks left without a prediction; then every task
has exactly one), and Redis stopped (predictions go on without the shared cache)."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

from goldloop.studio.label_config import render_label_config
from tests.conftest import shared_kb
from tests.stack.conftest import Stack, retrieve_predictions, surfaces, verbs_answer

pytestmark = [pytest.mark.studio, pytest.mark.slow]


def project_with(stack: Stack, texts: list[str]) -> tuple[int, list[int]]:
    """A project whose ML backend is the proxy's one URL, with a task per text."""
    client = stack.studio.studio.sdk
    project = client.projects.create(
        title=f"replicas-{uuid.uuid4().hex[:6]}", label_config=render_label_config(shared_kb())
    )
    tasks = [{"data": {"text": t, "doc_id": f"doc:{i}"}} for i, t in enumerate(texts)]
    imported = client.projects.import_tasks(id=project.id, request=tasks, return_task_ids=True)
    client.ml.create(project=project.id, url=stack.proxy.url, title="goldloop replicas")
    return project.id, list(imported.task_ids)


def retrieve(stack: Stack, project_id: int, task_ids: list[int]) -> None:
    retrieve_predictions(stack.studio.studio.sdk, project_id, task_ids)


def retrieve_quietly(stack: Stack, project_id: int, task_ids: list[int], errors: list[str]) -> None:
    try:
        retrieve(stack, project_id, task_ids)
    except Exception as exc:  # the action fails when its replica dies; the operator sees it
        errors.append(repr(exc))


def predictions(stack: Stack, task_id: int) -> list[dict[str, Any]]:
    """The task's stored predictions. Never through ``tasks.get``: Label Studio asks the ML
    backend itself when a task without predictions is opened, which would hide a missing one."""
    stored = stack.studio.studio.sdk.predictions.list(task=task_id)
    rows = stack.database.query(f"SELECT count(*) FROM prediction WHERE task_id = {task_id}")
    assert int(rows) == len(stored)  # what the API shows is what PostgreSQL holds
    return [p.dict() for p in stored]


@pytest.fixture(autouse=True)
def scripted(stack: Stack) -> None:
    stack.llm.answer = verbs_answer
    stack.llm.latency_s = 0.0


def test_replicas_share_answers_through_redis(stack: Stack) -> None:
    text = f"Shared {uuid.uuid4().hex[:6]}: IL-6 activates STAT3 in hepatocytes."
    project_id, (first, second) = project_with(stack, [text, text])
    calls = stack.llm.request_count
    retrieve(stack, project_id, [first])
    retrieve(stack, project_id, [second])
    assert sorted(stack.proxy.served[-2:]) == ["a", "b"]  # one /predict each
    assert stack.llm.request_count == calls + 1  # the second replica read the first's answer
    assert stack.redis.keys() >= 1
    for task_id in (first, second):
        (prediction,) = predictions(stack, task_id)
        assert surfaces(prediction) == ["activates"]


def test_a_replica_killed_mid_run_costs_only_a_second_retrieve(stack: Stack) -> None:
    texts = [f"Run {uuid.uuid4().hex[:6]} case {i}: IL-6 activates STAT3." for i in range(12)]
    project_id, task_ids = project_with(stack, texts)
    stack.llm.latency_s = 2.0  # each /predict is held long enough to be killed in the middle
    groups = [task_ids[i::4] for i in range(4)]
    errors: list[str] = []
    threads = [
        threading.Thread(
            target=retrieve_quietly, args=(stack, project_id, group, errors), daemon=True
        )
        for group in groups
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while stack.proxy.in_flight["a"] == 0:
        assert time.monotonic() < deadline, "replica a never received a /predict"
        time.sleep(0.05)
    time.sleep(0.5)  # inside the replica now, waiting on the provider
    stack.replicas[0].kill()
    for thread in threads:
        thread.join(timeout=120)
    stack.llm.latency_s = 0.0
    missing = [t for t in task_ids if not predictions(stack, t)]
    assert missing, "the kill should have cost the predictions replica a was computing"
    assert ("a", "/predict", 502) in stack.proxy.events
    assert len(missing) < len(task_ids)  # replica b answered its share
    retrieve(stack, project_id, missing)  # what the operator does; the proxy skips replica a
    versions = set()
    for task_id, text in zip(task_ids, texts, strict=True):
        (prediction,) = predictions(stack, task_id)  # exactly one per task
        assert surfaces(prediction) == ["activates"], text
        versions.add(prediction["model_version"])
    assert len(versions) == 1


def test_predictions_go_on_when_redis_stops(stack: Stack) -> None:
    stack.redis.stop()
    texts = [f"No cache {uuid.uuid4().hex[:6]} {i}: TNF upregulates IL-8." for i in range(3)]
    project_id, task_ids = project_with(stack, texts)
    calls = stack.llm.request_count
    retrieve(stack, project_id, task_ids)
    for task_id in task_ids:
        (prediction,) = predictions(stack, task_id)
        assert surfaces(prediction) == ["upregulates"]
    assert stack.llm.request_count == calls + 3
