"""Choosing the pre-annotator: the one rule every door (CLI, demo, backend, baselines, judge) uses.

The rule, in order:

1. an explicit provider wins (``lexical`` included), with the model given or its default;
2. a base URL alone means an OpenAI-compatible server, which needs a model;
3. otherwise the provider whose key is set, with its default model; keys of several providers
   and none named is refused (a guess spends someone's money);
4. no key: the offline ``lexical`` pre-annotator, unless an LLM is required (judge, llm baseline).

:func:`choose_annotator` applies the rule to what a door read (options or variables) and gives an
:class:`AnnotatorSpec`; :func:`make_annotator` / :func:`make_llm` build it. The typed errors are
:class:`~goldloop.errors.SettingError` s naming the setting (``provider`` or ``model``), so each
door names its own option or variable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from goldloop.errors import GoldloopError, SettingError
from goldloop.llm.base import (
    CREDENTIALS,
    NO_ENV,
    LLMError,
    LLMRequest,
    Provider,
    RetryPolicy,
    annotator_tag,
    endpoint_identity,
    env_base_url,
    env_credential,
    normalise_endpoint,
    request_key,
    resolve_api,
)
from goldloop.llm.cache import ResponseCache, SQLiteCache
from goldloop.settings import Settings

if TYPE_CHECKING:
    from goldloop.kb import KB
    from goldloop.text.lexical import LexicalAnnotator

LEXICAL: Final = "lexical"
# name -> (module, class); modules import their SDK only when that provider is used.
PROVIDERS: Final = {
    "openai": ("goldloop.llm.openai", "OpenAIProvider"),
    "anthropic": ("goldloop.llm.anthropic", "AnthropicProvider"),
    "gemini": ("goldloop.llm.gemini", "GeminiProvider"),
}
# The model used when none is named; any model the provider serves can be named.
DEFAULT_MODELS: Final = {
    "openai": "gpt-5-mini",
    "anthropic": "claude-sonnet-5",
    "gemini": "gemini-2.5-flash",
}


class AnnotatorChoiceError(SettingError):
    """The settings do not name one annotator; ``setting`` is ``provider``, ``model``,
    ``base_url`` or ``api``."""


class UnknownProvider(AnnotatorChoiceError):
    """A provider name that is neither an LLM provider nor ``lexical``."""


class AmbiguousProvider(AnnotatorChoiceError):
    """Keys of several providers are set and none is named."""


class ModelRequired(AnnotatorChoiceError):
    """An OpenAI-compatible server (a base URL without a provider) has no default model."""


class MissingKey(AnnotatorChoiceError):
    """The provider's key is not in the environment (and no base URL points elsewhere)."""


class InvalidBaseUrl(AnnotatorChoiceError):
    """A base URL that is not an http(s) URL with a host."""


class NoProvider(AnnotatorChoiceError):
    """An LLM is required, or a model was named, and no provider is named or has a key."""


@dataclass(frozen=True)
class AnnotatorSpec:
    """One annotator: an LLM provider and model (with effort), or the offline ``lexical`` one."""

    provider: str
    model: str | None = None
    effort: str | None = None
    base_url: str | None = None
    api: str | None = None
    # The provider's base URL variable in the environment the spec was chosen from: the SDK
    # speaks to it when no base URL is given, so it is the endpoint then.
    env_base_url: str | None = field(default=None, compare=False, repr=False)

    @property
    def endpoint(self) -> str | None:
        """The normalised base URL of a server other than the provider's own."""
        return endpoint_identity(self.provider, self.base_url or self.env_base_url, NO_ENV)

    @property
    def wire_api(self) -> str | None:
        """The API the provider is spoken to with (see :func:`goldloop.llm.base.resolve_api`)."""
        return resolve_api(self.provider, self.api, self.endpoint)

    @property
    def tag(self) -> str:
        """The annotator tag its answers carry (see :func:`goldloop.llm.base.annotator_tag`)."""
        return annotator_tag(self.model or self.provider, self.effort, self.endpoint)

    def key(self, request: LLMRequest) -> str:
        """The response cache key of ``request``, computed without building a client."""
        assert self.model is not None, "an LLM spec has a model"
        return request_key(
            self.provider, self.model, self.effort, self.endpoint, self.wire_api, request
        )

    @property
    def is_llm(self) -> bool:
        return self.provider != LEXICAL


def credentials_set(env: Mapping[str, str]) -> list[str]:
    """Providers whose credential is in the environment (never the credential itself)."""
    return [name for name, names in CREDENTIALS.items() if env_credential(*names, env=env)]


def choose_annotator(
    provider: str | None = None,
    model: str | None = None,
    effort: str | None = None,
    base_url: str | None = None,
    *,
    env: Mapping[str, str],
    llm_required: bool = False,
    key_required: bool = True,
    api: str | None = None,
) -> AnnotatorSpec:
    """The annotator the settings name, by the rule in this module's docstring.

    ``key_required=False`` skips the key check of a named provider (a dry run calls nothing);
    ``api`` names a wire API (its setting is ``api``).
    """
    name = (provider or "").strip().lower() or None
    model, effort, base_url = model or None, effort or None, base_url or None
    if base_url is not None:
        try:
            normalise_endpoint(base_url)
        except LLMError as exc:
            raise InvalidBaseUrl("base_url", str(exc)) from exc
    if name is None:
        name = _implied_provider(base_url, model, env, llm_required)
    if name == LEXICAL:
        if llm_required:
            raise NoProvider("provider", "this needs an LLM provider, not lexical")
        return AnnotatorSpec(LEXICAL)
    if name not in PROVIDERS:
        known = ", ".join([*PROVIDERS, *([] if llm_required else [LEXICAL])])
        raise UnknownProvider("provider", f"{name!r} is not a provider (known: {known})")
    if key_required and base_url is None and name not in credentials_set(env):
        variables = " or ".join(CREDENTIALS[name])
        raise MissingKey("provider", f"{name} needs {variables} in the environment")
    spec = AnnotatorSpec(
        name, model or DEFAULT_MODELS[name], effort, base_url, api or None, env_base_url(name, env)
    )
    try:
        spec.wire_api  # noqa: B018 (an API the provider does not speak is refused here)
    except LLMError as exc:
        raise AnnotatorChoiceError("api", str(exc)) from exc
    return spec


def annotator_from_env(env: Mapping[str, str], prefix: str = "GOLDLOOP_") -> AnnotatorSpec:
    """:func:`choose_annotator` on the variables ``<prefix>PROVIDER``, ``MODEL``, ``EFFORT`` and
    ``BASE_URL`` (the doors configured by the environment: the ML backend, the demo); a refusal
    names the variable."""
    try:
        return choose_annotator(
            env.get(f"{prefix}PROVIDER"),
            env.get(f"{prefix}MODEL"),
            env.get(f"{prefix}EFFORT"),
            env.get(f"{prefix}BASE_URL"),
            env=env,
        )
    except AnnotatorChoiceError as exc:
        variable = f"{prefix}{exc.setting.upper()}"
        raise GoldloopError(f"{variable}={env.get(variable, '')!r}: {exc.message}") from exc


def _implied_provider(
    base_url: str | None, model: str | None, env: Mapping[str, str], llm_required: bool
) -> str:
    if base_url is not None:
        if model is None:
            raise ModelRequired(
                "model",
                "a base URL without a provider means an OpenAI-compatible server: name its model",
            )
        return "openai"
    keyed = credentials_set(env)
    if len(keyed) > 1:
        raise AmbiguousProvider(
            "provider", f"keys of several providers are set ({', '.join(keyed)}): name one"
        )
    if keyed:
        return keyed[0]
    if llm_required or model is not None:
        variables = ", ".join(name for names in CREDENTIALS.values() for name in names)
        raise NoProvider("provider", f"no provider is named and no key is set ({variables})")
    return LEXICAL


class _DefaultCache:
    """Sentinel: the SQLite cache at the door's ``Settings.cache``."""


DEFAULT_CACHE: Final = _DefaultCache()


def make_provider(
    name: str,
    model: str,
    *,
    effort: str | None = None,
    base_url: str | None = None,
    cache: ResponseCache | str | Path | _DefaultCache | None = DEFAULT_CACHE,
    retry: RetryPolicy | None = None,
    api: str | None = None,
    settings: Settings,
) -> Provider:
    """A provider by name; ``cache`` is a cache object, a SQLite path, ``None`` (off) or
    :data:`DEFAULT_CACHE` (``settings.cache``); ``api`` a wire API other than the default
    (OpenAI: ``chat`` or ``responses``); ``settings``, what the door read: the key and base URL
    variables come from its ``environ``."""
    if name not in PROVIDERS:
        raise LLMError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")
    module_name, class_name = PROVIDERS[name]
    try:
        provider_class: Any = getattr(import_module(module_name), class_name)
    except ImportError as exc:
        raise LLMError(f"{name}: its SDK is not installed; install goldloop[llm] ({exc})") from exc
    if isinstance(cache, _DefaultCache):
        cache = settings.cache
    if isinstance(cache, str | Path):
        cache = SQLiteCache(cache)
    provider: Provider = provider_class(
        model,
        effort=effort,
        base_url=base_url,
        cache=cache,
        retry=retry,
        api=api,
        env=settings.environ,
    )
    return provider


def make_llm(
    spec: AnnotatorSpec,
    *,
    cache: ResponseCache | str | Path | _DefaultCache | None = DEFAULT_CACHE,
    retry: RetryPolicy | None = None,
    settings: Settings,
) -> Provider:
    """The LLM provider a spec names (``lexical`` is refused: the caller needs an LLM), with the
    environment and default cache of the door's ``settings``."""
    if not spec.is_llm or spec.model is None:
        raise NoProvider("provider", "this needs an LLM provider, not lexical")
    return make_provider(
        spec.provider,
        spec.model,
        effort=spec.effort,
        base_url=spec.base_url,
        cache=cache,
        retry=retry,
        api=spec.api,
        settings=settings,
    )


def make_annotator(
    spec: AnnotatorSpec,
    kb: KB,
    *,
    cache: ResponseCache | str | Path | _DefaultCache | None = DEFAULT_CACHE,
    retry: RetryPolicy | None = None,
    settings: Settings,
) -> Provider | LexicalAnnotator:
    """The pre-annotator a spec names: an LLM provider (see :func:`make_llm`), or ``lexical`` on
    ``kb``."""
    if spec.is_llm:
        return make_llm(spec, cache=cache, retry=retry, settings=settings)
    from goldloop.text.lexical import LexicalAnnotator  # spaCy loads only when it is used

    return LexicalAnnotator(kb)
