"""Opening pushed tasks in the real editor costs no LLM call and shows one pre-annotation.

A campaign is pushed with lexical candidates; the backend, configured with an LLM provider (the
fake provider server), is connected as the docs say (title = its review tag, the ``model_version``
``GET /health`` shows). An annotator opens three tasks from *Label All Tasks* in headless Chromium
and submits each. Label Studio 1.23.2 asks the backend for a task in the label stream when the
project's ``model_version`` is an ML backend's title and the task holds no prediction of the
version that backend's ``/setup`` gives (``Task.get_predictions_for_prelabeling``,
``MLBackend.predict_tasks``); what it then stores, it shows as another prediction.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.backend.predictor import Predictor
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.project import find_project
from goldloop.studio.push import Candidates, push
from tests.backend.conftest import llm_settings, running_backend
from tests.fakes.llm_server import FakeLLMServer, llm_server
from tests.studio.test_browser import _press_submit, _wait, browser

__all__ = ["browser", "llm_server"]

pytestmark = pytest.mark.studio

TEXTS = {
    "pmid:51": "IL-6 activates STAT3 in 𝛼-cells.",
    "pmid:52": "SOCS3 inhibits STAT3 🧬 in these cells.",
    "pmid:53": "TNF activates NF-kB, which IL-10 inhibits.",
}


def _pushed(label_studio: Any, kb: KB, tmp: Path) -> tuple[str, int]:
    """Three tasks pushed with the lexical pre-annotation: (campaign name, project id)."""
    documents = [Document(doc_id=d, text=t, role="primary") for d, t in TEXTS.items()]
    gold = tmp / "gold.a.json"
    hits = {
        "pmid:51": [("activates", "PEL.000000")],
        "pmid:52": [("inhibits", "PEL.000018")],
        "pmid:53": [("activates", "PEL.000000"), ("inhibits", "PEL.000018")],
    }
    gold.write_text(json.dumps([{
        "doc_id": d, "text": t, "role": "primary", "ground_truth": [{
            "a": t.index(s), "b": t.index(s) + len(s), "surface": s, "entity_id": e,
            "direction": "forward", "annotator": "lexical", "source": "lexical",
        } for s, e in hits[d]],
    } for d, t in TEXTS.items()]), encoding="utf-8")  # fmt: skip
    name = f"opening-{uuid.uuid4().hex[:6]}"
    push(label_studio.studio, documents, name, kb,
         a=Candidates.from_gold(gold, kb))  # fmt: skip
    project = find_project(label_studio.studio, name)
    assert project is not None
    return name, project.id


def _annotations(label_studio: Any, project_id: int) -> int:
    return sum(t.total_annotations for t in label_studio.studio.sdk.tasks.list(project=project_id))


@pytest.mark.parametrize("title", ["backend", "campaign"])
def test_opening_pushed_tasks_calls_no_llm_and_adds_no_prediction(
    browser: Any, label_studio: Any, kb: KB, llm_server: FakeLLMServer, tmp_path: Path, title: str
) -> None:
    """``title``: the backend connected under its own review tag (the docs' way): Label Studio
    never asks it. Or under the campaign's (the project's ``model_version``, which push set):
    Label Studio asks for each task, and the backend answers from the pushed prediction, with no
    LLM call; Label Studio stores that answer beside it (the same regions, the backend's tag)."""
    from selenium.webdriver.common.by import By

    _, project_id = _pushed(label_studio, kb, tmp_path)
    settings = llm_settings(llm_server, tmp_path / "cache.sqlite")
    with running_backend(settings, Predictor.from_settings(settings)) as backend:
        project = label_studio.studio.sdk.projects.get(id=project_id)
        name = backend.predictor.model_version if title == "backend" else project.model_version
        label_studio.studio.sdk.ml.create(project=project_id, url=backend.url, title=name)
        browser.get(f"{label_studio.url}/projects/{project_id}/data?labeling=1")
        opened = []
        for submitted in range(1, len(TEXTS) + 1):
            regions = _wait(browser, lambda d: [
                h.text for h in d.find_elements(By.CSS_SELECTOR, ".htx-highlight")
            ])  # fmt: skip
            text = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".lsf-richtext").text)
            opened.append((text.strip(), regions))
            _press_submit(browser)
            _wait(browser, lambda _, n=submitted: _annotations(label_studio, project_id) == n)
    assert llm_server.requests == []
    assert sorted(opened) == sorted([
        (TEXTS["pmid:51"], ["activates"]), (TEXTS["pmid:52"], ["inhibits"]),
        (TEXTS["pmid:53"], ["activates", "inhibits"]),
    ])  # fmt: skip
    for task in label_studio.studio.sdk.tasks.list(project=project_id):
        stored = [p if isinstance(p, dict) else p.dict() for p in task.predictions or []]
        if title == "backend":
            assert [p["model_version"] for p in stored] == ["review:lexical"]
        else:
            pushed, answered = sorted(stored, key=lambda p: p["id"])
            assert pushed["model_version"] == "review:lexical"
            assert answered["model_version"] == backend.predictor.model_version
            assert answered["result"] == pushed["result"]
