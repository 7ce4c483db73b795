"""The production stack of docker/compose.yaml, without Docker, on 127.0.0.1.

- PostgreSQL: the machine's server (``GOLDLOOP_TEST_POSTGRES``, default
  ``postgresql://postgres@127.0.0.1:5432/postgres``); the session creates its own database
  ``goldloop_test_<random>`` and drops only that one afterwards.
- Label Studio on that database, started by ``goldloop.studio.server.start(database=...)``
  (what ``goldloop studio start --database`` runs): ONE for every stack test (its migrations
  take a minute or two).
- Redis: a ``redis-server`` of the tests' own on a free port, never the machine's (a test
  stops it).
- Two backend replicas, ``goldloop backend --workers 2`` (gunicorn) each, sharing that Redis,
  pre-annotating with the fake LLM provider (tests/fakes/llm_server.py) in this process.
- A round-robin proxy in front of them: the one URL Label Studio knows, as Docker's service
  name is in the compose file.

Outside CI a missing PostgreSQL, Redis or Label Studio skips these tests with the reason; in CI
(``CI=true``) it fails them.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from goldloop.errors import GoldloopError
from goldloop.studio import server
from tests.backend.conftest import free_port, redis_binary, wait_for_port
from tests.conftest import (
    LabelStudioServer,
    environment,
    in_ci,
    serving,
    studio_executable,
)
from tests.fakes.llm_server import FakeLLMServer, FakeRequest

REPLICAS = ("a", "b")  # docker/compose.yaml: deploy.replicas
REPLICA_WORKERS = 2  # docker/compose.yaml: WORKERS, ${BACKEND_WORKERS:-2}
POSTGRES_ENV = "GOLDLOOP_TEST_POSTGRES"
DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
GOLDLOOP = Path(sys.executable).parent / "goldloop"


def verbs_answer(request: FakeRequest) -> str:
    """The fake provider's script: a mention for each of these verbs the text holds."""
    found = [
        {"surface": verb, "occurrence": 1, "label": verb, "direction": "forward"}
        for verb in ("activates", "upregulates")
        if verb in request.user
    ]
    return json.dumps({"mentions": found})


def retrieve_predictions(client: Any, project_id: int, task_ids: list[int]) -> None:
    """Label Studio's "Retrieve predictions" action: one /predict for these tasks. The SDK's own
    retries are off: an operator's click is one call (a retried action would hide a kill)."""
    client.actions.create(
        id="retrieve_tasks_predictions",
        project=project_id,
        selected_items={"all": False, "included": task_ids},
        request_options={"max_retries": 0},
    )


def surfaces(prediction: dict[str, Any]) -> list[str]:
    return [r["value"]["text"] for r in prediction["result"] if r["from_name"] == "mention"]


def unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"the stack tests must run in CI: {reason}")
    pytest.skip(reason)


# ---------------------------------------------------------------------------------------------
# PostgreSQL


def psql(admin_url: str, sql: str, database: str | None = None) -> str:
    """Run one statement with the ``psql`` client; its output (tuples only)."""
    binary = shutil.which("psql")
    if binary is None:
        unavailable("psql is not installed (Debian package postgresql-client)")
    url = admin_url if database is None else admin_url.rsplit("/", 1)[0] + f"/{database}"
    done = subprocess.run(
        [str(binary), url, "-v", "ON_ERROR_STOP=1", "-Atc", sql],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"psql {sql!r}: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass(frozen=True)
class SessionDatabase:
    admin_url: str
    name: str

    @property
    def url(self) -> str:
        return self.admin_url.rsplit("/", 1)[0] + f"/{self.name}"

    def query(self, sql: str) -> str:
        return psql(self.admin_url, sql, self.name)


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[SessionDatabase]:
    """A fresh database of this session's own on the machine's PostgreSQL, dropped afterwards."""
    admin = os.environ.get(POSTGRES_ENV, DEFAULT_POSTGRES)
    try:
        psql(admin, "SELECT 1")
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        unavailable(f"no PostgreSQL at {admin} (set {POSTGRES_ENV}): {exc}")
    database = SessionDatabase(admin, f"goldloop_test_{uuid.uuid4().hex[:12]}")
    psql(admin, f'CREATE DATABASE "{database.name}"')
    try:
        yield database
    finally:
        # Only our own database; FORCE ends connections a killed server may have left behind.
        psql(admin, f'DROP DATABASE IF EXISTS "{database.name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def studio_on_postgres(
    postgres_database: SessionDatabase, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LabelStudioServer]:
    """One Label Studio on the session's PostgreSQL database for every stack test."""
    pytest.importorskip("label_studio_sdk", reason="the studio extra is not installed")
    home = tmp_path_factory.mktemp("stack-studio") / "studio"
    try:
        read = environment()
        executable = studio_executable()
        state = server.start(
            home, executable=executable, database=postgres_database.url, settings=read
        )
    except GoldloopError as exc:
        unavailable(f"no Label Studio on PostgreSQL: {exc}")
    with serving(home, executable, state) as studio:
        yield studio


# ---------------------------------------------------------------------------------------------
# Redis, the backend replicas and the proxy


class RedisProcess:
    """A redis-server of the test's own on a free loopback port, without persistence."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )  # fmt: skip
        wait_for_port(self.port, self.process)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def keys(self) -> int:
        import redis

        return int(redis.Redis.from_url(self.url).dbsize())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


class Replica:
    """``goldloop backend --workers N`` (gunicorn) on a loopback port, in its own process group."""

    def __init__(self, name: str, env: dict[str, str], log: Path) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [str(GOLDLOOP), "backend", "--host", "127.0.0.1", "--port", str(self.port),
             "--workers", str(REPLICA_WORKERS)],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.log = log

    def wait_healthy(self, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"replica {self.name} exited:\n{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"replica {self.name} did not answer /health:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL to gunicorn's master and workers at once: a crashed machine, no goodbye."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


class RoundRobinProxy:
    """One URL over the replicas: each ``POST /predict`` goes to the next replica; other calls
    (``/health``, ``/setup``) to the first live one. A replica that refuses the connection is
    skipped (as a load balancer's health check would); a request it accepted and then dropped
    answers 502, never a retry, so a killed replica costs its in-flight predictions."""

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = replicas
        self.served: list[str] = []  # replica name per /predict answered
        self.events: list[tuple[str, str, int]] = []  # (replica, path, status) per call
        self.in_flight: dict[str, int] = {r.name: 0 for r in replicas}  # /predict calls held
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _order(self, predict: bool) -> list[Replica]:
        start = next(self._turn) % len(self.replicas) if predict else 0
        return self.replicas[start:] + self.replicas[:start]

    def forward(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        predict = path.startswith("/predict")
        with self._lock:
            order = self._order(predict)
        for replica in order:
            request = urllib.request.Request(
                replica.url + path, data=body, method=method, headers=headers
            )
            with self._lock:
                self.in_flight[replica.name] += predict
            try:
                with urllib.request.urlopen(request, timeout=120) as reply:
                    payload = reply.read()
                    status = reply.status
            except urllib.error.HTTPError as exc:
                payload, status = exc.read(), exc.code
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, ConnectionRefusedError):
                    continue  # down before the request: try the next replica
                self.events.append((replica.name, path, 502))
                return 502, str(exc.reason).encode()
            except OSError as exc:  # the replica died holding the request
                self.events.append((replica.name, path, 502))
                return 502, str(exc).encode()
            finally:
                with self._lock:
                    self.in_flight[replica.name] -= predict
            with self._lock:
                self.events.append((replica.name, path, status))
                if predict:
                    self.served.append(replica.name)
            return status, payload
        return 502, b"no replica is up"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                status, payload = proxy.forward(self.command, self.path, body, headers)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _relay
            do_POST = _relay

        return Handler


@dataclass
class Stack:
    studio: LabelStudioServer
    database: SessionDatabase
    llm: FakeLLMServer
    redis: RedisProcess
    replicas: list[Replica]
    proxy: RoundRobinProxy


def replica_env(llm: FakeLLMServer, redis_url: str, home: Path) -> dict[str, str]:
    """What the compose file gives the backend service, pointed at the fake provider."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GOLDLOOP_HOME": str(home),
        "GOLDLOOP_PROVIDER": "openai",
        "GOLDLOOP_MODEL": "gpt-test",
        "GOLDLOOP_BASE_URL": llm.base_url("openai"),
        "OPENAI_API_KEY": "test-key-not-a-secret",
        "REDIS_URL": redis_url,
    }


@pytest.fixture(scope="module")
def stack(
    studio_on_postgres: LabelStudioServer,
    postgres_database: SessionDatabase,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp("stack")
    llm = FakeLLMServer().start()
    redis_process = RedisProcess(workdir)
    replicas: list[Replica] = []
    proxy = None
    try:
        for name in REPLICAS:
            home = workdir / name
            home.mkdir()
            replicas.append(
                Replica(name, replica_env(llm, redis_process.url, home), workdir / f"{name}.log")
            )
        for replica in replicas:
            replica.wait_healthy()
        proxy = RoundRobinProxy(replicas)
        yield Stack(studio_on_postgres, postgres_database, llm, redis_process, replicas, proxy)
    finally:
        if proxy is not None:
            proxy.close()
        for replica in replicas:
            replica.stop()
        redis_process.stop()
        llm.close()
