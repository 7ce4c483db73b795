"""Retries of Label Studio requests: the real SDK against a small HTTP server on loopback that
answers as a failing Label Studio would (a 502 from its proxy) and counts what reaches it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from label_studio_sdk import LabelStudio

from goldloop.studio.connection import Connection, Studio, StudioError, StudioUnreachable
from goldloop.studio.server import free_port


class _Server(ThreadingHTTPServer):
    status = 502
    requests: list[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.requests.append(f"{self.command} {self.path}")
        body = json.dumps({"id": 7, "title": "t"} if self.server.status < 300 else {"detail": "x"})
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def label_studio_stand_in(port: int, status: int, delay_s: float = 0.0) -> Iterator[_Server]:
    """Answers every request with ``status``, listening only after ``delay_s``."""
    server = _Server(("127.0.0.1", port), _Handler, bind_and_activate=False)
    server.status, server.requests = status, []

    def listen() -> None:
        server.server_bind()
        server.server_activate()

    # Without a delay it listens before the test's first request: a listen left to a timer
    # thread lost that race on a busy machine (connection refused, one retry fewer reached it).
    later = threading.Timer(delay_s, listen) if delay_s > 0 else None
    if later is None:
        listen()
    else:
        later.start()

    def serve() -> None:
        if later is not None:
            later.join()
        server.serve_forever(0.05)

    serving = threading.Thread(target=serve)
    serving.start()
    try:
        yield server
    finally:
        if later is not None:
            later.join()
        server.shutdown()
        serving.join()
        server.server_close()


def _studio(port: int) -> Studio:
    """As ``connect`` makes it, less its ``whoami`` (the stand-in answers every request alike)."""
    url = f"http://127.0.0.1:{port}"
    return Studio(Connection(url, "key"), LabelStudio(base_url=url, api_key="key", max_retries=0))


def test_a_creating_request_is_not_repeated_after_the_server_failed_it() -> None:
    port = free_port()
    studio = _studio(port)
    with (
        label_studio_stand_in(port, 502) as server,
        pytest.raises(StudioUnreachable, match="HTTP 502"),
    ):
        studio.call_once(studio.sdk.projects.create, title="t")
    assert server.requests == ["POST /api/projects/"]


def test_a_reading_request_is_repeated_after_the_server_failed_it() -> None:
    port = free_port()
    studio = _studio(port)
    with (
        label_studio_stand_in(port, 502) as server,
        pytest.raises(StudioUnreachable, match="HTTP 502"),
    ):
        studio.call(studio.sdk.projects.get, id=7)
    assert server.requests == ["GET /api/projects/7/"] * 4


def test_a_creating_request_is_sent_again_when_it_could_not_be_sent() -> None:
    port = free_port()
    studio = _studio(port)
    # Nothing listens for the first try (connection refused); the server is up for a later one.
    with label_studio_stand_in(port, 201, delay_s=0.3) as server:
        created = studio.call_once(studio.sdk.projects.create, title="t")
    assert created.id == 7
    assert server.requests == ["POST /api/projects/"]


def test_a_deletion_finding_the_thing_gone_is_done() -> None:
    # As a retry after a lost answer finds it: the first try did delete.
    port = free_port()
    studio = _studio(port)
    with label_studio_stand_in(port, 404) as server:
        studio.call_delete(studio.sdk.views.delete, id=7)
        with pytest.raises(StudioError, match="HTTP 404"):
            studio.call(studio.sdk.views.delete, id=7)
    assert server.requests == ["DELETE /api/dm/views/7/"] * 2
