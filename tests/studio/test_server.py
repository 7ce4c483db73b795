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


def _signed_in_page(label_studio, path: str) -> str:
    """A page of the embedded Label Studio as a signed-in browser gets it (session login)."""
    import httpx

    creds = server.credentials(label_studio.home)
    with httpx.Client(base_url=label_studio.url, follow_redirects=True, timeout=30) as client:
        client.get("/user/login/")
        client.post(
            "/user/login/",
            data={"email": creds.username, "password": creds.password,
                  "csrfmiddlewaretoken": client.cookies["csrftoken"]},
            headers={"Referer": f"{label_studio.url}/user/login/"},
        )  # fmt: skip
        page = client.get(path)
    assert page.status_code == 200 and "/user/login" not in str(page.url), page.url
    return page.text


def test_the_embedded_server_configures_no_outbound_address(label_studio) -> None:
    """Label Studio defaults its error reporting to HumanSignal's Sentry (server and browser):
    the embedded server gets no such address, and its pages load nothing from off this host."""
    import re

    # Only these two variables are read: a failure must not print the others (the password).
    environ = Path(f"/proc/{label_studio.state.pid}/environ").read_bytes().split(b"\0")
    sentry = {v.partition(b"=")[0]: v.partition(b"=")[2] for v in environ if b"SENTRY_DSN=" in v}
    assert sentry == {b"SENTRY_DSN": b"", b"FRONTEND_SENTRY_DSN": b""}
    page = _signed_in_page(label_studio, "/projects/")
    assert "sentry_dsn: null" in page and "sentry-cdn" not in page
    loaded = re.findall(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']([^"']+)""", page)
    assert loaded, "the page loads its own scripts"
    outside = [u for u in loaded if re.match(r"(?:https?:)?//", u) and "127.0.0.1" not in u]
    assert outside == []
