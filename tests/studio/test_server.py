"""The embedded Label Studio answers on its recorded port with the pre-created user's token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goldloop.settings import Settings
from goldloop.studio import server
from goldloop.studio.connection import StudioError, connect, resolve_connection
from tests.conftest import _prepare_home


def test_session_server_is_up_with_legacy_token(label_studio) -> None:
    assert server.health(label_studio.url)
    me = label_studio.studio.sdk.users.whoami()
    assert me.email == server.DEFAULT_USERNAME
    status = server.status(label_studio.home)
    assert status is not None and status.url == label_studio.url


def test_connection_prefers_explicit_url(tmp_path: Path) -> None:
    read = Settings.from_env({"LABEL_STUDIO_API_KEY": "k" * 40})
    conn = resolve_connection("http://127.0.0.1:9/", None, home=tmp_path, settings=read)
    assert conn.url == "http://127.0.0.1:9"
    assert "k" * 40 not in repr(conn)


def test_no_server_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StudioError, match="goldloop studio start"):
        resolve_connection(home=tmp_path, settings=Settings.from_env({}))
    # Without a home, the settings' own: $GOLDLOOP_HOME/studio, where no server runs either.
    with pytest.raises(StudioError, match="goldloop studio start"):
        resolve_connection(settings=Settings.from_env({"GOLDLOOP_HOME": str(tmp_path)}))


def test_commands_find_the_server_from_a_subfolder(
    label_studio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    """The project's home is found as git finds its repository: `studio status` (and every
    command that connects: push, pull, status) works from a folder below it, and says which home."""
    project = tmp_path / "project"
    below = project / "work" / "sample"
    below.mkdir(parents=True)
    (project / ".goldloop").symlink_to(label_studio.home.parent)  # the session server's home
    monkeypatch.chdir(below)
    monkeypatch.delenv("GOLDLOOP_HOME", raising=False)
    result = cli("studio", "status")
    assert result.returncode == 0, result.stderr
    assert f"url: {label_studio.url}" in result.stdout
    assert (
        f"{label_studio.home.parent.resolve()}, found from the working directory" in result.stdout
    )
    connection = resolve_connection(settings=Settings.from_env({}))
    assert connection.url == label_studio.url
    # Outside the project nothing runs, and the line names the home it looked in.
    monkeypatch.chdir(tmp_path)
    result = cli("studio", "status")
    home = (tmp_path / ".goldloop").resolve()
    assert (result.returncode, result.stdout.strip()) == (
        1,
        f"not running (home {home}, found from the working directory)",
    )


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


def test_start_on_a_busy_port_fails_at_once(label_studio, tmp_path: Path, cli) -> None:
    """The session server's port is taken: refused before anything starts (not after --timeout)."""
    env = {"GOLDLOOP_HOME": str(tmp_path), "GOLDLOOP_LABEL_STUDIO": str(label_studio.executable)}
    port = label_studio.state.port
    result = cli("studio", "start", "--port", port, "--timeout", 30, env=env)
    assert result.returncode == 2, result.stderr
    assert result.err == f"error: --port: 127.0.0.1:{port} is in use (Address already in use); " \
        "choose another port, or none for a free one"  # fmt: skip
    assert not (tmp_path / "studio").exists()  # no log, no state, no process
    assert server.health(label_studio.url)  # the server on that port is untouched


def _start_in_a_process(home: Path, executable: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``goldloop studio start`` on a copy of a migrated home; returns once Label Studio was
    launched (its pid recorded), long before it answers."""
    command = [str(Path(sys.executable).with_name("goldloop")), "studio", "start"]
    env = {
        **os.environ,
        "GOLDLOOP_HOME": str(home.parent),
        "GOLDLOOP_LABEL_STUDIO": str(executable),
    }
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(600):
        if (home / "server.json").is_file():
            return process, server.read_state(home).pid  # type: ignore[union-attr]
        time.sleep(0.1)
    process.kill()
    raise AssertionError("goldloop studio start recorded no server within 60 s")


def test_an_interrupted_start_leaves_no_server(label_studio, tmp_path: Path) -> None:
    home = _prepare_home(tmp_path, label_studio.executable)
    process, pid = _start_in_a_process(home, label_studio.executable)
    assert server._alive(pid)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert not server._alive(pid)
    assert not (home / "server.json").exists()


def test_a_start_killed_while_waiting_leaves_a_server_stop_knows(
    label_studio, tmp_path: Path
) -> None:
    home = _prepare_home(tmp_path, label_studio.executable)
    process, pid = _start_in_a_process(home, label_studio.executable)
    process.kill()  # no chance to clean up: the state file must already name the server
    process.wait(timeout=30)
    assert server._alive(pid)
    assert server.stop(home)
    assert not server._alive(pid)
