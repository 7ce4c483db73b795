"""The defaults every door shares, and the environment variables that move them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goldloop import settings


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
