"""One sampling batch as recorded: the settings it depends on (:class:`SampleSettings`) and its
report (:class:`SamplingReport`, written to ``sampling_report.batch<N>.json``: :func:`report_path`),
which a later batch reads phase 1 and the strata's boundaries back from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from goldloop.errors import SettingError
from goldloop.formats.sampledir import ManifestRow
from goldloop.sample.corpus import CorpusColumns
from goldloop.sample.gate import GateSettings
from goldloop.sample.strata import OPTIONAL_ROLES, Boundaries
from goldloop.settings import available_cores


@dataclass(frozen=True)
class SampleSettings:
    """Everything a batch depends on besides the corpus and the KB."""

    columns: CorpusColumns = field(default_factory=CorpusColumns)
    gate: GateSettings = field(default_factory=GateSettings)
    n_primary: int = 100
    n_double: int = 20
    n_reserve: int = 30
    n_blind: int = 0
    tail_top_k: int = 50
    tail_weight: float = 2.0
    none_fraction: float = 0.1
    seed: int = 13
    workers: int = field(default_factory=available_cores)  # spaCy processes for the pool
    batch_size: int = 64
    phase1: int | str | None = None  # None: one phase; a size, or "auto"
    dask: str | None = None  # a scheduler address or "local:N": the parse runs there
    planned: dict[str, int] | None = None  # a plan's documents per draw stratum (sample.planned)

    def check(self) -> None:
        for role, size in self.role_sizes.items():
            if size < 0:
                raise SettingError(f"n_{role}", f"must not be negative, got {size}")
        if sum(self.role_sizes.values()) == 0:
            raise SettingError("n_primary", "a batch needs at least one document (all roles are 0)")
        if not 0 <= self.none_fraction <= 1:
            raise SettingError("none_fraction", f"must lie in [0, 1], got {self.none_fraction}")
        if self.tail_weight <= 0:
            raise SettingError("tail_weight", f"must be > 0, got {self.tail_weight}")
        if self.tail_top_k < 0:
            raise SettingError("tail_top_k", f"must be >= 0, got {self.tail_top_k}")
        if self.workers < 1 or self.batch_size < 1:
            name = "workers" if self.workers < 1 else "batch_size"
            raise SettingError(name, f"must be >= 1, got {getattr(self, name)}")
        if self.phase1 not in (None, "auto") and (
            not isinstance(self.phase1, int) or self.phase1 < 1
        ):
            raise SettingError(
                "phase1", f"must be a positive number or 'auto', got {self.phase1!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The settings as a batch's report records them; an optional role's size only when
        asked for."""
        return {
            key: value
            for key, value in asdict(self).items()
            if not (key.removeprefix("n_") in OPTIONAL_ROLES and value == 0)
            and not (key == "planned" and value is None)
        }

    @property
    def role_sizes(self) -> dict[str, int]:
        return {
            "primary": self.n_primary,
            "double": self.n_double,
            "reserve": self.n_reserve,
            "blind": self.n_blind,
        }

    @property
    def batch_total(self) -> int:
        return sum(self.role_sizes.values())


@dataclass(frozen=True)
class PoolCacheUse:
    """Whether the pool came from its cache, how many documents were parsed, the cache's key."""

    hit: bool
    parsed: int
    fingerprint: str
    inputs: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Phase1Report:
    """A two-phase sample's first phase: its seed, the size asked for and taken, and ``p``, each
    pool document's chance of being in it."""

    seed: int
    requested: int | str  # a number of documents, or "auto"
    size: int
    p: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DrawCounts:
    """What a batch drew against what was asked: documents, shortfall, negative controls (no
    verb mention), and documents per role (an optional role only when asked for)."""

    requested: int
    drawn: int
    negative_controls: int
    roles: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "drawn": self.drawn,
            "shortfall": self.shortfall,
            "negative_controls": self.negative_controls,
            "roles": self.roles,
        }

    @property
    def shortfall(self) -> int:
        return self.requested - self.drawn


@dataclass(frozen=True)
class StratumDraw:
    """One draw stratum of a batch: its pool (parsed) documents, those not yet drawn, the
    draws, and each drawn document's ``p_incl``; a merged one lists the strata it holds."""

    pool: int
    remaining: int
    drawn: int
    p_incl: float
    strata: list[str] | None = None  # None: not merged

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pool": self.pool, "remaining": self.remaining}
        if self.strata is not None:
            out["strata"] = self.strata
        return out | {"drawn": self.drawn, "p_incl": self.p_incl}


@dataclass(frozen=True)
class KbUsed:
    """The KB a batch was drawn against: its path and digest."""

    path: str
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StrataBoundaries:
    """The strata's cut points a batch drew with, and the ``tail_top_k`` that set the common
    labels; batch 0's are read back (:meth:`cuts_of`) by every later batch of a two-phase
    sample."""

    cuts: Boundaries
    tail_top_k: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "year_cuts": list(self.cuts.year_cuts),
            "verb_density_median": self.cuts.density_median,
            "tail_top_k": self.tail_top_k,
            "common_labels": sorted(self.cuts.common),
        }

    @staticmethod
    def cuts_of(written: dict[str, Any]) -> Boundaries:
        """The cut points of a report's ``boundaries``, as :meth:`to_dict` wrote them."""
        return Boundaries(
            year_cuts=(float(written["year_cuts"][0]), float(written["year_cuts"][1])),
            density_median=float(written["verb_density_median"]),
            common=frozenset(written["common_labels"]),
        )


@dataclass(frozen=True)
class SamplingReport:
    """A batch's report (``sampling_report.batch<N>.json``): where it came from (corpus, excluded
    corpora, settings, KB, pool cache), the gate's counts, phase 1, the strata's boundaries and
    sizes, and what was drawn. A later batch reads phase 1 and the boundaries back from it."""

    batch: int
    created: str
    corpus: str
    exclude_corpora: list[str]
    settings: SampleSettings
    kb: KbUsed
    pool_cache: PoolCacheUse
    rows_read: int
    eligible: int
    dropped: dict[str, int]
    phase1: Phase1Report | None
    boundaries: StrataBoundaries
    strata: dict[str, StratumDraw]
    already_drawn: int
    draw: DrawCounts

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "created": self.created,
            "corpus": self.corpus,
            "exclude_corpora": self.exclude_corpora,
            "settings": self.settings.to_dict(),
            "kb": self.kb.to_dict(),
            "pool_cache": self.pool_cache.to_dict(),
            "rows_read": self.rows_read,
            "eligible": self.eligible,
            "dropped": self.dropped,
            "dropped_total": sum(self.dropped.values()),
            "phase1": None if self.phase1 is None else self.phase1.to_dict(),
            "boundaries": self.boundaries.to_dict(),
            "strata": {name: stratum.to_dict() for name, stratum in self.strata.items()},
            "already_drawn": self.already_drawn,
            **self.draw.to_dict(),
        }


@dataclass
class SampleResult:
    sample_dir: Path
    batch: int
    rows: list[ManifestRow]
    report: SamplingReport
    report_path: Path
    surrogate_docs: int = 0  # the surrogate part drawn with this batch (``sample.surrogate``)


def report_path(sample_dir: Path, batch: int) -> Path:
    return sample_dir / f"sampling_report.batch{batch}.json"
