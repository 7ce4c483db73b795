"""The defaults every door shares, and the environment variables that move them."""

from __future__ import annotations

import ast
import os
import pickle
from pathlib import Path

import pytest

from goldloop import settings
from goldloop.errors import GoldloopError


def test_the_bundled_files_exist() -> None:
    equivalences = settings.BUNDLED_KB_DIR / settings.EQUIVALENCES_NAME
    for path in (settings.BUNDLED_KB, equivalences, settings.DEMO_CORPUS):
        assert path.is_file(), path


def test_available_cores_is_this_process_affinity() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert settings.available_cores() == expected >= 1


def test_the_working_directory_and_cache_follow_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".goldloop").mkdir()
    monkeypatch.chdir(tmp_path)
    assert settings.Settings.from_env({}).home == Path(".goldloop")
    assert settings.Settings.from_env({}).cache == Path(".goldloop") / "cache.sqlite"
    home = {"GOLDLOOP_HOME": str(tmp_path)}
    assert settings.Settings.from_env(home).cache == tmp_path / "cache.sqlite"
    other = {**home, "GOLDLOOP_CACHE": str(tmp_path / "other.sqlite")}
    assert settings.Settings.from_env(other).cache == tmp_path / "other.sqlite"


def test_the_home_is_found_as_git_finds_its_repository(tmp_path: Path) -> None:
    project = tmp_path / "project"
    deep = project / "work" / "sample" / "deeper"
    deep.mkdir(parents=True)
    # No home anywhere above: the working directory's own, made when first written.
    assert settings.find_home(deep) == deep / ".goldloop"
    (project / ".goldloop").mkdir()
    for where in (project, project / "work", deep):
        assert settings.find_home(where).resolve() == (project / ".goldloop").resolve()
        assert settings.Settings.from_env({}, cwd=where).home == settings.find_home(where)
    # The nearest wins, as a nested repository does; and a file of that name is not a home.
    (project / "work" / ".goldloop").mkdir()
    assert settings.find_home(deep) == (project / "work" / ".goldloop").resolve()
    (deep / ".goldloop").write_text("")
    assert settings.find_home(deep) == (project / "work" / ".goldloop").resolve()
    # $GOLDLOOP_HOME is the one documented home, wherever the command runs.
    chosen = {"GOLDLOOP_HOME": str(tmp_path / "elsewhere")}
    assert settings.Settings.from_env(chosen, cwd=deep).home == tmp_path / "elsewhere"
    # From the working directory: relative when it is its own home, as it always was.
    assert (
        settings.Settings.from_env({}, cwd=project).cache == project / ".goldloop" / "cache.sqlite"
    )


def test_from_env_reads_every_variable_into_its_field(tmp_path: Path) -> None:
    env = {
        "GOLDLOOP_HOME": str(tmp_path),
        "GOLDLOOP_SPACY_MODEL": "en_core_web_md",
        "GOLDLOOP_PARSE_CACHE_MB": "0.5",
        "GOLDLOOP_PRICES": str(tmp_path / "p.json"),
        "GOLDLOOP_LABEL_STUDIO": "/opt/ls",
        "LABEL_STUDIO_URL": "http://127.0.0.1:8080",
        "LABEL_STUDIO_API_KEY": "k",
        "REDIS_URL": "redis://:pw@127.0.0.1:6379/0",
        "BASIC_AUTH_USER": "u",
        "BASIC_AUTH_PASS": "p",
        "PGPASSWORD": "pg",
        "OPENAI_API_KEY": "sk",
    }
    read = settings.Settings.from_env(env)
    assert read.home == tmp_path
    assert read.cache == tmp_path / "cache.sqlite"
    assert read.parse_cache == tmp_path / "parse-cache.sqlite"
    assert read.parse_cache_bytes == 512 * 1024
    assert read.spacy_model_names() == ("en_core_web_md", *settings.SPACY_MODELS)
    assert read.prices == tmp_path / "p.json"
    assert read.studio_executable == "/opt/ls"
    assert (read.studio_url, read.studio_api_key) == ("http://127.0.0.1:8080", "k")
    assert read.redis_url == "redis://:pw@127.0.0.1:6379/0"
    assert read.basic_auth() == ("u", "p")
    assert read.pgpassword == "pg"
    # The provider variables, whose names the llm layer knows, ride along unparsed.
    assert read.environ["OPENAI_API_KEY"] == "sk"


def test_an_empty_environment_gives_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .goldloop here or above (a tmp folder's parents hold none)
    read = settings.Settings.from_env({})
    assert read == settings.Settings()
    assert read.parse_cache == Path(".goldloop") / "parse-cache.sqlite"
    assert read.parse_cache_bytes == settings.DEFAULT_PARSE_CACHE_MB * 1024 * 1024
    assert read.basic_auth() is None
    assert read.redis_url is None


@pytest.mark.parametrize("word", ["off", "OFF", " off "])
def test_the_parse_cache_can_be_switched_off(word: str) -> None:
    assert settings.Settings.from_env({"GOLDLOOP_PARSE_CACHE": word}).parse_cache is None


def test_the_root_option_switches_the_parse_cache_off_in_the_settings(tmp_path: Path) -> None:
    read = settings.Settings.from_env({"GOLDLOOP_PARSE_CACHE": str(tmp_path / "p.sqlite")})
    off = read.without_parse_cache()
    assert read.parse_cache == tmp_path / "p.sqlite" and off.parse_cache is None
    assert vars(off) == {**vars(read), "parse_cache": None}  # that field alone changes


@pytest.mark.parametrize("size", ["inf", "-5", "nan", "0", "big"])
def test_a_parse_cache_size_that_is_not_a_positive_size_is_refused(size: str) -> None:
    with pytest.raises(GoldloopError) as caught:
        settings.Settings.from_env({"GOLDLOOP_PARSE_CACHE_MB": size})
    assert str(caught.value) == f"GOLDLOOP_PARSE_CACHE_MB={size!r}: expected a positive size in MB"


def test_half_a_basic_auth_pair_is_refused() -> None:
    read = settings.Settings.from_env({"BASIC_AUTH_USER": "u"})
    with pytest.raises(GoldloopError, match="set both BASIC_AUTH_USER and BASIC_AUTH_PASS"):
        read.basic_auth()


def test_the_repr_masks_every_secret() -> None:
    secrets = {
        "LABEL_STUDIO_API_KEY": "ls-secret-1",
        "REDIS_URL": "redis://:redis-secret-2@h:6379",
        "BASIC_AUTH_PASS": "auth-secret-3",
        "PGPASSWORD": "pg-secret-4",
        "ANTHROPIC_API_KEY": "provider-secret-5",
    }
    shown = repr(settings.Settings.from_env({**secrets, "BASIC_AUTH_USER": "alice"}))
    for value in secrets.values():
        assert value not in shown
    assert "alice" in shown and "studio_api_key=***" in shown
    # An unset secret shows as unset, not as a mask.
    assert "pgpassword=None" in repr(settings.Settings.from_env({}))


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/3")
    assert settings.Settings.from_env().redis_url == "redis://127.0.0.1:6379/3"


def test_settings_pickle_whole_for_a_dask_worker() -> None:
    read = settings.Settings.from_env({"GOLDLOOP_SPACY_MODEL": "m", "OPENAI_API_KEY": "sk"})
    again = pickle.loads(pickle.dumps(read))
    assert again == read and again.environ["OPENAI_API_KEY"] == "sk"


# The doors, which read the environment (Settings.from_env) and pass it down; the rest of the
# library takes what it needs from its caller.
DOORS = {
    "cli/__init__.py": "the root command: one reading per command, passed down; "
    "main() hands rich's COLUMNS to the consoles as a command starts",
    "backend/app.py": "create_app() without arguments: the app a uvicorn or gunicorn worker opens",
    "backend/serve.py": "`goldloop backend`: the settings it checks before serving",
    "backend/config.py": "BackendSettings.from_env parses the variables its caller gives",
}
SRC = Path(settings.__file__).parent


def environment_readers(src: Path) -> dict[str, list[str]]:
    """Per module (relative to ``src``): its calls of ``from_env`` and reads of ``os.environ``
    or ``os.getenv`` (an assignment to ``os.environ[...]`` is not a read)."""
    found: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        written = {
            id(target.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Subscript)
        }
        reads = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                name = f"{node.value.id}.{node.attr}"
                if name in ("os.environ", "os.getenv") and id(node) not in written:
                    reads.append(f"line {node.lineno}: {name}")
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "from_env":
                reads.append(f"line {node.lineno}: from_env")
        if reads:
            found[path.relative_to(src).as_posix()] = reads
    return found


def test_only_the_doors_read_the_environment() -> None:
    readers = environment_readers(SRC)
    assert "settings.py" in readers  # the one reader (from_env's default), found by the check
    readers.pop("settings.py")
    assert set(readers) <= set(DOORS), {m: r for m, r in readers.items() if m not in DOORS}
    assert set(DOORS) <= set(readers), "a door listed here no longer reads: drop it from DOORS"


def test_the_check_finds_a_library_module_reading_the_environment(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\nx = os.environ.get('X')\n")
    (tmp_path / "b.py").write_text("from s import Settings\ny = Settings.from_env().home\n")
    (tmp_path / "c.py").write_text("import os\nos.environ['X'] = '1'\n")
    assert environment_readers(tmp_path) == {
        "a.py": ["line 2: os.environ"],
        "b.py": ["line 2: from_env"],
    }


def module_level_settings(src: Path) -> dict[str, list[str]]:
    """Per module (relative to ``src``): the module-level names bound to a ``Settings`` (by
    annotation or by a call of ``Settings``/``Settings.from_env``): settings a process would
    keep for everyone instead of passing them down."""
    found: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        names = []
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.AnnAssign) and "Settings" in ast.unparse(node.annotation):
                names.append(ast.unparse(node.target))
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                called = node.value.func if isinstance(node.value, ast.Call) else None
                if called is not None and ast.unparse(called) in ("Settings", "Settings.from_env"):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names += [ast.unparse(t) for t in targets]
        if names:
            found[path.relative_to(src).as_posix()] = names
    return found


def test_no_module_keeps_settings_for_the_process() -> None:
    assert module_level_settings(SRC) == {}


def test_the_check_finds_settings_kept_at_module_level(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from s import Settings\n_active = Settings()\n")
    (tmp_path / "b.py").write_text("from s import Settings\nread: Settings | None = None\n")
    (tmp_path / "c.py").write_text("from s import Settings\ndef f():\n    x = Settings()\n")
    assert module_level_settings(tmp_path) == {"a.py": ["_active"], "b.py": ["read"]}
