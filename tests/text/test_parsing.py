"""How a command parses: built from the settings a door read, handed on whole."""

from __future__ import annotations

import pickle
from pathlib import Path

from goldloop.settings import DEFAULT_PARSE_CACHE_MB, SPACY_MODELS, Settings
from goldloop.text.parsing import Parsing


def test_the_default_is_the_bundled_pipelines_without_a_cache() -> None:
    assert Parsing() == Parsing(SPACY_MODELS, None, DEFAULT_PARSE_CACHE_MB * 1024 * 1024)


def test_the_settings_choose_the_pipelines_and_the_cache(tmp_path: Path) -> None:
    read = Settings.from_env(
        {
            "GOLDLOOP_SPACY_MODEL": "en_core_web_md",
            "GOLDLOOP_PARSE_CACHE": str(tmp_path / "p.sqlite"),
            "GOLDLOOP_PARSE_CACHE_MB": "2",
        }
    )
    parsing = Parsing.from_settings(read)
    assert parsing.models == ("en_core_web_md", *SPACY_MODELS)
    assert (parsing.cache_path, parsing.cache_bytes) == (tmp_path / "p.sqlite", 2 * 1024 * 1024)
    assert Parsing.from_settings(Settings.from_env({})).cache_path == Path(
        ".goldloop/parse-cache.sqlite"
    )


def test_switching_the_cache_off_keeps_the_pipelines(tmp_path: Path) -> None:
    read = Settings.from_env(
        {"GOLDLOOP_SPACY_MODEL": "m", "GOLDLOOP_PARSE_CACHE": str(tmp_path / "p.sqlite")}
    )
    off = Parsing.from_settings(read.without_parse_cache())
    assert off == Parsing.from_settings(read).without_cache()
    assert off.cache_path is None and off.models == ("m", *SPACY_MODELS)
    assert (
        Parsing.from_settings(Settings.from_env({"GOLDLOOP_PARSE_CACHE": "off"})).cache_path is None
    )


def test_it_pickles_whole_for_a_worker_process(tmp_path: Path) -> None:
    parsing = Parsing(("m",), tmp_path / "p.sqlite", 1234)
    assert pickle.loads(pickle.dumps(parsing)) == parsing
