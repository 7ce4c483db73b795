"""A sample dir as a plan sees it, and a planned batch as the sampler draws it.

A plan (``goldloop plan``, :mod:`goldloop.scoring.plan`) is made for one sample after a given
number of batches: it records the sample's identity (a digest of batch 0's document ids, which
no later batch changes) and that number, and a later ``sample --extend --plan`` refuses it for
another sample, or once the sample has grown since. The plan's strata are the draw strata of the
sample's last batch (a ``merged`` one holds the strata it lists); the sampler turns its counts
into the allocation's weights over the strata it finds, one draw at least each as always.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.formats.sampledir import MANIFEST, read_manifest
from goldloop.sample.strata import MERGED


class PlanRefused(GoldloopError):
    """A plan file that does not fit the sample (another sample, an older state, malformed)."""


@dataclass(frozen=True)
class SampleState:
    """A sample dir after its last batch: identity, batches, documents drawn, and per draw
    stratum of the last batch the documents left (``group_of``: a stratum's draw stratum)."""

    path: Path
    sample_id: str
    batches: int
    doc_ids: frozenset[str]
    remaining: dict[str, int]
    group_of: dict[str, str]

    def plan_stratum(self, stratum: str) -> str:
        """The draw stratum a document of ``stratum`` belongs to now."""
        return self.group_of.get(stratum, stratum)


def sample_state(sample_dir: str | Path) -> SampleState:
    """Read the manifest and the last batch's sampling report; a two-phase sample is refused
    (its next batch draws from a longer phase 1, which a plan does not model)."""
    path = Path(sample_dir)
    if not (path / MANIFEST).is_file():
        raise PlanRefused(f"{path}: holds no sample (no {MANIFEST})")
    rows = read_manifest(path)
    last = max(r.batch for r in rows)
    report_file = path / f"sampling_report.batch{last}.json"
    try:
        report = json.loads(report_file.read_text(encoding="utf-8"))
        strata: dict[str, Any] = report["strata"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PlanRefused(f"{report_file}: cannot read the last batch's strata ({exc})") from exc
    if report.get("phase1"):
        raise PlanRefused(f"{path}: a two-phase sample; a plan draws only from one-phase samples")
    remaining, group_of = {}, {}
    for group, draw in strata.items():
        remaining[group] = int(draw["remaining"]) - int(draw["drawn"])
        for member in draw.get("strata") or ():
            group_of[member] = group
    return SampleState(
        path=path,
        sample_id=sample_id([r.doc_id for r in rows if r.batch == 0]),
        batches=last + 1,
        doc_ids=frozenset(r.doc_id for r in rows),
        remaining=remaining,
        group_of=group_of,
    )


def sample_id(first_batch: list[str]) -> str:
    """A sample's identity: a digest of its batch 0's document ids in manifest order."""
    return hashlib.sha256("\n".join(first_batch).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PlannedBatch:
    """What the sampler takes from a plan file: documents per draw stratum."""

    by_stratum: dict[str, int]

    @property
    def documents(self) -> int:
        return sum(self.by_stratum.values())


def read_planned(plan_path: str | Path, sample: SampleState) -> PlannedBatch:
    """The next batch of the plan file ``plan_path``, checked against ``sample``."""
    where = Path(plan_path)
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
        made_for = data["sample"]
        batch = data["next_batch"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PlanRefused(f"{where}: not a plan written by goldloop plan ({exc})") from exc
    if made_for.get("id") != sample.sample_id:
        raise PlanRefused(
            f"{where}: the plan is for another sample ({made_for.get('dir')}), not {sample.path}"
        )
    if made_for.get("batches") != sample.batches:
        raise PlanRefused(
            f"{where}: the plan was made after batch {made_for.get('batches')} of {sample.path}, "
            f"which now has {sample.batches}: plan again"
        )
    if batch is None:
        raise PlanRefused(f"{where}: the plan draws no batch (its target was reached)")
    counts = batch.get("by_stratum") if isinstance(batch, dict) else None
    if not isinstance(counts, dict) or not all(
        isinstance(k, int) and k >= 0 for k in counts.values()
    ):
        raise PlanRefused(f"{where}: next_batch.by_stratum must map strata to document counts")
    unknown = sorted(set(counts) - set(sample.remaining))
    if unknown:
        raise PlanRefused(f"{where}: stratum {unknown[0]!r} is not among {sample.path}'s strata")
    return PlannedBatch({str(k): int(v) for k, v in counts.items()})


def planned_weights(planned: Mapping[str, int], sizes: Mapping[str, int]) -> dict[str, float]:
    """Allocation weights over the strata the sampler found (``sizes``: documents left): a
    stratum's planned count; a stratum the plan does not name is a member of its ``merged``
    one, whose count its members share in proportion to their sizes."""
    group = {s: s if s in planned else MERGED for s in sizes}
    members: dict[str, int] = {}
    for stratum, size in sizes.items():
        members[group[stratum]] = members.get(group[stratum], 0) + size
    return {
        stratum: planned.get(group[stratum], 0) * size / members[group[stratum]]
        if members[group[stratum]]
        else 0.0
        for stratum, size in sizes.items()
    }


def describe(sample: SampleState) -> dict[str, Any]:
    """The plan file's ``sample`` object."""
    return {"dir": str(sample.path), "id": sample.sample_id, "batches": sample.batches}
