"""Scoring named system files against one gold file: what ``goldloop score`` runs."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.scoring.design import Design, read_design
from goldloop.scoring.inputs import (
    SystemPredictions,
    read_gold_documents,
    read_id_bridge,
    read_predictions,
)
from goldloop.scoring.ppi_inputs import SurrogateParts, SurrogateRefused, read_surrogate
from goldloop.scoring.regimes import score_system
from goldloop.scoring.report import NOTHING_ANNOTATED
from goldloop.scoring.score_result import ScoreResult


@dataclass(frozen=True)
class ScoreOptions:
    regimes: tuple[str, ...] = ("end-to-end",)
    match_mode: str = "overlap"
    engine: str = "goldloop"
    bootstrap: int = 0
    seed: int = 0
    design: str = "use"  # or "ignore": equal weights (scoring.design.read_design)


def score_predictions(
    documents: Sequence[Document],
    systems: Sequence[SystemPredictions],
    kb: KB | None,
    options: ScoreOptions,
    bridges: Mapping[str | None, Mapping[str, str]] | None = None,
    design: Design | None = None,
    surrogate: SurrogateParts | None = None,
) -> list[ScoreResult]:
    """One result per system and regime; ``bridges`` maps a system name (or None: every
    system) to its id bridge. Each result's ``corpus`` is None without a ``design``; with a
    ``surrogate`` part too, each has ``corpus_ppi``."""
    results: list[ScoreResult] = []
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
                design=design,
                surrogate=surrogate,
            )
            elapsed = round(time.perf_counter() - started, 4)
            results.append(replace(result, scoring_time_s=elapsed))
    return results


def read_scored_gold(gold_path: Path, kb: KB | None) -> list[Document]:
    """The gold a score is computed against; one without documents is refused (every rate
    would be 0/0: a report of nothing is no report)."""
    documents = read_gold_documents(gold_path, kb)
    if not documents:
        raise GoldloopError(
            f"{gold_path}: the gold holds no documents to score against ({NOTHING_ANNOTATED})"
        )
    return documents


def score_files(
    gold_path: Path,
    systems: Sequence[tuple[str, Path]],
    kb: KB | None,
    options: ScoreOptions,
    id_bridges: Sequence[tuple[str | None, Path]] = (),
    surrogate: tuple[Path, Path] | None = None,
) -> tuple[list[Document], list[ScoreResult]]:
    """Read the gold, each named system file and the id bridges (named for one system, or None
    for every system), and score them. ``surrogate``: the surrogate part's file and the
    pre-annotation of the gold's documents (``scoring.ppi_inputs``), for ``corpus_ppi``; the
    systems' files then hold predictions of both parts."""
    documents = read_scored_gold(gold_path, kb)
    design = read_design(documents, options.design, gold_path)
    parts = None
    scored = documents
    if surrogate is not None:
        if design is None:
            raise SurrogateRefused(
                f"{gold_path}: no document carries p_incl; prediction-powered figures need the"
                " gold's inclusion probabilities as much as the surrogate part's"
            )
        parts = read_surrogate(surrogate[0], surrogate[1], documents, kb)
        ours = {d.doc_id for d in documents}
        scored = [*documents, *(d for d in parts.documents if d.doc_id not in ours)]
    read = [read_predictions(path, scored, name=name, kb=kb) for name, path in systems]
    names = {s.name for s in read}
    bridges: dict[str | None, dict[str, str]] = {}
    for name, path in id_bridges:
        if name is not None and name not in names:
            raise GoldloopError(f"id bridge {name}={path}: no system is named {name!r}")
        bridges[name] = read_id_bridge(path)
    return documents, score_predictions(documents, read, kb, options, bridges, design, parts)
