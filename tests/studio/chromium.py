"""Headless Chromium from Debian for the tests that look at a page as a person does."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.conftest import in_ci

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def browser_missing() -> str | None:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        return f"no {CHROMIUM} / {CHROMEDRIVER} (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (dev extra)"
    return None


@contextmanager
def chromium(window: str, *, logs: bool = False) -> Iterator[Any]:
    """A headless Chromium of ``window`` size ("W,H"), with its console and network logs when
    ``logs``; skips without one, and fails in CI, where it must run."""
    reason = browser_missing()
    if reason:
        if in_ci():
            pytest.fail(f"the browser check must run in CI: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager fetch a browser
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={window}"):  # fmt: skip
        options.add_argument(arg)
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
