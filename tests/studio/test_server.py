"""The embedded Label Studio answers on its recorded port with the pre-created user's token."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.studio import server
from goldloop.studio.connection import StudioError, connect, resolve_connection


def test_session_server_is_up_with_legacy_token(label_studio) -> None:
    assert server.health(label_studio.url)
    me = label_studio.client.users.whoami()
    assert me.email == server.DEFAULT_USERNAME
    status = server.status(label_studio.home)
    assert status is not None and status.url == label_studio.url


def test_connection_prefers_explicit_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    conn = resolve_connection("http://127.0.0.1:9/", None, home=tmp_path)
    assert conn.url == "http://127.0.0.1:9"
    assert "k" * 40 not in repr(conn)


def test_no_server_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    with pytest.raises(StudioError, match="goldloop studio start"):
        resolve_connection(home=tmp_path)


def test_unreachable_server_and_wrong_token(label_studio) -> None:
    pytest.importorskip("label_studio_sdk")
    from goldloop.studio.connection import Connection

    with pytest.raises(StudioError, match=r"cannot reach Label Studio at http://127\.0\.0\.1:"):
        connect(Connection(f"http://127.0.0.1:{server.free_port()}", "x" * 40), timeout=2)
    with pytest.raises(StudioError, match="refused the API key \\(HTTP 401\\)"):
        connect(Connection(label_studio.url, "0" * 40))
