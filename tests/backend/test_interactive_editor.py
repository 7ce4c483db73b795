"""Interactive suggestions as an annotator meets them: headless Chromium, Auto-Annotation on.

The lexical backend is connected to a pushed campaign as an interactive ML backend. In the real
editor the test changes a pre-annotated region's direction, draws a region over a verb the
pre-annotation missed (a real mouse drag over the words), checks the suggestion lands on the drawn
region and the edit stays, submits, pulls, and finds both in the gold. The editor sends every
region of the task with each drawing, the edited one first: goldloop used to answer for that one,
and the editor then replaced it, reverting the edit. The context the editor sent is recorded at
the backend and checked for that shape.

Measured in Label Studio 1.23.2, not goldloop's to fix: the suggested region's per-region picker
and direction buttons show empty (its Info panel lists the suggestion, which is what is checked
and what Submit stores); once the editor has accepted a suggestion for a Text region, it logs ``Cannot read properties of null (reading 'includes')`` in
``removeSpans``, and the next region drawn on that page is listed but neither highlighted nor sent
to the backend (``Cannot read properties of null (reading 'start')``); reloading the task clears it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.backend.conftest import RunningBackend, running_backend
from tests.studio.test_browser import _press_submit, _select_region, _wait, browser

from goldloop.backend.predictor import Predictor
from goldloop.backend.settings import AnnotatorSpec, BackendSettings
from goldloop.gold import Document, read_gold
from goldloop.kb import KB
from goldloop.lexical import LexicalAnnotator
from goldloop.nlp import load_nlp
from goldloop.studio.project import find_project
from goldloop.studio.pull import pull
from goldloop.studio.push import Candidates, push

__all__ = ["browser"]

pytestmark = pytest.mark.studio

TEXT = "TNF activates NF-kB, which is inhibited by IkB and degrades IL-8 in these cells."
ACTIVATES, INHIBITS = "PEL.000000", "PEL.000018"


@pytest.fixture(scope="module")
def recording_backend(kb: KB) -> Iterator[tuple[RunningBackend, list[Any]]]:
    """The lexical backend, with every context the editor sends recorded on its way in."""
    predictor = Predictor(kb, LexicalAnnotator(kb), nlp=load_nlp())
    contexts: list[Any] = []
    suggest = predictor.suggester.suggest

    def recorded(task: Any, context: object) -> list[dict[str, Any]]:
        contexts.append(json.loads(json.dumps(context)))
        return suggest(task, context)

    predictor.suggester.suggest = recorded  # type: ignore[method-assign]
    with running_backend(BackendSettings(annotator=AnnotatorSpec("lexical")), predictor) as backend:
        yield backend, contexts


def _campaign(
    label_studio: Any, kb: KB, backend: RunningBackend, tmp: Path
) -> tuple[str, int, int]:
    """One task whose pre-annotation holds "activates" only; the backend connected as
    interactive: (campaign name, project id, task id)."""
    a, b = TEXT.index("activates"), TEXT.index("activates") + 9
    gold = tmp / "gold.a.json"
    gold.write_text(json.dumps([{
        "doc_id": "pmid:41", "text": TEXT, "role": "primary", "ground_truth": [{
            "a": a, "b": b, "surface": "activates", "entity_id": ACTIVATES,
            "direction": "forward", "annotator": "lexical", "source": "lexical",
        }],
    }]), encoding="utf-8")  # fmt: skip
    name = f"editor-{uuid.uuid4().hex[:6]}"
    documents = [Document(doc_id="pmid:41", text=TEXT, role="primary")]
    push(label_studio.connection, label_studio.client, documents, name, kb,
         a=Candidates.from_gold(gold, kb))  # fmt: skip
    project = find_project(label_studio.connection, label_studio.client, name)
    assert project is not None
    label_studio.client.ml.create(
        project=project.id, url=backend.url, title=backend.predictor.model_version,
        is_interactive=True,
    )  # fmt: skip
    (task,) = label_studio.client.tasks.list(project=project.id)
    return name, project.id, task.id


def _regions(driver: Any) -> list[str]:
    from selenium.webdriver.common.by import By

    return [h.text for h in driver.find_elements(By.CSS_SELECTOR, ".htx-highlight")]


def _drag_over(driver: Any, surface: str) -> None:
    """Select ``surface`` in the task's text with a real mouse drag (press, move, release)."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    box = driver.execute_script(
        """
        const [surface] = arguments;
        const root = document.querySelector('.lsf-richtext, .htx-richtext, [class*="richtext"]');
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent.indexOf(surface);
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + surface.length);
          const r = range.getBoundingClientRect();
          return {left: r.left, right: r.right, y: r.top + r.height / 2};
        }
        return null;
        """,
        surface,
    )
    assert box is not None, f"{surface!r} is not in the editor's text"
    actions = ActionBuilder(driver)
    actions.pointer_action.move_to_location(int(box["left"]) + 1, int(box["y"]))
    actions.pointer_action.pointer_down()
    actions.pointer_action.move_to_location(int(box["right"]) - 1, int(box["y"]))
    actions.pointer_action.pointer_up()
    actions.perform()


def _label_selected(driver: Any) -> bool:
    """Whether the Predicate label is on (its hotkey toggles it)."""
    return bool(driver.find_elements("css selector", ".lsf-label.lsf-label_selected"))


def _press(driver: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def _region_details(driver: Any) -> tuple[str, str] | None:
    """The selected region's relation and direction as its details panel lists them."""
    lines = driver.find_element("tag name", "body").text.splitlines()
    try:
        return lines[lines.index("Taxonomy:") + 1], lines[lines.index("Choices:") + 1]
    except (ValueError, IndexError):
        return None


def _choose_direction(driver: Any, direction: str) -> None:
    from selenium.webdriver.common.by import By

    (label,) = [
        r.find_element(By.XPATH, "./ancestor::label[1]")
        for r in driver.find_elements(By.CSS_SELECTOR, "input.ant-radio-input")
        if r.find_element(By.XPATH, "./ancestor::label[1]").text.split("[")[0].strip() == direction
    ]
    label.click()


def _selected_relation_and_direction(driver: Any) -> tuple[str, list[str]]:
    from selenium.webdriver.common.by import By

    taxonomy = _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".htx-taxonomy"))
    checked = [
        r.find_element(By.XPATH, "./ancestor::label[1]").text.split("[")[0].strip()
        for r in driver.find_elements(By.CSS_SELECTOR, "input.ant-radio-input")
        if r.is_selected()
    ]
    # The picker shows the label with its other forms, "activates (activated by, activating)".
    return taxonomy.text.strip().split(" (")[0], checked


def test_a_suggestion_lands_on_the_drawn_region_and_keeps_the_annotators_edit(
    browser: Any,
    label_studio: Any,
    kb: KB,
    recording_backend: tuple[RunningBackend, list[Any]],
    tmp_path: Path,
) -> None:
    from selenium.webdriver.common.by import By

    backend, contexts = recording_backend
    name, project_id, task_id = _campaign(label_studio, kb, backend, tmp_path)
    browser.get(f"{label_studio.url}/projects/{project_id}/data?task={task_id}")
    _wait(browser, lambda d: _regions(d) == ["activates"])

    toggle = _wait(
        browser,
        lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=bottombar-auto-annotation-toggle]"),
    )
    if not toggle.is_selected():
        browser.execute_script("arguments[0].click()", toggle)
    _wait(browser, lambda d: d.find_element(
        By.CSS_SELECTOR, "[data-testid=bottombar-auto-annotation-toggle]").is_selected())  # fmt: skip

    # 1. The annotator changes the pre-annotated region's direction to na ...
    _select_region(browser, 0)
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["forward"]))
    _choose_direction(browser, "na")
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["na"]))
    _select_region(browser, 0)  # a second click unselects it: the drag draws a new region

    # 2. ... draws over "inhibited by", which the pre-annotation missed: the editor sends both
    # regions, the edited one first; the KB's suggestion lands on the drawn one.
    if not _label_selected(browser):
        _press(browser, "1")
    _drag_over(browser, "inhibited by")
    _wait(browser, lambda d: _regions(d) == ["activates", "inhibited by"])
    _wait(browser, lambda d: len(contexts) == 1)
    _select_region(browser, 1)
    _wait(browser, lambda d: _region_details(d) == ("inhibits", "inverse"))
    browser.save_screenshot(str(tmp_path / "suggested.png"))
    (context,) = contexts
    assert [(i["id"], i["from_name"], i["origin"]) for i in context["result"]] == [
        ("m4_13", "mention", "prediction-changed"), ("m4_13", "relation", "prediction-changed"),
        ("m4_13", "direction", "prediction-changed"),
        (context["result"][-1]["id"], "mention", "manual"),
    ]  # fmt: skip
    assert context["result"][2]["value"]["choices"] == ["na"]
    # The edit is still there after the suggestion.
    _select_region(browser, 0)
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["na"]))

    # 3. Submit, pull: the gold holds the edit and the drawn region with its suggestion.
    _press_submit(browser)
    _wait(browser, lambda d: label_studio.client.tasks.get(id=task_id).total_annotations == 1)
    out = tmp_path / "gold.verified.json"
    pull(label_studio.connection, label_studio.client, name, kb, out)
    (document,) = read_gold(out, kb).documents
    assert sorted(
        (h.surface, h.entity_id, h.direction, h.verdict) for h in document.ground_truth
    ) == [("activates", ACTIVATES, "na", "fix"), ("inhibited by", INHIBITS, "inverse", "added")]
