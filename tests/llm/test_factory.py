"""The one rule that picks a pre-annotator, each branch, and the doors that word its refusals."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from goldloop.backend.config import BackendSettings
from goldloop.errors import GoldloopError
from goldloop.kb import KB
from goldloop.llm import (
    DEFAULT_MODELS,
    AmbiguousProvider,
    AnnotatorSpec,
    InvalidBaseUrl,
    LLMRequest,
    MissingKey,
    ModelRequired,
    NoProvider,
    UnknownProvider,
    choose_annotator,
    make_annotator,
    make_llm,
)
from goldloop.settings import Settings
from goldloop.text.lexical import LexicalAnnotator
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer

LOCAL = "http://127.0.0.1:8000/v1"


def test_an_explicit_provider_wins_over_the_keys_set() -> None:
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    assert choose_annotator("Anthropic", env=env) == AnnotatorSpec("anthropic", "claude-sonnet-5")
    assert choose_annotator("openai", "gpt-x", "low", env=env) == AnnotatorSpec(
        "openai", "gpt-x", "low"
    )
    assert choose_annotator("lexical", env=env) == AnnotatorSpec("lexical")


def test_an_explicit_provider_with_a_base_url_needs_no_key_and_keeps_its_default_model() -> None:
    assert choose_annotator("gemini", base_url=LOCAL, env={}) == AnnotatorSpec(
        "gemini", "gemini-2.5-flash", None, LOCAL
    )


def test_an_explicit_provider_without_its_key_is_refused_unless_no_key_is_needed() -> None:
    with pytest.raises(MissingKey, match="openai needs OPENAI_API_KEY") as caught:
        choose_annotator("openai", env={"GEMINI_API_KEY": "k"})
    assert caught.value.setting == "provider"
    assert choose_annotator("openai", env={}, key_required=False).model == "gpt-5-mini"


def test_a_base_url_alone_is_an_openai_compatible_server_and_needs_a_model() -> None:
    env = {"ANTHROPIC_API_KEY": "k"}  # a key elsewhere does not change what the URL means
    assert choose_annotator(model="qwen3", base_url=LOCAL, env=env) == AnnotatorSpec(
        "openai", "qwen3", None, LOCAL
    )
    with pytest.raises(ModelRequired, match="OpenAI-compatible server") as caught:
        choose_annotator(base_url=LOCAL, env=env)
    assert caught.value.setting == "model"


@pytest.mark.parametrize(
    ("variable", "provider", "model"),
    [
        ("OPENAI_API_KEY", "openai", "gpt-5-mini"),
        ("ANTHROPIC_API_KEY", "anthropic", "claude-sonnet-5"),
        ("GEMINI_API_KEY", "gemini", "gemini-2.5-flash"),
        ("GOOGLE_API_KEY", "gemini", "gemini-2.5-flash"),
    ],
)
def test_the_provider_whose_key_is_set_with_its_default_model(
    variable: str, provider: str, model: str
) -> None:
    assert choose_annotator(env={variable: "k"}) == AnnotatorSpec(provider, model)
    assert choose_annotator(model="mine", env={variable: "k"}).model == "mine"


def test_both_gemini_variables_are_one_provider() -> None:
    env = {"GEMINI_API_KEY": "k", "GOOGLE_API_KEY": "k"}
    assert choose_annotator(env=env).provider == "gemini"


def test_keys_of_several_providers_and_none_named_is_refused() -> None:
    with pytest.raises(AmbiguousProvider, match=r"several providers are set \(anthropic, openai\)"):
        choose_annotator(env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})


def test_no_key_means_lexical_unless_an_llm_is_required_or_a_model_named() -> None:
    assert choose_annotator(env={}) == AnnotatorSpec("lexical")
    with pytest.raises(NoProvider, match="no provider is named and no key is set"):
        choose_annotator(env={}, llm_required=True)
    with pytest.raises(NoProvider):
        choose_annotator(model="gpt-x", env={})
    with pytest.raises(NoProvider, match="needs an LLM provider"):
        choose_annotator("lexical", env={}, llm_required=True)


def test_a_base_url_that_is_not_a_url_is_refused_as_the_base_url_setting() -> None:
    with pytest.raises(InvalidBaseUrl, match="http") as caught:
        choose_annotator("openai", base_url="localhost:8000", env={})
    assert caught.value.setting == "base_url"
    with pytest.raises(GoldloopError, match="GOLDLOOP_BASE_URL='ftp://x': "):
        BackendSettings.from_env({"GOLDLOOP_PROVIDER": "openai", "GOLDLOOP_BASE_URL": "ftp://x"})


def test_an_unknown_provider_is_refused() -> None:
    with pytest.raises(UnknownProvider, match="'mistral' is not a provider"):
        choose_annotator("mistral", env={})


def test_make_annotator_builds_what_the_spec_names(
    llm_server: FakeLLMServer, kb: KB, tmp_path: Path
) -> None:
    assert isinstance(
        make_annotator(AnnotatorSpec("lexical"), kb, settings=Settings.from_env()), LexicalAnnotator
    )
    spec = AnnotatorSpec("anthropic", "claude-x", "low", llm_server.base_url("anthropic"))
    provider = make_annotator(spec, kb, cache=tmp_path / "c.sqlite", settings=Settings.from_env())
    assert (provider.name, provider.model, provider.effort) == ("anthropic", "claude-x", "low")
    with pytest.raises(NoProvider):
        make_llm(AnnotatorSpec("lexical"), settings=Settings.from_env())


def test_the_backend_and_the_cli_word_the_same_refusal_with_their_own_names(
    monkeypatch: pytest.MonkeyPatch, cli: Cli, tmp_path: Path
) -> None:
    from tests.cli.test_annotate import make_documents_jsonl

    env = {"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}
    with pytest.raises(GoldloopError, match="GOLDLOOP_PROVIDER='': keys of several providers"):
        BackendSettings.from_env(env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    docs = make_documents_jsonl(tmp_path / "docs.jsonl")
    result = cli("annotate", "--documents", docs, "-o", tmp_path / "o.json")
    assert result.returncode == 2
    assert "--provider: keys of several providers are set" in result.err
    assert not (tmp_path / "o.json").exists()


def test_the_demo_picks_by_the_same_rule_and_the_backends_variables(
    monkeypatch: pytest.MonkeyPatch, kb: KB
) -> None:
    from goldloop.studio.demo import pick_annotator

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for setting in ("PROVIDER", "MODEL", "EFFORT", "BASE_URL"):
        monkeypatch.delenv(f"GOLDLOOP_{setting}", raising=False)
    assert isinstance(pick_annotator(kb, settings=Settings.from_env()), LexicalAnnotator)
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert pick_annotator(kb, settings=Settings.from_env()).tag == "gemini-2.5-flash"
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(GoldloopError, match="GOLDLOOP_PROVIDER='': keys of several providers"):
        pick_annotator(kb, settings=Settings.from_env())
    monkeypatch.setenv("GOLDLOOP_PROVIDER", "openai")  # named as for the backend
    assert pick_annotator(kb, settings=Settings.from_env()).tag == "gpt-5-mini"


def test_the_documented_names_stay_importable() -> None:
    import goldloop.backend
    import goldloop.llm

    assert goldloop.backend.AnnotatorSpec is goldloop.llm.AnnotatorSpec is AnnotatorSpec


@pytest.mark.parametrize(
    ("provider", "base_url", "api", "wire"),
    [
        ("openai", None, None, "responses"),  # OpenAI's own endpoint
        ("openai", None, "chat", "chat"),
        ("openai", LOCAL, None, "chat"),  # an OpenAI-compatible server
        ("openai", LOCAL, "responses", "responses"),
        ("anthropic", None, None, None),
        ("gemini", LOCAL, None, None),
    ],
)
def test_a_spec_keys_requests_as_its_provider_does(
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    base_url: str | None,
    api: str | None,
    wire: str | None,
) -> None:
    # The dry run keys requests from the spec alone: it must find what the provider cached.
    from goldloop.llm import LLMRequest

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "k")
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    spec = choose_annotator(
        provider, "m", "low", base_url, api=api, env=Settings.from_env().environ
    )
    built = make_llm(spec, cache=None, settings=Settings.from_env())
    request = LLMRequest("system", "Abstract:\nuser", {"type": "object"}, 10)
    assert spec.wire_api == built.api == wire
    assert spec.key(request) == built.key(request) and spec.tag == built.tag


def test_an_api_the_provider_does_not_speak_is_refused_naming_the_setting() -> None:
    from goldloop.llm import AnnotatorChoiceError

    with pytest.raises(AnnotatorChoiceError, match="there is no API 'responses'") as raised:
        choose_annotator(
            "anthropic", "m", api="responses", key_required=False, env=Settings.from_env().environ
        )
    assert raised.value.setting == "api"


@pytest.mark.parametrize("name", sorted(DEFAULT_MODELS))
def test_no_default_model_is_one_its_sdk_calls_deprecated(
    llm_server: FakeLLMServer, name: str
) -> None:
    """The SDKs warn (DeprecationWarning) on every request to a model near its end of life."""
    request = LLMRequest(system="s", user="u", schema={"type": "object"}, max_tokens=10)
    provider = llm_server.provider(name, DEFAULT_MODELS[name], cache=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        provider.complete(request)
    assert llm_server.requests[-1].model == DEFAULT_MODELS[name]
