"""``goldloop backend`` as a real server: uvicorn for one process, gunicorn for several."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from tests.backend.conftest import free_port

GOLDLOOP = Path(sys.executable).parent / "goldloop"
TEXT = "In these cells, IL-3 upregulates the TNF receptor."


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_goldloop_backend_serves_the_protocol(workers: int, tmp_path: Path) -> None:
    port = free_port()
    # A clean environment: no provider key, so the lexical pre-annotator answers.
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GOLDLOOP_HOME": str(tmp_path)}
    command = [str(GOLDLOOP), "backend", "--port", str(port), "--workers", str(workers)]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            try:
                health = httpx.get(f"{url}/health", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the backend did not answer /health"
                time.sleep(0.2)
        assert health.json()["model_version"].startswith("review:lexical@")
        tasks = [{"id": 1, "data": {"text": TEXT}}]
        reply = httpx.post(f"{url}/predict", json={"tasks": tasks}, timeout=60)
        (result,) = reply.json()["results"]
        assert next(r["value"]["text"] for r in result["result"]) == "upregulates"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
