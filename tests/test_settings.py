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


def test_the_installed_settings_choose_the_spacy_model() -> None:
    before = settings.active()
    try:
        settings.use(settings.Settings.from_env({}))
        assert settings.spacy_model_names() == settings.SPACY_MODELS
        settings.use(settings.Settings.from_env({"GOLDLOOP_SPACY_MODEL": "en_core_web_md"}))
        assert settings.spacy_model_names() == ("en_core_web_md", *settings.SPACY_MODELS)
    finally:
        settings.use(before)


def test_available_cores_is_this_process_affinity() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert settings.available_cores() == expected >= 1


def test_the_working_directory_and_cache_follow_the_environment(tmp_path: Path) -> None:
    assert settings.Settings.from_env({}).home == Path(".goldloop")
    assert settings.Settings.from_env({}).cache == Path(".goldloop") / "cache.sqlite"
    home = {"GOLDLOOP_HOME": str(tmp_path)}
    assert settings.Settings.from_env(home).cache == tmp_path / "cache.sqlite"
    other = {**home, "GOLDLOOP_CACHE": str(tmp_path / "other.sqlite")}
    assert settings.Settings.from_env(other).cache == tmp_path / "other.sqlite"


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


def test_an_empty_environment_gives_the_defaults() -> None:
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
# library takes what it needs from its caller, or from the settings a door installed (use).
DOORS = {
    "cli/__init__.py": "the root command: one reading per command, passed down and installed; "
    "main() hands rich's COLUMNS to the consoles as a command starts",
    "backend/app.py": "create_app() without arguments: the app a uvicorn or gunicorn worker opens",
    "backend/serve.py": "`goldloop backend`: the settings it checks before serving, installed",
    "backend/settings.py": "BackendSettings.from_env parses the variables its caller gives",
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


# What still goes through the settings a door installed (settings.use) rather than an argument:
# the spaCy pipeline and the parse cache, which every parse reads deep inside the library (the
# baselines in goldloop.scoring parse with no caller in between to pass them). Who installs
# them, and who reads them; nothing else may.
INSTALLED = {
    "cli/__init__.py": "use: the root command installs the settings it read",
    "backend/app.py": "use: the app a worker opens installs what it read",
    "backend/serve.py": "use: `goldloop backend` installs what it checked",
    "sample/distributed.py": "active, use: a Dask worker installs the client's settings",
    "text/parse_cache.py": "active: default_cache, the parse cache of parse_many(cache=True)",
    "text/nlp.py": "spacy_model_names: the pipelines load_nlp() tries",
    "kb/verb_forms.py": "spacy_model_names: the lemmatizer's pipeline",
    "sample/pool.py": "spacy_model_names: the pipeline the pool's fingerprint names",
}
_INSTALLED_NAMES = ("use", "active", "spacy_model_names")


def installed_settings_users(src: Path) -> dict[str, list[str]]:
    """Per module (relative to ``src``): the names of ``goldloop.settings`` it imports or reads
    that install or read the process's settings (``use``, ``active``, ``spacy_model_names``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "goldloop.settings":
                names.update(a.name for a in node.names if a.name in _INSTALLED_NAMES)
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "settings"
                and node.attr in _INSTALLED_NAMES
            ):
                names.add(node.attr)
        if names:
            found[path.relative_to(src).as_posix()] = sorted(names)
    return found


def test_only_the_listed_modules_install_or_read_the_process_settings() -> None:
    users = installed_settings_users(SRC)
    assert set(users) <= set(INSTALLED), {m: n for m, n in users.items() if m not in INSTALLED}
    assert set(INSTALLED) <= set(users), "a module listed here no longer uses them: drop it"


def test_the_check_finds_a_module_reading_the_installed_settings(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from goldloop.settings import Settings, active\n")
    (tmp_path / "b.py").write_text("from goldloop import settings\nx = settings.active().home\n")
    (tmp_path / "c.py").write_text("from goldloop.settings import BUNDLED_KB\n")
    assert installed_settings_users(tmp_path) == {"a.py": ["active"], "b.py": ["active"]}
