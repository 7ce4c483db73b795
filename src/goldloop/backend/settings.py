"""The ML backend's configuration, read from the environment in Label Studio's conventions."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.llm.base import CREDENTIALS
from goldloop.settings import default_cache_path

LEXICAL = "lexical"


@dataclass(frozen=True)
class AnnotatorSpec:
    """One annotator: an LLM provider and model (with effort), or the offline ``lexical`` one."""

    provider: str
    model: str | None = None
    effort: str | None = None
    base_url: str | None = None


@dataclass(frozen=True)
class BackendSettings:
    annotator: AnnotatorSpec
    other: AnnotatorSpec | None = None
    kb_path: Path | None = None
    cache_path: Path | None = None
    # Secrets (a Redis password, the basic-auth pair) stay out of reprs and so out of logs.
    redis_url: str | None = field(default=None, repr=False)
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)
    concurrency: int = 16

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> BackendSettings:
        """Read ``GOLDLOOP_*``, ``REDIS_URL``, ``BASIC_AUTH_*`` and the providers' key variables."""
        env = os.environ if env is None else env
        annotator = _annotator(
            env, "GOLDLOOP_PROVIDER", "GOLDLOOP_MODEL", "GOLDLOOP_EFFORT", "GOLDLOOP_BASE_URL"
        )
        other = None
        if env.get("GOLDLOOP_OTHER_PROVIDER"):
            other = _annotator(
                env,
                "GOLDLOOP_OTHER_PROVIDER",
                "GOLDLOOP_OTHER_MODEL",
                "GOLDLOOP_OTHER_EFFORT",
                "GOLDLOOP_OTHER_BASE_URL",
            )
        user, password = env.get("BASIC_AUTH_USER"), env.get("BASIC_AUTH_PASS")
        if bool(user) != bool(password):
            raise GoldloopError("set both BASIC_AUTH_USER and BASIC_AUTH_PASS, or neither")
        return cls(
            annotator=annotator,
            other=other,
            kb_path=Path(env["GOLDLOOP_KB"]) if env.get("GOLDLOOP_KB") else None,
            cache_path=Path(env["GOLDLOOP_CACHE"])
            if env.get("GOLDLOOP_CACHE")
            else default_cache_path(),
            redis_url=env.get("REDIS_URL") or None,
            basic_auth=(user, password) if user and password else None,
            concurrency=_positive_int(env, "GOLDLOOP_CONCURRENCY", 16),
        )


def has_key(env: Mapping[str, str], provider: str) -> bool:
    return any(env.get(name) for name in CREDENTIALS.get(provider, ()))


def _annotator(
    env: Mapping[str, str], provider_var: str, model_var: str, effort_var: str, url_var: str
) -> AnnotatorSpec:
    provider = (env.get(provider_var) or "").strip().lower()
    if not provider:
        # No provider named: the first one with a key, else the offline pre-annotator.
        provider = next((name for name in CREDENTIALS if has_key(env, name)), LEXICAL)
    if provider == LEXICAL:
        return AnnotatorSpec(LEXICAL)
    if provider not in CREDENTIALS:
        known = ", ".join([*CREDENTIALS, LEXICAL])
        raise GoldloopError(f"{provider_var}={provider!r} is not a provider (known: {known})")
    base_url = env.get(url_var) or None
    # A local OpenAI-compatible server (vLLM, Ollama) may need no key.
    if not has_key(env, provider) and base_url is None:
        names = " or ".join(CREDENTIALS[provider])
        raise GoldloopError(f"{provider_var}={provider} needs {names} in the environment")
    model = env.get(model_var)
    if not model:
        raise GoldloopError(f"{provider_var}={provider} needs {model_var} (the model name)")
    return AnnotatorSpec(provider, model, env.get(effort_var) or None, base_url)


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise GoldloopError(f"{name}={raw!r} must be a positive integer")
    return value
