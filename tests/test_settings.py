"""The defaults every door shares, and the environment variables that move them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goldloop import settings
from goldloop.errors import GoldloopError


def test_the_bundled_files_exist() -> None:
    equivalences = settings.BUNDLED_KB_DIR / settings.EQUIVALENCES_NAME
    for path in (settings.BUNDLED_KB, equivalences, settings.DEMO_CORPUS):
        assert path.is_file(), path


def test_a_chosen_spacy_model_is_tried_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOLDLOOP_SPACY_MODEL", raising=False)
    assert settings.spacy_model_names() == settings.SPACY_MODELS
    monkeypatch.setenv("GOLDLOOP_SPACY_MODEL", "en_core_web_md")
    assert settings.spacy_model_names() == ("en_core_web_md", *settings.SPACY_MODELS)


def test_available_cores_is_this_process_affinity() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert settings.available_cores() == expected >= 1


def test_the_working_directory_and_cache_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GOLDLOOP_HOME", raising=False)
    monkeypatch.delenv("GOLDLOOP_CACHE", raising=False)
    assert settings.workdir() == Path(".goldloop")
    assert settings.default_cache_path() == Path(".goldloop") / "cache.sqlite"
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path))
    assert settings.default_cache_path() == tmp_path / "cache.sqlite"
    monkeypatch.setenv("GOLDLOOP_CACHE", str(tmp_path / "other.sqlite"))
    assert settings.default_cache_path() == tmp_path / "other.sqlite"


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
