"""Scoring named system files against one gold file: what ``goldloop score`` runs."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.gold import Document
from goldloop.kb import KB
from goldloop.scoring.inputs import (
    SystemPredictions,
    read_gold_documents,
    read_id_bridge,
    read_predictions,
)
from goldloop.scoring.regimes import REGIMES, score_system


@dataclass(frozen=True)
class ScoreOptions:
    regimes: tuple[str, ...] = ("end-to-end",)
    match_mode: str = "overlap"
    engine: str = "goldloop"
    bootstrap: int = 0
    seed: int = 0


def parse_named(values: Sequence[str], what: str) -> list[tuple[str | None, Path]]:
    """``NAME=PATH`` (or a bare ``PATH``) pairs, as ``--system`` and ``--id-bridge`` take them."""
    out: list[tuple[str | None, Path]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if sep and not name:
            raise GoldloopError(f"{what} {value!r}: the name before '=' is empty")
        out.append((name, Path(path)) if sep else (None, Path(value)))
    return out


def regimes_for(regime: str) -> tuple[str, ...]:
    if regime == "both":
        return REGIMES
    if regime not in REGIMES:
        raise GoldloopError(f"--regime must be one of {', '.join(REGIMES)} or both, got {regime!r}")
    return (regime,)


def score_predictions(
    documents: Sequence[Document],
    systems: Sequence[SystemPredictions],
    kb: KB | None,
    options: ScoreOptions,
    bridges: Mapping[str | None, Mapping[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """One result per system and regime; ``bridges`` maps a system name (or None: every
    system) to its id bridge."""
    results: list[dict[str, Any]] = []
    for system in systems:
        bridge = (bridges or {}).get(system.name, (bridges or {}).get(None))
        for regime in options.regimes:
            started = time.perf_counter()
            result = score_system(
                documents,
                system,
                kb=kb,
                regime=regime,
                match_mode=options.match_mode,
                id_bridge=bridge,
                engine=options.engine,
                bootstrap=options.bootstrap,
                seed=options.seed,
            )
            result["scoring_time_s"] = round(time.perf_counter() - started, 4)
            results.append(result)
    return results


def score_files(
    gold_path: Path,
    system_specs: Sequence[str],
    kb: KB | None,
    options: ScoreOptions,
    id_bridge_specs: Sequence[str] = (),
) -> tuple[list[Document], list[dict[str, Any]]]:
    """Read the gold and every ``NAME=PATH`` system file, and score them."""
    documents = read_gold_documents(gold_path, kb)
    systems: list[SystemPredictions] = []
    for name, path in parse_named(system_specs, "--system"):
        system = read_predictions(path, documents, name=name, kb=kb)
        if any(s.name == system.name for s in systems):
            raise GoldloopError(f"--system: the name {system.name!r} is given twice")
        systems.append(system)
    if not systems:
        raise GoldloopError("give at least one --system NAME=PATH")
    names = {s.name for s in systems}
    bridges: dict[str | None, dict[str, str]] = {}
    for name, path in parse_named(id_bridge_specs, "--id-bridge"):
        if name is not None and name not in names:
            raise GoldloopError(f"--id-bridge {name}={path}: no system is named {name!r}")
        bridges[name] = read_id_bridge(path)
    return documents, score_predictions(documents, systems, kb, options, bridges)
