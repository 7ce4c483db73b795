"""A real browser (headless Chromium from Debian) renders a pushed, pre-annotated task.

The regions sit on the right words (astral characters before them included), the selected
region shows its relation in the searchable per-region Taxonomy and its direction, and the
review note says where it came from; a curate task opens pre-filled with both annotators'
versions of the disputed region. The project's instructions open before the first task, the
picker finds a relation by the form the text uses ("secreted", "inhibited", "up-regulated", and
"regulated" lists regulates first), Submit is refused
while a region lacks a relation or a direction, and the Data Manager shows ``p_incl`` rounded.
Screenshots are saved.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.formats.labelstudio.tasks import curate_name
from goldloop.formats.labelstudio.verdicts import Region, read_regions
from goldloop.kb import KB
from goldloop.studio import server
from goldloop.studio.label_config import render_instructions
from goldloop.studio.project import find_project
from goldloop.studio.push import Candidates, push
from tests.conftest import REPO
from tests.studio.chromium import chromium
from tests.studio.loop_data import DOCS, STIMULATES, span, text_of, write_inputs

WAIT = 60
# pmid:1's inclusion probability as the sampler stores it: the Data Manager shows it rounded.
LONG_P_INCL = 1 / 81


@pytest.fixture(scope="module")
def browser(label_studio) -> Iterator[object]:
    from selenium.webdriver.common.by import By

    with chromium("1400,1000") as driver:
        creds = server.credentials(label_studio.home)
        driver.get(f"{label_studio.url}/user/login/")
        driver.find_element(By.NAME, "email").send_keys(creds.username)
        driver.find_element(By.NAME, "password").send_keys(creds.password)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        yield driver


@pytest.fixture(scope="module")
def project_tasks(
    kb: KB, label_studio, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, dict[str, int]]:
    _, gold_a, gold_b = write_inputs(tmp_path_factory.mktemp("browser"))
    documents = [Document(**{**d, "role": "primary"}) for d in DOCS]
    documents[0] = documents[0].model_copy(update={"p_incl": LONG_P_INCL})
    name = f"browser-{uuid.uuid4().hex[:6]}"
    push(label_studio.studio, documents, name, kb,
         a=Candidates.from_gold(gold_a, kb), b=Candidates.from_gold(gold_b, kb))  # fmt: skip
    project = find_project(label_studio.studio, name)
    assert project is not None and project.instructions == render_instructions()
    tasks = {
        t.data["doc_id"]: t.id
        for t in label_studio.studio.sdk.tasks.list(project=project.id, page_size=100)
    }
    return project.id, tasks


def _wait(driver, condition):
    """Wait for ``condition``; the editor re-renders, so stale elements just mean "not yet"."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(
        condition
    )


def _open(driver, url: str, project_id: int, task_id: int) -> list[str]:
    """Open a task; the texts of its regions, read inside the wait (the editor re-renders)."""
    from selenium.webdriver.common.by import By

    driver.get(f"{url}/projects/{project_id}/data?task={task_id}")
    return _wait(
        driver, lambda d: [h.text for h in d.find_elements(By.CSS_SELECTOR, ".htx-highlight")]
    )


def _select_region(driver, index: int) -> None:
    """Click a region, finding it again until a click lands on a fresh element."""
    from selenium.webdriver.common.by import By

    _wait(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".htx-highlight")[index].click() or True
    )


def _search_relations(driver, typed: str) -> list[str]:
    """Type ``typed`` in the selected region's relation picker (opened when closed); the
    relations it then lists."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    def search_box(d):
        shown = [
            i for i in d.find_elements(By.CSS_SELECTOR, "input.lsf-taxonomy-search-input")
            if i.is_displayed()
        ]  # fmt: skip
        return shown[0] if shown else None

    if search_box(driver) is None:
        taxonomy = _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".htx-taxonomy"))
        taxonomy.find_element(By.CSS_SELECTOR, ".ant-select-selector").click()
    search = _wait(driver, search_box)
    search.send_keys(Keys.CONTROL, "a")  # typing replaces what an earlier search left
    search.send_keys(typed)
    # The search is debounced (300 ms, TaxonomySearch.tsx): until then the list is the last
    # search's, which may hold what was typed too ("up-regulated", then "regulated").
    time.sleep(0.5)
    return _wait(driver, lambda d: (lambda shown: shown if shown and all(
        typed in t for t in shown) else None)([
            n.text for n in d.find_elements(By.CSS_SELECTOR, ".ant-select-tree-treenode")
            if n.is_displayed()
        ]))  # fmt: skip


def _press_submit(driver) -> None:
    from selenium.webdriver.common.by import By

    button = _wait(driver, lambda d: next(
        (b for b in d.find_elements(By.CSS_SELECTOR, "button") if b.text.strip() == "Submit"), None
    ))  # fmt: skip
    # A script click: an open picker drop-down may cover the button.
    driver.execute_script("arguments[0].click()", button)


def _submitted_regions(driver, label_studio, task_id: int, text: str) -> list[Region]:
    """The regions of the task's submitted annotation, read as pull reads them."""
    (annotation,) = _wait(
        driver, lambda _: label_studio.studio.sdk.tasks.get(id=task_id).annotations
    )
    regions, stray = read_regions(text, annotation["result"])
    assert stray == []
    return regions


def _submit_refused(driver) -> str:
    """Press Submit; the warning Label Studio shows instead of submitting (closed again)."""
    from selenium.webdriver.common.by import By

    _press_submit(driver)
    modal = _wait(driver, lambda d: next(
        (m for m in d.find_elements(By.CSS_SELECTOR, ".ant-modal-confirm") if m.is_displayed()),
        None,
    ))  # fmt: skip
    text = modal.text
    modal.find_element(By.CSS_SELECTOR, "button").click()
    return text


def _shot(driver, path: Path) -> None:
    assert driver.save_screenshot(str(path)) and path.stat().st_size > 10_000


def test_regions_relation_direction_and_search(
    browser, label_studio, project_tasks, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    project_id, tasks = project_tasks
    assert _open(browser, label_studio.url, project_id, tasks["pmid:2"]) == [
        "inhibits",
        "regulates",
    ]
    _select_region(browser, 0)
    taxonomy = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".htx-taxonomy"))
    # The picker shows the relation with its other forms; the region stores the canonical label.
    assert taxonomy.text.strip() == "inhibits (inhibited by, inhibiting)"
    checked = [
        r
        for r in browser.find_elements(By.CSS_SELECTOR, "input.ant-radio-input")
        if r.is_selected()
    ]
    assert [
        r.find_element(By.XPATH, "./ancestor::label[1]").text.split("[")[0] for r in checked
    ] == ["forward"]
    assert (
        "gpt-test@low: inhibits · forward | claude-test: inhibits · inverse"
        in browser.find_element(By.TAG_NAME, "body").text
    )
    # The picker is searchable per region: typing narrows 300 relations to the match.
    taxonomy.find_element(By.CSS_SELECTOR, ".ant-select-selector").click()
    search = _wait(
        browser,
        lambda d: next(
            (
                i
                for i in d.find_elements(By.CSS_SELECTOR, "input.lsf-taxonomy-search-input")
                if i.is_displayed()
            ),
            None,
        ),
    )
    search.send_keys("phosph")
    _wait(
        browser,
        lambda d: (
            [
                n.text
                for n in d.find_elements(By.CSS_SELECTOR, ".ant-select-tree-treenode")
                if n.is_displayed()
            ]
            == ["phosphorylates (phosphorylated by)"]
        ),
    )
    shot = tmp_path / "task-pmid-2.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_astral_text_regions_sit_on_their_words(browser, label_studio, project_tasks) -> None:
    project_id, tasks = project_tasks
    assert _open(browser, label_studio.url, project_id, tasks["pmid:3"]) == [
        "binds to",
        "activates",
    ]


def test_curate_task_shows_both_annotators_versions(
    browser, label_studio, campaign, tmp_path: Path
) -> None:
    """The disputed direction (pmid:14, not curated yet) opens pre-filled from the curation
    prediction; the selected region names each annotator's version."""
    from selenium.webdriver.common.by import By

    project = find_project(label_studio.studio, curate_name(campaign.name))
    assert project is not None
    task = campaign.curate_tasks["pmid:14"]
    assert _open(browser, label_studio.url, project.id, task.id) == ["stimulates"]
    _select_region(browser, 0)
    dispute = f"{campaign.email('alice')}: stimulates · forward | {campaign.email('bob')}: stimulates · inverse"

    def shown(driver) -> str | None:
        text = driver.find_element(By.TAG_NAME, "body").text
        return text if text.count(dispute) >= 2 else None

    # The region's meta and its note both show the dispute; each version is a prediction.
    body = _wait(browser, shown)
    assert "Compare All" in body
    shot = tmp_path / "curate-pmid-14.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_instructions_open_before_the_first_task(
    browser, label_studio, project_tasks, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    project_id, _ = project_tasks
    browser.get(f"{label_studio.url}/projects/{project_id}/data")
    # As an annotator starts: Label Studio opens the instructions when the label stream starts.
    _wait(browser, lambda d: next(
        (b for b in d.find_elements(By.CSS_SELECTOR, "button") if b.text == "Label All Tasks"),
        None,
    )).click()  # fmt: skip
    # The page's own rendering of its text (innerText): Selenium's visible-text reading
    # sometimes leaves out a bold word of the modal ("0.50") while the modal settles.
    text = _wait(browser, lambda d: (lambda t: t if "Labeling Instructions" in t else None)(
        d.execute_script("return document.body.innerText")))  # fmt: skip
    for says in (
        "Accept when relation, direction and words are right: leave it as it is.",
        "click it, then press Backspace or the trash icon.",
        "Add a mention the model missed: press 1, select the words",
        'forward: as the name reads, subject first ("SOCS3 inhibits STAT3");',
        '"TNF activates NF-kB, which is inhibited by IkB."',
        "A suggestion is a proposal to check, not an answer",
        "1.00, the words name exactly one relation of the knowledge base; 0.50, a language model",
        "The same words elsewhere in the abstract may be proposed too",
        "One you submit unchanged is recorded as proposed, not as a mention you made.",
    ):
        assert says in " ".join(text.split())
    _shot(browser, tmp_path / "instructions.png")
    # The Auto-Annotation part, as label_config/instructions-auto-annotation.png shows it.
    heading = browser.find_element(By.XPATH, "//h4[starts-with(., 'Auto-Annotation')]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", heading)
    shot = tmp_path / "instructions-auto-annotation.png"
    _shot(browser, shot)
    if os.environ.get("GOLDLOOP_RECORD") == "1":
        shutil.copyfile(shot, REPO / "label_config" / "instructions-auto-annotation.png")


def test_picker_finds_a_relation_by_the_form_the_text_uses(
    browser, label_studio, project_tasks, tmp_path: Path
) -> None:
    """pmid:4 marks "inhibited by": typing it as the text reads finds inhibits; "secreted"
    finds secretes; the chosen relation is replaced once it is removed (maxUsages is 1), and the
    submitted region holds the canonical label."""
    from selenium.webdriver.common.by import By

    project_id, tasks = project_tasks
    assert _open(browser, label_studio.url, project_id, tasks["pmid:4"]) == [
        "activates",
        "inhibited by",
    ]
    _select_region(browser, 1)
    assert _search_relations(browser, "inhibited") == ["inhibits (inhibited by, inhibiting)"]
    # However an abstract spells a prefixed verb, and the exact verb first among its family.
    for typed in ("upregulated", "up regulated", "up-regulated"):
        upregulates = "upregulates (upregulated by, up-regulated, up regulated)"
        assert _search_relations(browser, typed) == [upregulates]
    assert _search_relations(browser, "regulated")[0] == "regulates (regulated by, regulating)"
    assert _search_relations(browser, "secreted") == ["secretes (secreted by, secreting)"]
    _shot(browser, tmp_path / "picker-secreted.png")
    # Another relation cannot be ticked beside the chosen one; removed first, it replaces it.
    taxonomy = browser.find_element(By.CSS_SELECTOR, ".htx-taxonomy")
    taxonomy.find_element(By.CSS_SELECTOR, ".ant-select-selection-item-remove").click()
    _wait(browser, lambda d: next(
        (n for n in d.find_elements(By.CSS_SELECTOR, ".ant-select-tree-treenode")
         if n.is_displayed() and n.text.startswith("secretes")), None,
    )).find_element(By.CSS_SELECTOR, ".ant-select-tree-title").click()  # fmt: skip
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".htx-taxonomy").text.strip()
          == "secretes (secreted by, secreting)")  # fmt: skip
    _press_submit(browser)
    regions = _submitted_regions(browser, label_studio, tasks["pmid:4"], text_of("pmid:4"))
    assert [(r.a, r.b, r.label, r.direction) for r in regions] == [
        (*span("pmid:4", "activates"), "activates", "forward"),
        (*span("pmid:4", "inhibited by"), "secretes", "inverse"),
    ]


def test_a_mention_is_added_with_1_then_the_words(
    browser, label_studio, project_tasks, tmp_path: Path
) -> None:
    """As the instructions say: press 1, select the words, pick relation and direction."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    project_id, tasks = project_tasks
    assert _open(browser, label_studio.url, project_id, tasks["pmid:8"]) == ["suppresses"]
    line = browser.find_element(By.CSS_SELECTOR, ".lsf-richtext__line")
    browser.find_element(By.TAG_NAME, "body").send_keys("1")
    # "Leptin" is the first word: a double click selects it.
    offset = -line.size["width"] // 2 + 15
    ActionChains(browser).move_to_element_with_offset(line, offset, 0).double_click().perform()
    _wait(browser, lambda d: [h.text for h in d.find_elements(By.CSS_SELECTOR, ".htx-highlight")]
          == ["Leptin", "suppresses"])  # fmt: skip
    _select_region(browser, 0)
    assert _search_relations(browser, "secreted") == ["secretes (secreted by, secreting)"]
    _wait(browser, lambda d: next(
        n for n in d.find_elements(By.CSS_SELECTOR, ".ant-select-tree-treenode") if n.is_displayed()
    )).find_element(By.CSS_SELECTOR, ".ant-select-tree-title").click()  # fmt: skip
    inverse = _wait(browser, lambda d: next(
        (r for r in d.find_elements(By.CSS_SELECTOR, "label.ant-radio-wrapper")
         if r.is_displayed() and r.text.startswith("inverse")), None,
    ))  # fmt: skip
    browser.execute_script("arguments[0].click()", inverse)
    _shot(browser, tmp_path / "added-mention.png")
    _press_submit(browser)
    regions = _submitted_regions(browser, label_studio, tasks["pmid:8"], text_of("pmid:8"))
    assert [(r.a, r.b, r.label, r.direction) for r in regions] == [
        (*span("pmid:8", "Leptin"), "secretes", "inverse"),
        (*span("pmid:8", "suppresses"), "suppresses", "forward"),
    ]


def test_submit_is_refused_for_a_region_without_relation_or_direction(
    kb: KB, browser, label_studio, project_tasks, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    project_id, tasks = project_tasks
    assert _open(browser, label_studio.url, project_id, tasks["pmid:5"]) == ["stimulates"]
    _select_region(browser, 0)
    taxonomy = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".htx-taxonomy"))
    taxonomy.find_element(By.CSS_SELECTOR, ".ant-select-selection-item-remove").click()
    warning = _submit_refused(browser)
    assert "Every mention needs a relation" in warning
    _shot(browser, tmp_path / "submit-refused-relation.png")
    # A candidate without a direction: the annotator must pick one.
    text = "Insulin stimulates glucose uptake."
    a = text.index("stimulates")
    hit = Hit(a=a, b=a + len("stimulates"), surface="stimulates", entity_id=STIMULATES)
    name = f"browser-nodir-{uuid.uuid4().hex[:6]}"
    push(label_studio.studio,
         [Document(doc_id="pmid:5", text=text, role="primary")], name, kb,
         a=Candidates("no-direction", {"pmid:5": [hit]}))  # fmt: skip
    project = find_project(label_studio.studio, name)
    assert project is not None
    (task,) = label_studio.studio.sdk.tasks.list(project=project.id)
    assert _open(browser, label_studio.url, project.id, task.id) == ["stimulates"]
    assert "Every mention needs a direction" in _submit_refused(browser)
    # Label Studio selects the region that lacks it: its controls are on show.
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".htx-taxonomy").is_displayed())
    for refused in (tasks["pmid:5"], task.id):
        assert not label_studio.studio.sdk.tasks.get(id=refused).annotations


def test_data_manager_shows_p_incl_rounded(browser, label_studio, project_tasks) -> None:
    from selenium.webdriver.common.by import By

    project_id, _ = project_tasks
    browser.get(f"{label_studio.url}/projects/{project_id}/data")
    body = _wait(browser, lambda d: (lambda t: t if "pmid:1" in t else None)(
        d.find_element(By.TAG_NAME, "body").text))  # fmt: skip
    assert "p_incl" in body and "0.012" in body and str(LONG_P_INCL) not in body
    # Label Studio's default columns stay hidden in the tab push made.
    assert "Prediction model versions" not in body
