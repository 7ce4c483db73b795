"""The ML backend's configuration, read from the environment in Label Studio's conventions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.files.csvfile import parse_bool
from goldloop.llm.factory import LEXICAL, AnnotatorSpec, annotator_from_env
from goldloop.settings import Settings
from goldloop.studio.connection import KEY_ENV, URL_ENV

GOLD_ENV = "GOLDLOOP_GOLD"
PROPOSE_ENV = "GOLDLOOP_PROPOSE_OCCURRENCES"

__all__ = ["LEXICAL", "MAX_TASK_CHARS", "AnnotatorSpec", "BackendSettings"]

# A task longer than this gets no prediction (an abstract is ~2,000 characters): one huge task
# must not take the batch's time, the provider's context or spaCy's memory.
MAX_TASK_CHARS = 50_000


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
    max_task_chars: int = MAX_TASK_CHARS
    # Suggest the drawn surface's other occurrences too (as proposals the annotator must check).
    propose_occurrences: bool = True
    # The live gold: a gold file per campaign (project NAME), and the Label Studio it reads from.
    gold: dict[str, Path] = field(default_factory=dict)
    studio_url: str | None = None
    studio_api_key: str | None = field(default=None, repr=False)
    # What the door read: the providers' keys and base URLs, the price table, GOLDLOOP_INSECURE.
    environment: Settings = field(default_factory=Settings, compare=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BackendSettings:
        """:meth:`from_settings` on the variables ``env`` (the door's, or a test's) holds."""
        return cls.from_settings(Settings.from_env(env))

    @classmethod
    def from_settings(cls, read: Settings) -> BackendSettings:
        """The backend's configuration in what a door read: ``GOLDLOOP_*``
        (``GOLDLOOP_MAX_TASK_CHARS`` and ``GOLDLOOP_PROPOSE_OCCURRENCES`` among them), ``REDIS_URL``, ``BASIC_AUTH_*`` and the
        providers' key variables."""
        env = read.environ
        annotator = annotator_from_env(env)
        other = (
            annotator_from_env(env, "GOLDLOOP_OTHER_")
            if env.get("GOLDLOOP_OTHER_PROVIDER")
            else None
        )
        return cls(
            annotator=annotator,
            other=other,
            kb_path=Path(env["GOLDLOOP_KB"]) if env.get("GOLDLOOP_KB") else None,
            cache_path=read.cache,
            redis_url=read.redis_url,
            basic_auth=read.basic_auth(),
            concurrency=_positive_int(env, "GOLDLOOP_CONCURRENCY", 16),
            max_task_chars=_positive_int(env, "GOLDLOOP_MAX_TASK_CHARS", MAX_TASK_CHARS),
            propose_occurrences=_flag(env, PROPOSE_ENV, default=True),
            gold=_gold_paths(env.get(GOLD_ENV, "")),
            studio_url=read.studio_url,
            studio_api_key=read.studio_api_key,
            environment=read,
        )

    def studio_credentials(self) -> str:
        """Which of Label Studio's variables are set (never their values), for the start-up log."""
        said = [
            f"{name} {'set' if value else 'not set'}"
            for name, value in ((URL_ENV, self.studio_url), (KEY_ENV, self.studio_api_key))
        ]
        live = ", ".join(sorted(self.gold)) or f"off ({GOLD_ENV} not set)"
        return f"Label Studio: {', '.join(said)}; live gold: {live}"


def _gold_paths(raw: str) -> dict[str, Path]:
    """``NAME=path`` pairs, separated by ``;`` or new lines."""
    paths: dict[str, Path] = {}
    for pair in raw.replace("\n", ";").split(";"):
        if not pair.strip():
            continue
        name, sep, path = pair.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise GoldloopError(
                f"{GOLD_ENV}: {pair.strip()!r} is not NAME=path (the project name, the gold file)"
            )
        paths[name.strip()] = Path(path.strip())
    return paths


def _flag(env: Mapping[str, str], name: str, *, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    return parse_bool(raw, "the environment", name, GoldloopError)


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
