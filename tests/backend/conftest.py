"""Fixtures for the ML backend tests: a real redis-server, the backend on a loopback port."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from goldloop.backend.app import create_app
from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.predictor import Predictor
from goldloop.kb import KB
from goldloop.llm.base import CREDENTIALS
from goldloop.studio.label_config import render_label_config
from goldloop.studio.server import free_port
from goldloop.text.lexical import LexicalAnnotator
from tests.conftest import environment_parsing
from tests.fakes.llm_server import FakeLLMServer


def redis_binary() -> str:
    """The redis-server executable; skipped with the reason where missing, failed in CI."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is required in CI (.ci/run installs the Debian package)")
        pytest.skip(
            "redis-server is not installed (Debian package redis-server): Redis cache untested"
        )
    return binary


@contextmanager
def running_redis(workdir: Path, port: int | None = None) -> Iterator[str]:
    """A redis-server of our own on a loopback port (a free one by default), without
    persistence; yields its URL."""
    port = port or free_port()
    process = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for_port(port, process)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def wait_for_port(
    port: int, process: subprocess.Popen[bytes], timeout_s: float = 10.0, host: str = "127.0.0.1"
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {process.returncode}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {host}:{port} after {timeout_s} s")


@dataclass
class RunningBackend:
    url: str
    predictor: Predictor
    app: Any = None


@contextmanager
def running_backend(settings: BackendSettings, predictor: Predictor) -> Iterator[RunningBackend]:
    """The backend app served by uvicorn on a free loopback port, in a thread of this process."""
    import uvicorn

    port = free_port()
    app = create_app(settings, predictor)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the backend did not start on 127.0.0.1:{port}")
        time.sleep(0.02)
    try:
        yield RunningBackend(f"http://127.0.0.1:{port}", predictor, app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def span_of(text: str, surface: str) -> tuple[int, int]:
    """Where Label Studio 1.23 puts the first ``surface``: code points, as its editor counts
    (measured in a browser by tests/studio/test_browser.py), found here with ``str.index``."""
    start = text.index(surface)
    return start, start + len(surface)


def llm_settings(
    server: FakeLLMServer,
    cache: Path,
    provider: str = "openai",
    model: str = "gpt-test",
    **env: str,
) -> BackendSettings:
    """Settings for annotator A on the fake provider server, with its own SQLite cache."""
    key = CREDENTIALS[provider][0]
    base = {"GOLDLOOP_PROVIDER": provider, "GOLDLOOP_MODEL": model, key: "test-key",
            "GOLDLOOP_BASE_URL": server.base_url(provider), "GOLDLOOP_CACHE": str(cache)}  # fmt: skip
    return BackendSettings.from_env({**base, **env})


# --- the app on the lexical annotator: test_app, test_protocol, test_predictor ---

MENTION_TEXT = "𝛼-Synuclein activates TNF, and IL-6 is inhibited by aspirin."
NOTHING_TEXT = "The weather was fine on the day of the survey."
LEXICAL = BackendSettings(annotator=AnnotatorSpec("lexical"))
# Without basic auth the app serves loopback peers only; TestClient's default peer is a name.
LOOPBACK = ("127.0.0.1", 50000)


@pytest.fixture(scope="module")
def label_config(kb: KB) -> str:
    return render_label_config(kb)


@pytest.fixture(scope="module")
def lexical_predictor(kb: KB) -> Predictor:
    return Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())


@pytest.fixture
def client(lexical_predictor: Predictor) -> Iterator[TestClient]:
    with TestClient(create_app(LEXICAL, lexical_predictor), client=LOOPBACK) as test_client:
        yield test_client


def tasks_of(texts: list[str], **extra: Any) -> list[dict[str, Any]]:
    return [
        {"id": 100 + i, "data": {"text": text, "doc_id": f"doc:{i}"}, "predictions": [], **extra}
        for i, text in enumerate(texts)
    ]


def predict(
    client: TestClient,
    tasks: list[dict[str, Any]],
    label_config: str,
    params: dict[str, Any] | None = None,
    **kw: Any,
) -> Any:
    body = {"tasks": tasks, "project": "1.1700000000", "label_config": label_config,
            "params": params or {}}  # fmt: skip
    return client.post("/predict", json=body, **kw)


def basic_auth_header(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}
