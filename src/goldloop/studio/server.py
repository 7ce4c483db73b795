"""The embedded Label Studio: install, start, stop and describe a local server for the loop and tests.

Label Studio runs in its own environment (never a dependency of goldloop), with SQLite in a local
data dir (or on a PostgreSQL database given by URL), on a free loopback port, as a pre-created
user with a legacy API token. It reads
un-prefixed settings (``HOST``, ``PORT``, ``USERNAME`` ...), so it starts with a clean, explicit
environment; it silently moves to another port when its port is busy, so a server that does not
answer ``/health`` on the chosen port is an error.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from goldloop.errors import GoldloopError, ServiceError, SettingError, mask_credentials
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_json
from goldloop.files.interrupts import deferred_interrupt
from goldloop.settings import STUDIO_EXECUTABLE_ENV, Settings

LABEL_STUDIO_VERSION = "1.23.2"
EXECUTABLE_ENV = STUDIO_EXECUTABLE_ENV
DEFAULT_USERNAME = "admin@goldloop.local"
# First start runs ~36 s of migrations on a quiet machine; CI machines are shared.
START_TIMEOUT = 300.0
# Passed through to Label Studio from the caller's environment; everything else is set explicitly.
_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT", "TMPDIR")


class StudioServerError(GoldloopError):
    """The embedded Label Studio cannot be installed, started or reached."""


class StudioServiceError(StudioServerError, ServiceError):
    """Label Studio, or the PostgreSQL it needs, failed to start or to answer (exit 4)."""


@dataclass(frozen=True)
class Credentials:
    """The pre-created user of one data dir; created once, reused on every start."""

    username: str
    password: str
    token: str


@dataclass(frozen=True)
class ServerState:
    """A running embedded server, as recorded in ``server.json`` (``database``: the PostgreSQL
    URL without its password, or ``None`` for SQLite in the data dir)."""

    url: str
    port: int
    pid: int
    data_dir: str
    username: str
    token: str
    database: str | None = None


@dataclass(frozen=True)
class Database:
    """A PostgreSQL database for Label Studio, from ``postgresql://user:password@host:port/name``.

    A password missing from the URL comes from ``PGPASSWORD`` when set. It reaches Label Studio
    through its environment only, never ``server.json`` or a message.
    """

    name: str
    user: str
    host: str
    port: int
    password: str | None = None

    @classmethod
    def from_url(cls, url: str, pgpassword: str | None = None) -> Database:
        """The database a URL names; its password, else ``pgpassword`` (``PGPASSWORD``, as the
        door read it)."""
        try:
            parts = urlsplit(url.strip())
        except ValueError as exc:  # an unbalanced "[" in the host
            raise StudioServerError(f"database {mask_credentials(url)}: {exc}") from None
        if parts.scheme not in ("postgresql", "postgres"):
            raise StudioServerError(
                f"database {mask_credentials(url)}: only PostgreSQL is supported"
                " (postgresql://user:password@host:port/name)"
            )
        name = unquote(parts.path.lstrip("/"))
        try:
            port = parts.port or 5432
        except ValueError as exc:
            raise StudioServerError(f"database {mask_credentials(url)}: {exc}") from None
        if not name or "/" in name:
            raise StudioServerError(
                f"database {mask_credentials(url)}: no database name in the path"
            )
        password = unquote(parts.password) if parts.password else pgpassword
        return cls(
            name=name,
            user=unquote(parts.username or "postgres"),
            host=parts.hostname or "127.0.0.1",
            port=port,
            password=password,
        )

    def check_reachable(self, timeout: float = 5.0) -> None:
        """Refuse early, in one line, when nothing answers at the database's address."""
        try:
            socket.create_connection((self.host, self.port), timeout=timeout).close()
        except OSError as exc:
            raise StudioServiceError(
                f"PostgreSQL at {self.host}:{self.port} does not answer ({exc.strerror or exc}): "
                f"start it, or check the database URL {self.url}"
            ) from None

    @property
    def url(self) -> str:
        """The URL without the password."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.name}"

    def environment(self) -> dict[str, str]:
        """Label Studio's settings for this database."""
        env = {
            "DJANGO_DB": "default",
            "POSTGRE_NAME": self.name,
            "POSTGRE_USER": self.user,
            "POSTGRE_HOST": self.host,
            "POSTGRE_PORT": str(self.port),
        }
        if self.password is not None:
            env["POSTGRE_PASSWORD"] = self.password
        return env


def studio_home(settings: Settings) -> Path:
    """``.goldloop/studio`` (or ``$GOLDLOOP_HOME/studio``): venv, data dir, state, log. The
    functions here take this folder as ``home``."""
    return settings.home / "studio"


def label_studio_executable(home: Path, *, chosen: str | None = None, install: bool = True) -> Path:
    """``chosen`` (``$GOLDLOOP_LABEL_STUDIO``, as the door read it), else the private venv's
    ``label-studio`` (installed when missing)."""
    if chosen:
        path = Path(chosen)
        if not path.is_file():
            raise StudioServerError(f"{EXECUTABLE_ENV}={chosen}: no such file")
        return path
    venv = home / "venv"
    path = venv / ("Scripts/label-studio.exe" if os.name == "nt" else "bin/label-studio")
    if not path.is_file():
        if not install:
            raise StudioServerError(
                f"Label Studio is not installed in {venv}; run `goldloop studio install`"
            )
        install_label_studio(venv)
    return path


def install_label_studio(venv: Path) -> None:
    """Create ``venv`` and install ``label-studio==LABEL_STUDIO_VERSION`` into it with uv, its
    bytecode compiled."""
    uv = _uv_command()
    venv.parent.mkdir(parents=True, exist_ok=True)
    steps = (
        [*uv, "venv", "--quiet", str(venv)],
        [
            *uv,
            "pip",
            "install",
            "--quiet",
            # Bytecode compiled once here: where PYTHONDONTWRITEBYTECODE is set nothing writes
            # it later, and each start would compile Django's modules from source again.
            "--compile-bytecode",
            "--python",
            str(venv),
            f"label-studio=={LABEL_STUDIO_VERSION}",
        ],
    )
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            raise StudioServerError(
                f"installing Label Studio failed ({' '.join(step[-2:])}): {done.stderr.strip()[-800:]}"
            )


def _uv_command() -> list[str]:
    found = shutil.which("uv")
    if found:
        return [found]
    for python in (sys.executable, shutil.which("python3")):
        if (
            python
            and subprocess.run(
                [python, "-m", "uv", "--version"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            return [python, "-m", "uv"]
    raise StudioServerError("uv is needed to install Label Studio: `python3 -m pip install uv`")


def credentials(home: Path) -> Credentials:
    """The data dir's user, generated on first use and kept in ``credentials.json``."""
    path = home / "credentials.json"
    if path.is_file():
        return Credentials(**jsonl.loads(path.read_text(encoding="utf-8")))
    # Label Studio applies the token only when it creates the user, and keeps it at most 40 chars.
    creds = Credentials(DEFAULT_USERNAME, secrets.token_urlsafe(12), secrets.token_hex(20))
    atomic_write_json(path, asdict(creds), private=True)
    return creds


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_problem(port: int) -> str | None:
    """Why Label Studio cannot have loopback ``port`` (something listens there), else None."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As a server binds: a port left in TIME_WAIT by a stopped server is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            return f"127.0.0.1:{port} is in use ({exc.strerror or exc})"
    return None


def health(url: str, timeout: float = 2.0) -> bool:
    """True when ``url/health`` answers ``{"status": "UP"}``."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as response:
            return bool(jsonl.loads(response.read()).get("status") == "UP")
    except (OSError, ValueError):
        return False


def read_state(home: Path) -> ServerState | None:
    path = home / "server.json"
    if not path.is_file():
        return None
    return ServerState(**jsonl.loads(path.read_text(encoding="utf-8")))


def status(home: Path) -> ServerState | None:
    """The recorded server if its process lives and ``/health`` answers, else None."""
    state = read_state(home)
    if state is None or not _alive(state.pid) or not health(state.url):
        return None
    return state


def start(
    home: Path,
    *,
    port: int | None = None,
    executable: Path | None = None,
    timeout: float = START_TIMEOUT,
    database: str | None = None,
    settings: Settings,
) -> ServerState:
    """Start the embedded server (or return the running one) and wait until it serves the API.

    ``database`` is a PostgreSQL URL (see :class:`Database`); without it Label Studio keeps
    SQLite in the data dir. ``settings``, what the door read, gives the password of a URL
    without one, the executable (``GOLDLOOP_LABEL_STUDIO``) and the variables the server's
    process inherits.
    """
    db = Database.from_url(database, settings.pgpassword) if database else None
    if db is not None:
        db.check_reachable()
    running = status(home)
    if running is not None:
        wanted = db.url if db else None
        if running.database != wanted:
            raise StudioServerError(
                f"Label Studio already runs at {running.url} on "
                f"{running.database or 'SQLite'}; stop it before starting it on {wanted or 'SQLite'}"
            )
        return running
    if port is not None:
        # Label Studio would move to another port and be waited for in vain: refuse at once.
        busy = port_problem(port)
        if busy:
            raise SettingError("port", f"{busy}; choose another port, or none for a free one")
    root = home
    executable = executable or label_studio_executable(root, chosen=settings.studio_executable)
    creds = credentials(root)
    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    data_dir.chmod(0o700)  # Label Studio's SQLite database holds the API token
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = root / "label-studio.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [str(executable), "start", "--no-browser", "--data-dir", str(data_dir),
             "--internal-host", "127.0.0.1", "--port", str(port)],
            env=_environment(root, data_dir, creds, settings.environ, db),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    state = ServerState(
        url, port, process.pid, str(data_dir), creds.username, creds.token, db.url if db else None
    )
    # Recorded before the wait: a server left behind by an interrupted start is one `stop` knows.
    atomic_write_json(root / "server.json", asdict(state), private=True)  # it holds the token
    try:
        _wait_until_up(process, url, log_path, timeout)
        _check_token(url, creds.token)
    except BaseException:
        with deferred_interrupt("stopping the Label Studio this start launched"):
            _terminate(process.pid)
            (root / "server.json").unlink(missing_ok=True)
        raise
    return state


def stop(home: Path, *, grace: float = 15.0) -> bool:
    """Stop the recorded server by its pid (its process group); False when none was running."""
    path = home / "server.json"
    state = read_state(home)
    if state is None:
        return False
    was_alive = _alive(state.pid)
    if was_alive:
        _terminate(state.pid, grace)
    path.unlink(missing_ok=True)
    return was_alive


def kill(home: Path) -> None:
    """Kill the recorded server at once (SIGKILL), leaving its state file: a crash, for tests."""
    state = read_state(home)
    if state is not None and _alive(state.pid):
        os.killpg(state.pid, signal.SIGKILL)
        _reap(state.pid, 10.0)


# What Label Studio would send off this machine, switched off: version checks, analytics, and
# error reports. The two DSNs are empty, not unset: Label Studio defaults both to HumanSignal's
# Sentry project and tests them for truthiness, so empty also drops the browser's script tag from
# its CDN. docker/compose.yaml sets the same (tests/stack/test_compose.py).
QUIET = {
    "LATEST_VERSION_CHECK": "false",
    "COLLECT_ANALYTICS": "false",
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
}


def _environment(
    root: Path,
    data_dir: Path,
    creds: Credentials,
    ours: Mapping[str, str],
    database: Database | None = None,
) -> dict[str, str]:
    # A child's environment: these pass through from ours (as the door read it) as they are,
    # not as goldloop settings.
    env = {name: ours[name] for name in _PASSTHROUGH if name in ours}
    env.update(
        HOME=str(root),
        LABEL_STUDIO_BASE_DATA_DIR=str(data_dir),
        LABEL_STUDIO_USERNAME=creds.username,
        LABEL_STUDIO_PASSWORD=creds.password,
        LABEL_STUDIO_USER_TOKEN=creds.token,
        # Stored when the organisation is created, so it must be on at the first start.
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        # Both are needed for an ML backend on 127.0.0.1: its webhook is validated too.
        ML_BLOCK_LOCAL_IP="false",
        SSRF_PROTECTION_ENABLED="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(QUIET)
    if database is not None:
        env.update(database.environment())
    return env


def _wait_until_up(
    process: subprocess.Popen[bytes], url: str, log_path: Path, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StudioServiceError(
                f"Label Studio exited with code {process.returncode} before answering; "
                f"its log: {log_path}"
            )
        if health(url):
            return
        time.sleep(0.5)
    raise StudioServiceError(
        f"Label Studio did not answer {url}/health within {timeout:.0f} s (it moves to another port "
        f"when its port is busy); its log: {log_path}"
    )


def _check_token(url: str, token: str) -> None:
    request = urllib.request.Request(
        f"{url}/api/current-user/whoami", headers={"Authorization": f"Token {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        raise StudioServerError(
            f"Label Studio at {url} refused the pre-created token (HTTP {exc.code}); its data dir was "
            "probably created without it: remove the data dir, or use your own server and token "
            "(LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY)"
        ) from exc


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")
    except OSError:
        return False


def _terminate(pid: int, grace: float = 15.0) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _reap(pid, grace):
        os.killpg(pid, signal.SIGKILL)
        _reap(pid, 5.0)


def _reap(pid: int, within: float) -> bool:
    """Wait until ``pid`` is gone (reaping it when it is our child); True when it went."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return True
        except ChildProcessError:
            if not _alive(pid):
                return True
        time.sleep(0.1)
    return not _alive(pid)
