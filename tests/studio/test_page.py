"""``goldloop report``'s page opened in headless Chromium (Debian's), served from loopback: it
renders without a console error, every chart is drawn and visible, a table sorts on click, and
the browser asks for nothing but the page. ``--watch`` rewrites the page when work arrives.
The screenshot is docs/report.png's source (saved in the test's folder)."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.studio.project import find_project
from goldloop.studio.push import push
from goldloop.studio.review import hit_regions
from tests.conftest import run_goldloop
from tests.studio.chromium import chromium
from tests.studio.loop_data import ACTIVATES
from tests.studio.published_data import Published

pytestmark = pytest.mark.studio

# status, relations, effort, the effect's shares and minutes, scores
CHARTS = 6


class _Log(http.server.SimpleHTTPRequestHandler):
    requested: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        _Log.requested.append(self.path)


@pytest.fixture(scope="module")
def page(published: Published, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page written by ``goldloop report``, served from a loopback server; its URL."""
    folder = tmp_path_factory.mktemp("page")
    done = run_goldloop(["report", "--project", published.name, "--gold", published.gold,
                         "--system", f"lexical={published.system}", "--bootstrap", 100,
                         "-o", folder / "report.html"], published.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    handler = lambda *a: _Log(*a, directory=str(folder))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/report.html"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("1280,3400", logs=True) as driver:
        yield driver


def test_the_page_renders_offline_with_its_charts_and_sorts(
    page: str, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    _Log.requested.clear()
    browser.get(page)
    charts = browser.find_elements(By.CSS_SELECTOR, "figure.chart svg")
    assert len(charts) == CHARTS
    for chart in charts:
        assert chart.is_displayed() and chart.size["width"] > 300 and chart.size["height"] > 40
        bars = chart.find_elements(By.CSS_SELECTOR, "rect.bar")
        assert bars and all(b.size["width"] >= 1 for b in bars)
    assert not browser.find_elements(By.CSS_SELECTOR, "figure.chart.empty")
    # Every bar says what it means on hover (its SVG title).
    for row in browser.find_elements(By.CSS_SELECTOR, "figure.chart g.row"):
        assert row.find_element(By.TAG_NAME, "title").get_attribute("textContent")
    # The agreement section's table, sorted by value on a click, then reversed on another.
    table = browser.find_element(By.CSS_SELECTOR, "#agreement table.sortable")
    heading = table.find_elements(By.TAG_NAME, "th")[1]

    def values() -> list[float]:
        cells = table.find_elements(By.CSS_SELECTOR, "tbody td:nth-child(2)")
        return [float(c.get_attribute("data-sort")) for c in cells if c.get_attribute("data-sort")]

    before = values()
    heading.click()
    assert heading.get_attribute("aria-sort") == "ascending"
    assert values() == sorted(before) != before
    heading.click()
    assert values() == sorted(before, reverse=True)
    browser.save_screenshot(str(tmp_path / "report.png"))
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    asked = [
        message["params"]["request"]["url"]
        for entry in browser.get_log("performance")
        for message in [json.loads(entry["message"])["message"]]
        if message["method"] == "Network.requestWillBeSent"
    ]
    assert asked and {url for url in asked if not url.startswith("data:")} == {page}
    assert _Log.requested == ["/report.html"]


def test_watch_rewrites_the_page_when_work_arrives(
    label_studio: Any, kb: KB, tmp_path: Path
) -> None:
    name = f"watch-{uuid.uuid4().hex[:6]}"
    text = "IL-6 activates STAT3."
    push(label_studio.studio,
         [Document(doc_id="pmid:1", text=text, role="primary")], name, kb)  # fmt: skip
    out = tmp_path / "report.html"
    env = {**os.environ, "LABEL_STUDIO_URL": label_studio.url,
           "LABEL_STUDIO_API_KEY": label_studio.token}  # fmt: skip
    command = [
        sys.executable,
        "-c",
        "from goldloop.cli import main; main()",
        "report",
        "--project",
        name,
        "-o",
        str(out),
        "--watch",
        "--interval",
        "1",
        "--rounds",
        "20",
    ]
    watching = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        first = out.read_text()
        assert "primary: 0 of 1 tasks annotated" in first
        project = find_project(label_studio.studio, name)
        assert project is not None
        task = next(iter(label_studio.studio.sdk.tasks.list(project=project.id)))
        hit = Hit(a=5, b=14, surface="activates", entity_id=ACTIVATES, direction="forward")
        label_studio.studio.sdk.annotations.create(id=task.id, result=hit_regions(text, hit, kb),
                                               lead_time=30.0)  # fmt: skip
        stdout, _ = watching.communicate(timeout=120)
    finally:
        watching.kill()
    assert watching.returncode == 0
    assert stdout.count("rewritten: work arrived") == 1
    now = out.read_text()
    assert now != first and "primary: 1 of 1 tasks annotated" in now
