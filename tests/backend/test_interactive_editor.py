"""Interactive suggestions as an annotator meets them: headless Chromium, Auto-Annotation on.

The lexical backend is connected to a pushed campaign as an interactive ML backend. In the real
editor the test changes a pre-annotated region's direction, draws a region over a verb the
pre-annotation missed (a real mouse drag over the words), checks the suggestion lands on the drawn
region, shows in its per-region picker and direction buttons, and the edit stays; then draws a
second region on the same page and checks it gets its own suggestion; submits, pulls, and finds
all three in the gold. The editor sends every region of the task with each drawing, the edited one
first: goldloop used to answer for that one, and the editor then replaced it, reverting the edit.
The context the editor sent is recorded at the backend and checked for that shape.

Measured in Label Studio 1.23.2's editor (``stores/Annotation/Annotation.js``,
``regions/RichTextRegion.js``, ``mixins/HighlightMixin.js`` in its source map): an accepted
suggestion is copied onto the drawn region (``acceptSuggestion``: ``areas.set`` with the
suggestion's snapshot, whose offsets were never computed, and nothing recomputes them), so an
answer of ``start``/``end`` alone leaves the drawn region with ``globalOffsets: null``. With such
an answer this test fails: the drawn region's picker and direction buttons show empty when it is
selected as soon as it is listed (its Info panel lists the suggestion), and the next region drawn
makes ``updateAppearenceFromState`` (HighlightMixin) throw on the first (``Cannot read properties
of null (reading 'start')``), so that region is listed but neither highlighted nor sent to the
backend. goldloop's answer therefore carries ``globalOffsets`` beside ``start``/``end``, which the
editor keeps on the copy (Label Studio stores only ``start``/``end`` on Submit); what remains is a
warning the editor catches itself (``Cannot read properties of null (reading 'includes')`` in
``removeSpans``, from ``beforeDestroy`` of the suggestion's own copy, which was never drawn).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.predictor import Predictor
from goldloop.formats.gold import Document, read_gold
from goldloop.kb import KB
from goldloop.studio.project import find_project
from goldloop.studio.pull import pull
from goldloop.studio.push import Candidates, push
from goldloop.studio.review import region_id
from goldloop.text.lexical import LexicalAnnotator
from tests.backend.conftest import RunningBackend, running_backend
from tests.conftest import environment_parsing
from tests.studio.test_browser import _press_submit, _select_region, _wait, browser

__all__ = ["browser"]

pytestmark = pytest.mark.studio

# Astral characters before every region: Label Studio counts code points, and so must the
# offsets goldloop sends with a suggestion.
TEXT = "𝛼-TNF 🧬 activates NF-kB, which is inhibited by IkB and degrades IL-8 in these cells."
PREDICTED = region_id(TEXT.index("activates"), TEXT.index("activates") + 9)
ACTIVATES, INHIBITS, DEGRADES = "PEL.000000", "PEL.000018", "PEL.000007"


@pytest.fixture(scope="module")
def recording_backend(kb: KB) -> Iterator[tuple[RunningBackend, list[Any]]]:
    """The lexical backend, with every context the editor sends recorded on its way in."""
    predictor = Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    contexts: list[Any] = []
    suggest = predictor.suggester.suggest

    def recorded(task: Any, context: object) -> list[dict[str, Any]]:
        contexts.append(json.loads(json.dumps(context)))
        return suggest(task, context)

    predictor.suggester.suggest = recorded  # type: ignore[method-assign]
    with running_backend(BackendSettings(annotator=AnnotatorSpec("lexical")), predictor) as backend:
        yield backend, contexts


def _campaign(
    label_studio: Any,
    kb: KB,
    backend: RunningBackend,
    tmp: Path,
    text: str = TEXT,
    predicted: tuple[str, str] = ("activates", ACTIVATES),
) -> tuple[str, int, int]:
    """One task whose pre-annotation holds the surface ``predicted`` names only (forward); the
    backend connected as interactive: (campaign name, project id, task id)."""
    surface, entity_id = predicted
    a, b = text.index(surface), text.index(surface) + len(surface)
    gold = tmp / "gold.a.json"
    gold.write_text(json.dumps([{
        "doc_id": "pmid:41", "text": text, "role": "primary", "ground_truth": [{
            "a": a, "b": b, "surface": surface, "entity_id": entity_id,
            "direction": "forward", "annotator": "lexical", "source": "lexical",
        }],
    }]), encoding="utf-8")  # fmt: skip
    name = f"editor-{uuid.uuid4().hex[:6]}"
    documents = [Document(doc_id="pmid:41", text=text, role="primary")]
    push(label_studio.studio, documents, name, kb,
         a=Candidates.from_gold(gold, kb))  # fmt: skip
    project = find_project(label_studio.studio, name)
    assert project is not None
    label_studio.studio.sdk.ml.create(
        project=project.id, url=backend.url, title=backend.predictor.model_version,
        is_interactive=True,
    )  # fmt: skip
    (task,) = label_studio.studio.sdk.tasks.list(project=project.id)
    return name, project.id, task.id


def _auto_annotation_on(driver: Any) -> None:
    """Switch the editor's Auto-Annotation on (the bottom bar's toggle)."""
    from selenium.webdriver.common.by import By

    toggle = "[data-testid=bottombar-auto-annotation-toggle]"
    # Each step finds the toggle again: the bottom bar re-renders while the task loads.
    if not _wait(driver, lambda d: [d.find_element(By.CSS_SELECTOR, toggle).is_selected()])[0]:
        _wait(driver, lambda d: d.execute_script(
            "arguments[0].click()", d.find_element(By.CSS_SELECTOR, toggle)) or True)  # fmt: skip
    _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, toggle).is_selected())


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


def _label_on(driver: Any) -> None:
    """Turn the Predicate label on once the editor shows it, and wait until it is on: a drag
    before that draws nothing (seen once in CI, under load, as a 60 s wait for regions)."""
    _wait(driver, lambda d: d.find_elements("css selector", ".lsf-label"))
    if not _label_selected(driver):
        _press(driver, "1")
    _wait(driver, _label_selected)


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


def test_suggestions_land_on_each_drawn_region_and_keep_the_annotators_edit(
    browser: Any,
    label_studio: Any,
    kb: KB,
    recording_backend: tuple[RunningBackend, list[Any]],
    tmp_path: Path,
) -> None:

    backend, contexts = recording_backend
    name, project_id, task_id = _campaign(label_studio, kb, backend, tmp_path)
    browser.get(f"{label_studio.url}/projects/{project_id}/data?task={task_id}")
    _wait(browser, lambda d: _regions(d) == ["activates"])

    _auto_annotation_on(browser)

    # 1. The annotator changes the pre-annotated region's direction to na ...
    _select_region(browser, 0)
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["forward"]))
    _choose_direction(browser, "na")
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["na"]))
    _select_region(browser, 0)  # a second click unselects it: the drag draws a new region

    # 2. ... draws over "inhibited by", which the pre-annotation missed: the editor sends both
    # regions, the edited one first; the KB's suggestion lands on the drawn one.
    _label_on(browser)
    _drag_over(browser, "inhibited by")
    _wait(browser, lambda d: _regions(d) == ["activates", "inhibited by"])
    _wait(browser, lambda d: len(contexts) == 1)
    _select_region(browser, 1)
    _wait(browser, lambda d: _region_details(d) == ("inhibits", "inverse"))
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("inhibits", ["inverse"]))
    browser.save_screenshot(str(tmp_path / "suggested.png"))
    (context,) = contexts
    assert [(i["id"], i["from_name"], i["origin"]) for i in context["result"]] == [
        (PREDICTED, "mention", "prediction-changed"), (PREDICTED, "relation", "prediction-changed"),
        (PREDICTED, "direction", "prediction-changed"),
        (context["result"][-1]["id"], "mention", "manual"),
    ]  # fmt: skip
    assert context["result"][2]["value"]["choices"] == ["na"]
    # The edit is still there after the suggestion.
    _select_region(browser, 0)
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["na"]))
    _select_region(browser, 0)

    # 3. A second region on the same page: highlighted, sent, and given its own suggestion.
    _label_on(browser)
    _drag_over(browser, "degrades")
    _wait(browser, lambda d: _regions(d) == ["activates", "inhibited by", "degrades"])
    _wait(browser, lambda d: len(contexts) == 2)
    last = contexts[1]["result"][-1]
    assert (last["from_name"], last["origin"], last["value"]["text"]) == (
        "mention", "manual", "degrades"
    )  # fmt: skip
    _select_region(browser, 2)
    _wait(browser, lambda d: _region_details(d) == ("degrades", "forward"))
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("degrades", ["forward"]))
    # The first suggestion is still on its region.
    _select_region(browser, 1)
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("inhibits", ["inverse"]))

    # 4. Submit, pull: the gold holds the edit and both drawn regions with their suggestions.
    _press_submit(browser)
    _wait(browser, lambda d: label_studio.studio.sdk.tasks.get(id=task_id).total_annotations == 1)
    # The editor stores start/end only: the answer's globalOffsets stay in the editor.
    (annotation,) = label_studio.studio.sdk.annotations.list(id=task_id)
    assert not [item for item in annotation.result if "globalOffsets" in item["value"]]
    out = tmp_path / "gold.verified.json"
    pull(label_studio.studio, name, kb, out)
    (document,) = read_gold(out, kb).documents
    assert sorted(
        (h.surface, h.entity_id, h.direction, h.verdict) for h in document.ground_truth
    ) == [
        ("activates", ACTIVATES, "na", "fix"),
        ("degrades", DEGRADES, "forward", "added"),
        ("inhibited by", INHIBITS, "inverse", "added"),
    ]


# Three occurrences of one verb: drawing the first makes the backend propose the other two.
REPEATED = "IL-6 activates STAT3, TNF activates NF-kB, IL-1 activates p38, and 𝛼-TNF inhibits IL-8."


def _proposal_marks(driver: Any) -> int:
    """How many regions the region list marks as a prediction's (Label Studio 1.23.2's
    ``OutlinerTree``: a sparkle icon for ``origin: "prediction"``)."""
    from selenium.webdriver.common.by import By

    return len(
        driver.find_elements(By.CSS_SELECTOR, ".lsf-outliner-item__control_type_predict svg")
    )


def test_a_proposed_occurrence_submitted_untouched_is_recorded_as_proposed(
    recording_backend: tuple[RunningBackend, list[Any]], browser: Any, label_studio: Any, kb: KB,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Drawing one "activates" proposes the other two, marked as predictions in the region
    list; the annotator edits one of them and submits: pull records the drawn region and the
    edited one as the annotator's (``added``), the untouched one as ``proposed`` by the KB."""

    backend, contexts = recording_backend
    name, project_id, task_id = _campaign(
        label_studio, kb, backend, tmp_path, REPEATED, ("inhibits", INHIBITS)
    )
    browser.get(f"{label_studio.url}/projects/{project_id}/data?task={task_id}")
    _auto_annotation_on(browser)
    seen = len(contexts)
    _label_on(browser)
    _drag_over(browser, "activates")
    _wait(browser, lambda d: _regions(d) == ["activates"] * 3 + ["inhibits"])
    assert len(contexts) == seen + 1
    # The two regions nobody drew are shown apart, marked as the pre-annotated one is: Label
    # Studio's mark of a prediction's region.
    _wait(browser, lambda d: _proposal_marks(d) == 3)
    browser.save_screenshot(str(tmp_path / "proposed.png"))
    # The annotator checks the third and changes its direction: it becomes theirs.
    _select_region(browser, 2)
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["forward"]))
    _choose_direction(browser, "na")
    _wait(browser, lambda d: _selected_relation_and_direction(d) == ("activates", ["na"]))
    _wait(browser, lambda d: _proposal_marks(d) == 2)
    _press_submit(browser)
    _wait(browser, lambda d: label_studio.studio.sdk.tasks.get(id=task_id).total_annotations == 1)

    # The editor's real payload: each region's items carry its origin.
    (annotation,) = label_studio.studio.sdk.annotations.list(id=task_id)
    origins = {
        item["value"]["start"]: item["origin"]
        for item in annotation.result
        if item["from_name"] == "mention"
    }
    starts = [m.start() for m in re.finditer("activates", REPEATED)]
    assert [origins[s] for s in starts] == ["manual", "prediction", "prediction-changed"]

    out = tmp_path / "gold.verified.json"
    result, _ = pull(label_studio.studio, name, kb, out)
    (document,) = read_gold(out, kb).documents
    assert [
        (h.a, h.direction, h.verdict, h.source, h.proposed_by) for h in document.ground_truth
    ] == [
        (starts[0], "forward", "added", "human", None),
        (starts[1], "forward", "proposed", "human", "kb"),
        (starts[2], "na", "added", "human", None),
        (REPEATED.index("inhibits"), "forward", "accept", "human", None),
    ]
    sidecar = result.to_dict()
    assert (sidecar["added"], sidecar["proposed"], sidecar["proposals_changed"]) == (2, 1, 1)
