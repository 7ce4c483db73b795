"""The backend's configuration from the environment: choices, defaults, clear refusals."""

from __future__ import annotations

import pytest

from goldloop.backend.config import LEXICAL, AnnotatorSpec, BackendSettings
from goldloop.errors import GoldloopError
from tests.conftest import Cli


def test_no_provider_key_means_the_lexical_pre_annotator() -> None:
    settings = BackendSettings.from_env({})
    assert settings.annotator == AnnotatorSpec(LEXICAL)
    assert settings.other is None and settings.redis_url is None and settings.basic_auth is None


def test_a_provider_key_alone_picks_that_provider_with_its_default_model() -> None:
    settings = BackendSettings.from_env({"ANTHROPIC_API_KEY": "k"})
    assert settings.annotator == AnnotatorSpec("anthropic", "claude-sonnet-5")
    settings = BackendSettings.from_env({"ANTHROPIC_API_KEY": "k", "GOLDLOOP_MODEL": "claude-x"})
    assert settings.annotator == AnnotatorSpec("anthropic", "claude-x")


def test_full_configuration() -> None:
    env = {
        "GOLDLOOP_PROVIDER": "OpenAI", "GOLDLOOP_MODEL": "gpt-x", "GOLDLOOP_EFFORT": "low",
        "OPENAI_API_KEY": "k", "GOLDLOOP_OTHER_PROVIDER": "gemini", "GOLDLOOP_OTHER_MODEL": "g",
        "GOOGLE_API_KEY": "k", "GOLDLOOP_KB": "/kb.csv", "GOLDLOOP_CACHE": "/c.sqlite",
        "REDIS_URL": "redis://r:6379/0", "BASIC_AUTH_USER": "u", "BASIC_AUTH_PASS": "p",
        "GOLDLOOP_CONCURRENCY": "4",
    }  # fmt: skip
    settings = BackendSettings.from_env(env)
    assert settings.annotator == AnnotatorSpec("openai", "gpt-x", "low")
    assert settings.other == AnnotatorSpec("gemini", "g")
    assert str(settings.kb_path) == "/kb.csv" and str(settings.cache_path) == "/c.sqlite"
    assert settings.redis_url == "redis://r:6379/0"
    assert settings.basic_auth == ("u", "p") and settings.concurrency == 4
    assert "redis://" not in repr(settings) and "'p'" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"GOLDLOOP_PROVIDER": "mistral"},
            "GOLDLOOP_PROVIDER='mistral': 'mistral' is not a provider",
        ),
        ({"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}, "GOLDLOOP_PROVIDER='': keys of several"),
        ({"GOLDLOOP_BASE_URL": "http://127.0.0.1:8000/v1"}, "GOLDLOOP_MODEL='': a base URL"),
        ({"GOLDLOOP_PROVIDER": "openai", "GOLDLOOP_MODEL": "m"}, "needs OPENAI_API_KEY"),
        ({"BASIC_AUTH_USER": "u"}, "both BASIC_AUTH_USER and BASIC_AUTH_PASS"),
        ({"GOLDLOOP_CONCURRENCY": "0"}, "positive integer"),
        ({"GOLDLOOP_CONCURRENCY": "many"}, "positive integer"),
    ],
)
def test_bad_configuration_is_refused_with_the_variable_named(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(GoldloopError, match=message):
        BackendSettings.from_env(env)


def test_a_local_server_needs_no_key() -> None:
    env = {"GOLDLOOP_PROVIDER": "openai", "GOLDLOOP_MODEL": "m",
           "GOLDLOOP_BASE_URL": "http://127.0.0.1:8000/v1"}  # fmt: skip
    assert BackendSettings.from_env(env).annotator.base_url == "http://127.0.0.1:8000/v1"


def test_cli_refuses_bad_configuration_on_one_line(cli: Cli) -> None:
    result = cli("backend", "--port", "1", env={"GOLDLOOP_PROVIDER": "mistral"})
    assert result.returncode == 2
    assert "GOLDLOOP_PROVIDER='mistral': 'mistral' is not a provider" in result.err
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_help_names_the_options(cli: Cli) -> None:
    result = cli("backend", "--help")
    assert result.returncode == 0
    for option in ("--host", "--port", "--workers", "--insecure"):
        assert option in result.stdout


def test_the_backend_answers_within_label_studios_100_seconds() -> None:
    from goldloop.backend.predictor import BACKEND_RETRY
    from goldloop.llm import RetryPolicy

    # The last attempt starts before the deadline and may run its whole timeout.
    assert BACKEND_RETRY.give_up_after_s + BACKEND_RETRY.timeout_s < 100
    assert BACKEND_RETRY.give_up_after_s < RetryPolicy().give_up_after_s


def test_the_live_gold_settings_and_the_start_up_line_never_show_the_key() -> None:
    env = {
        "GOLDLOOP_GOLD": "camp=/data/gold.json; other = /data/other.json\nthird=g.json",
        "LABEL_STUDIO_URL": "http://ls:8080", "LABEL_STUDIO_API_KEY": "secret-key-123",
    }  # fmt: skip
    settings = BackendSettings.from_env(env)
    assert {name: str(path) for name, path in settings.gold.items()} == {
        "camp": "/data/gold.json", "other": "/data/other.json", "third": "g.json"
    }  # fmt: skip
    line = settings.studio_credentials()
    assert line == (
        "Label Studio: LABEL_STUDIO_URL set, LABEL_STUDIO_API_KEY set; live gold: camp, other, third"
    )
    assert "secret-key-123" not in repr(settings)
    bare = BackendSettings.from_env({"LABEL_STUDIO_URL": "http://ls:8080"}).studio_credentials()
    assert bare == (
        "Label Studio: LABEL_STUDIO_URL set, LABEL_STUDIO_API_KEY not set; "
        "live gold: off (GOLDLOOP_GOLD not set)"
    )


@pytest.mark.parametrize("value", ["camp", "=g.json", "camp=", "a=b.json;junk"])
def test_a_gold_setting_that_is_not_name_equals_path_is_refused(value: str) -> None:
    with pytest.raises(GoldloopError, match=r"GOLDLOOP_GOLD: .* is not NAME=path"):
        BackendSettings.from_env({"GOLDLOOP_GOLD": value})


def test_the_task_size_limit_is_a_setting() -> None:
    assert BackendSettings.from_env({}).max_task_chars == 50_000
    assert BackendSettings.from_env({"GOLDLOOP_MAX_TASK_CHARS": "1234"}).max_task_chars == 1234


def test_other_occurrence_proposals_are_on_unless_turned_off() -> None:
    assert BackendSettings.from_env({}).propose_occurrences
    assert BackendSettings.from_env({"GOLDLOOP_PROPOSE_OCCURRENCES": "yes"}).propose_occurrences
    assert not BackendSettings.from_env({"GOLDLOOP_PROPOSE_OCCURRENCES": "0"}).propose_occurrences
    with pytest.raises(GoldloopError, match=r"GOLDLOOP_PROPOSE_OCCURRENCES must be True or False"):
        BackendSettings.from_env({"GOLDLOOP_PROPOSE_OCCURRENCES": "maybe"})
