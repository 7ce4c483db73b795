"""``goldloop backend`` as a real server: uvicorn for one process, gunicorn for several."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from goldloop.backend.serve import gunicorn_options
from tests.backend.conftest import free_port
from tests.conftest import Cli

GOLDLOOP = Path(sys.executable).parent / "goldloop"
TEXT = "In these cells, IL-3 upregulates the TNF receptor."


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_goldloop_backend_serves_the_protocol(workers: int, tmp_path: Path) -> None:
    port = free_port()
    # A clean environment: no provider key, so the lexical pre-annotator answers.
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GOLDLOOP_HOME": str(tmp_path),
           "LABEL_STUDIO_URL": "http://studio-host-xyz:8080"}  # fmt: skip
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
    said = process.stdout.read().decode() if process.stdout else ""
    # which Label Studio variables are set, never their values
    assert "LABEL_STUDIO_URL set, LABEL_STUDIO_API_KEY not set" in said
    assert "studio-host-xyz" not in said


# --- refusals before serving: one line, exit 2, nothing started ---

BACKEND_DIR = Path(__file__).resolve().parents[2] / "backend"


def test_a_non_loopback_interface_without_basic_auth_is_refused(cli: Cli) -> None:
    result = cli("backend", "--host", "0.0.0.0", "--port", free_port())
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "refusing to serve 0.0.0.0 without basic auth" in line
    assert "BASIC_AUTH_USER and BASIC_AUTH_PASS" in line and "GOLDLOOP_INSECURE=1" in line


def test_a_port_in_use_is_one_line_exit_2(cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("backend", "--port", port)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: 127.0.0.1:{port} is already in use by another process: choose another port"
    ]


@pytest.mark.parametrize("port", ["-1", "0", "70000"])
def test_a_port_out_of_range_is_refused_naming_the_option(cli: Cli, port: str) -> None:
    result = cli("backend", "--port", port)
    assert result.returncode == 2
    assert "Invalid value for '--port'" in result.err and "Traceback" not in result.err


def test_the_container_config_refuses_the_network_without_basic_auth(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GOLDLOOP_HOME": str(tmp_path)}
    done = subprocess.run(
        [str(GOLDLOOP.with_name("gunicorn")), "--config", "gunicorn.conf.py", "_wsgi:app"],
        cwd=BACKEND_DIR, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "refusing to serve 0.0.0.0 without basic auth" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_cli_and_the_container_share_the_gunicorn_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key, value in {"HOST": "127.0.0.1", "PORT": "9191", "WORKERS": "3",
                       "LOG_LEVEL": "debug"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    config: dict[str, object] = {}
    exec((BACKEND_DIR / "gunicorn.conf.py").read_text(), config)  # as gunicorn reads it
    expected = gunicorn_options("127.0.0.1", 9191, 3, "debug")
    assert {key: config[key] for key in expected} == expected
