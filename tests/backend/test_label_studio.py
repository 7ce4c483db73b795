"""The backend registered in a real Label Studio: the predictions Label Studio stores are ours."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from label_studio_sdk.core.api_error import ApiError

from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.predictor import Predictor
from goldloop.kb import KB
from goldloop.studio.label_config import render_label_config
from goldloop.text.lexical import LexicalAnnotator
from tests.backend.conftest import RunningBackend, llm_settings, running_backend, span_of
from tests.conftest import environment_parsing
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply, llm_server

__all__ = ["llm_server"]

pytestmark = pytest.mark.studio

TEXTS = [
    "𝛼-Synuclein activates TNF, and IL-6 is inhibited by aspirin 😀.",
    "In these cells, IL-3 upregulates the TNF receptor.",
    "The weather was fine on the day of the survey.",
]
_titles = itertools.count()


def make_project(label_studio: Any, kb: KB, texts: list[str]) -> tuple[int, list[int]]:
    studio = label_studio.studio
    project = studio.sdk.projects.create(
        title=f"backend-{next(_titles)}", label_config=render_label_config(kb)
    )
    tasks = [{"data": {"text": t, "doc_id": f"doc:{i}"}} for i, t in enumerate(texts)]
    imported = studio.sdk.projects.import_tasks(id=project.id, request=tasks, return_task_ids=True)
    return project.id, list(imported.task_ids)


def connect(label_studio: Any, project_id: int, backend: RunningBackend) -> None:
    """Register the backend under the review tag, as the operator does (health + setup run here)."""
    label_studio.studio.sdk.ml.create(
        project=project_id, url=backend.url, title=backend.predictor.model_version
    )


def retrieve(label_studio: Any, project_id: int, task_ids: list[int]) -> None:
    label_studio.studio.sdk.actions.create(
        id="retrieve_tasks_predictions",
        project=project_id,
        selected_items={"all": False, "included": task_ids},
    )


def stored(label_studio: Any, task_id: int) -> list[dict[str, Any]]:
    task = label_studio.studio.sdk.tasks.get(id=task_id)
    return [p if isinstance(p, dict) else p.dict() for p in task.predictions or []]


def mention_spans(prediction: dict[str, Any]) -> list[tuple[int, int, str]]:
    return sorted(
        (r["value"]["start"], r["value"]["end"], r["value"]["text"])
        for r in prediction["result"]
        if r["from_name"] == "mention"
    )


def expected_spans(text: str, surfaces: list[str]) -> list[tuple[int, int, str]]:
    return sorted((*span_of(text, surface), surface) for surface in surfaces)


@pytest.fixture(scope="module")
def lexical_backend(kb: KB) -> Iterator[RunningBackend]:
    predictor = Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    with running_backend(BackendSettings(annotator=AnnotatorSpec("lexical")), predictor) as backend:
        yield backend


def test_label_studio_stores_the_lexical_backends_predictions(
    label_studio: Any, kb: KB, lexical_backend: RunningBackend
) -> None:
    project_id, task_ids = make_project(label_studio, kb, TEXTS)
    connect(label_studio, project_id, lexical_backend)
    retrieve(label_studio, project_id, task_ids)
    tag = f"review:lexical@{kb.tag}"
    expected = [["activates", "inhibited by"], ["upregulates"], []]
    for task_id, text, surfaces in zip(task_ids, TEXTS, expected, strict=True):
        (prediction,) = stored(label_studio, task_id)
        assert prediction["model_version"] == tag
        assert mention_spans(prediction) == expected_spans(text, surfaces)
    # The nothing-found task carries a stored, empty prediction: Label Studio will not ask again.
    assert stored(label_studio, task_ids[2])[0]["result"] == []


def scripted(request: FakeRequest) -> Reply | str:
    if "TRUNCATE" in request.user:
        return Reply('{"mentions": [{"surface": "acti', truncated=True)
    if "weather" in request.user:
        return '{"mentions": []}'
    items = [
        {"surface": "activates", "occurrence": 1, "label": "activates", "direction": "forward"},
        {"surface": "upregulates", "occurrence": 1, "label": "upregulates", "direction": "forward"},
        {"surface": "inhibited by", "occurrence": 1, "label": "inhibited by",
         "direction": "inverse", "confidence": 0.5},
    ]  # fmt: skip
    present = [item for item in items if item["surface"] in request.user]
    return json.dumps({"mentions": present})


def test_label_studio_stores_the_llm_backends_predictions_and_asks_again_after_a_failure(
    label_studio: Any, kb: KB, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.answer = scripted
    settings = llm_settings(llm_server, tmp_path / "cache.sqlite", "anthropic", "claude-test")
    texts = [*TEXTS, "TRUNCATE: IL-3 upregulates the TNF receptor."]
    project_id, task_ids = make_project(label_studio, kb, texts)
    with running_backend(settings, Predictor.from_settings(settings)) as backend:
        connect(label_studio, project_id, backend)
        retrieve(label_studio, project_id, task_ids)
        expected = [["activates", "inhibited by"], ["upregulates"], []]
        for task_id, text, surfaces in zip(task_ids, texts, expected, strict=False):
            (prediction,) = stored(label_studio, task_id)
            # a base URL of one's own is part of the tag, so two servers never share answers
            assert (
                prediction["model_version"]
                == f"review:claude-test@{llm_server.base_url('anthropic')}"
            )
            assert mention_spans(prediction) == expected_spans(text, surfaces)
        assert stored(label_studio, task_ids[0])[0]["score"] == 0.5
        # The truncated answer stored nothing; once the provider answers, Label Studio gets it.
        assert stored(label_studio, task_ids[3]) == []
        llm_server.answer = lambda request: scripted(request) if "TRUNCATE" not in request.user else (
            json.dumps({"mentions": [{"surface": "upregulates", "occurrence": 1,
                                      "label": "upregulates", "direction": "forward"}]})
        )  # fmt: skip
        retrieve(label_studio, project_id, [task_ids[3]])
        (prediction,) = stored(label_studio, task_ids[3])
        assert mention_spans(prediction) == expected_spans(texts[3], ["upregulates"])


def test_label_studio_sends_the_backends_basic_auth(label_studio: Any, kb: KB) -> None:
    settings = BackendSettings(annotator=AnnotatorSpec("lexical"), basic_auth=("ls", "s3cret-pw"))
    predictor = Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    project_id, task_ids = make_project(label_studio, kb, TEXTS[:1])
    with running_backend(settings, predictor) as backend:
        # Without the pair Label Studio's own check of the backend (/setup) is refused.
        with pytest.raises(ApiError) as refused:
            label_studio.studio.sdk.ml.create(project=project_id, url=backend.url, title="no auth")
        assert refused.value.status_code == 400 and "401" in str(refused.value.body), (
            refused.value.body
        )
        label_studio.studio.sdk.ml.create(
            project=project_id, url=backend.url, title=predictor.model_version,
            auth_method="BASIC_AUTH", basic_auth_user="ls", basic_auth_pass="s3cret-pw",
        )  # fmt: skip
        retrieve(label_studio, project_id, task_ids)
        (prediction,) = stored(label_studio, task_ids[0])
    assert mention_spans(prediction) == expected_spans(TEXTS[0], ["activates", "inhibited by"])
