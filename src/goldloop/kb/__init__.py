"""The relation KB: loading and validating a pairs CSV, label lookup, and folding onto canonical ids.

A pairs KB holds both members of converse pairs ("regulates" / "regulated by"); one member is
canonical and the other folds onto it with the direction flipped. Symmetric relations have no
converse and only one oriented direction, ``symmetric``. A second, optional tier of folding comes
from ``equivalences.csv``: identities the KB implies but does not declare.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.files.csvfile import parse_bool, read_csv
from goldloop.settings import BUNDLED_KB, EQUIVALENCES_NAME

log = logging.getLogger(__name__)

DIRECTIONS = ("forward", "inverse", "symmetric", "na")
FLIPPED = {"forward": "inverse", "inverse": "forward"}
REQUIRED_COLUMNS = ("entity_id", "label")
DERIVED_COLUMNS = ("is_canonical", "canonical_entity_id")
EQUIVALENCE_TIERS = ("kb_implied",)


class KBError(GoldloopError):
    """The KB or its equivalences file is invalid; the message names the file and row."""


@dataclass(frozen=True)
class Relation:
    entity_id: str
    label: str
    description: str = ""
    inverse_entity_id: str = ""
    inverse_label: str = ""
    inverse_source: str = ""
    needs_review: bool = False
    is_symmetric: bool = False
    is_canonical: bool = True
    canonical_entity_id: str = ""
    example: str = ""


@dataclass(frozen=True)
class Folded:
    """A relation named by an annotator, mapped onto its canonical id."""

    entity_id: str
    direction: str | None
    label_canonicalized: bool = False
    direction_coerced: bool = False


@dataclass(frozen=True)
class KBSummary:
    rows: int
    canonical: int
    converse: int
    converse_pairs: int
    symmetric: int
    needs_review: int
    equivalences: int


def label_key(label: str) -> str:
    """The form labels are compared in: stripped and casefolded."""
    return label.strip().casefold()


@dataclass
class KB:
    """A validated pairs KB, optionally with a tier of equivalences."""

    path: Path
    sha256: str
    relations: dict[str, Relation]
    equivalences: dict[str, str] = field(default_factory=dict)
    _by_label: dict[str, Relation] = field(default_factory=dict, repr=False)
    _converse: dict[str, Relation] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_label = {label_key(r.label): r for r in self.relations.values()}
        for r in self.relations.values():
            if not r.is_canonical:
                self._converse.setdefault(r.canonical_entity_id, r)

    def __len__(self) -> int:
        return len(self.relations)

    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self.relations

    def __iter__(self) -> Iterator[Relation]:
        return iter(self.relations.values())

    @property
    def tag(self) -> str:
        """First 8 hex digits of the KB file's sha256: names a KB version in annotator tags."""
        return self.sha256[:8]

    def get(self, entity_id: str) -> Relation | None:
        return self.relations.get(entity_id)

    def lookup(self, label: str) -> Relation | None:
        """The relation whose label matches (strip + casefold), over the whole KB."""
        return self._by_label.get(label_key(label))

    def canonical_relations(self) -> list[Relation]:
        return [r for r in self.relations.values() if r.is_canonical]

    def converse_of(self, entity_id: str) -> Relation | None:
        """The non-canonical member folding onto ``entity_id``, if it has one."""
        return self._converse.get(entity_id)

    def fold(self, entity_id: str, direction: str | None = None) -> Folded:
        """Tier 0: a converse member becomes its canonical id, direction flipped; symmetric coerced.

        An id not in the KB is returned unchanged (scorers meet minted or retired ids).
        ``na`` is kept on any relation; ``forward``/``inverse`` on a symmetric one become ``symmetric``.
        """
        relation = self.relations.get(entity_id)
        if relation is None:
            return Folded(entity_id, direction)
        canonicalized = not relation.is_canonical
        if canonicalized:
            relation = self.relations[relation.canonical_entity_id]
            direction = FLIPPED.get(direction, direction) if direction else direction
        coerced = relation.is_symmetric and direction in FLIPPED
        if coerced:
            direction = "symmetric"
        return Folded(relation.entity_id, direction, canonicalized, coerced)

    def decode_label(self, label: str, direction: str | None = None) -> Folded | None:
        """Fold the relation an annotator named by label; ``None`` when no KB label matches."""
        relation = self.lookup(label)
        return None if relation is None else self.fold(relation.entity_id, direction)

    def fold_id(self, entity_id: str) -> str:
        """Tiers 0 and 1: the canonical id, then through equivalence chains to their end."""
        current = self.fold(entity_id).entity_id
        while current in self.equivalences:
            current = self.fold(self.equivalences[current]).entity_id
        return current

    def direction_allowed(self, entity_id: str, direction: str) -> bool:
        """``symmetric`` only on symmetric relations; the other directions on any relation."""
        if direction not in DIRECTIONS:
            return False
        relation = self.relations.get(entity_id)
        return direction != "symmetric" or relation is None or relation.is_symmetric

    def summary(self) -> KBSummary:
        rows = list(self.relations.values())
        converse = [r for r in rows if not r.is_canonical]
        return KBSummary(
            rows=len(rows),
            canonical=len(rows) - len(converse),
            converse=len(converse),
            converse_pairs=len({frozenset((r.entity_id, r.canonical_entity_id)) for r in converse}),
            symmetric=sum(r.is_symmetric for r in rows),
            needs_review=sum(r.needs_review for r in rows),
            equivalences=len(self.equivalences),
        )


def load_kb(path: str | Path | None = None, equivalences: str | Path | None = None) -> KB:
    """Load and validate a pairs KB (default: the bundled one) with its equivalences (default:
    ``equivalences.csv`` beside the KB, when there is one).

    Raises :class:`KBError` naming the file and row on any invalid input; logs a warning while
    rows still need review.
    """
    kb_path = Path(path) if path is not None else BUNDLED_KB
    if equivalences is None:
        equivalences = equivalences_beside(kb_path)
    raw = _read_bytes(kb_path)
    relations = _parse_relations(kb_path, raw)
    kb = KB(path=kb_path, sha256=hashlib.sha256(raw).hexdigest(), relations=relations)
    if equivalences is not None:
        kb.equivalences = load_equivalences(equivalences, kb)
    pending = sum(r.needs_review for r in relations.values())
    if pending:
        log.warning(
            "%s: %d rows still need review: an unreviewed converse pair can merge two "
            "relations silently (review the pending sheet `goldloop kb derive` writes)",
            kb_path,
            pending,
        )
    return kb


def equivalences_beside(path: str | Path | None) -> Path | None:
    """The ``equivalences.csv`` beside a KB (default: the bundled one), when there is one."""
    # A KB is the same KB however it is named: the bundled one by its path keeps its tier 1.
    beside = (Path(path) if path is not None else BUNDLED_KB).with_name(EQUIVALENCES_NAME)
    return beside if beside.is_file() else None


def load_equivalences(path: str | Path, kb: KB) -> dict[str, str]:
    """Read ``equivalences.csv`` (entity_id, equivalent_to, tier, note) into id → id."""
    eq_path = Path(path)
    mapping: dict[str, str] = {}
    table = read_csv(eq_path, required=("entity_id", "equivalent_to", "tier"), error=KBError)
    for line, row in table.rows:
        where = f"{eq_path}: line {line}"
        source, target, tier = (row[c].strip() for c in ("entity_id", "equivalent_to", "tier"))
        if tier not in EQUIVALENCE_TIERS:
            raise KBError(f"{where}: unknown tier {tier!r} (known: {', '.join(EQUIVALENCE_TIERS)})")
        for entity_id in (source, target):
            if entity_id not in kb:
                raise KBError(f"{where}: {entity_id!r} is not in the KB {kb.path}")
        if kb.fold(source).entity_id == kb.fold(target).entity_id:
            raise KBError(f"{where}: {source} is mapped onto itself")
        if source in mapping:
            raise KBError(f"{where}: {source} already maps to {mapping[source]}; one target per id")
        mapping[source] = target
    for start in mapping:
        seen = [start]
        current = kb.fold(mapping[start]).entity_id
        while current in mapping:
            if current in seen:
                cycle = " -> ".join([*seen[seen.index(current) :], current])
                raise KBError(f"{eq_path}: equivalences form a cycle: {cycle}")
            seen.append(current)
            current = kb.fold(mapping[current]).entity_id
    return mapping


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KBError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _parse_relations(path: Path, raw: bytes) -> dict[str, Relation]:
    table = read_csv(path, data=raw, error=KBError)
    header = table.columns
    if all(c in header for c in REQUIRED_COLUMNS) and not all(c in header for c in DERIVED_COLUMNS):
        raise KBError(
            f"{path}: no is_canonical/canonical_entity_id columns: this KB predates the "
            "converse-pair derivation; run `goldloop kb derive` on it first"
        )
    relations: dict[str, Relation] = {}
    lines: dict[str, int] = {}
    labels: dict[str, tuple[str, int]] = {}
    missing = [c for c in REQUIRED_COLUMNS + DERIVED_COLUMNS if c not in header]
    if missing:
        raise KBError(f"{path}: missing column(s) {', '.join(missing)}")
    for line, raw_row in table.rows:
        where = f"{path}: line {line}"
        row = {k: v.strip() for k, v in raw_row.items()}
        entity_id, label = row["entity_id"], row["label"]
        if not entity_id or not label:
            raise KBError(f"{where}: entity_id and label must not be empty")
        if entity_id in relations:
            raise KBError(
                f"{where}: duplicate entity_id {entity_id} (first on line {lines[entity_id]})"
            )
        key = label_key(label)
        if key in labels:
            other, other_line = labels[key]
            raise KBError(
                f"{where}: label {label!r} of {entity_id} collides with {other} on line {other_line}"
            )
        relation = Relation(
            entity_id=entity_id,
            label=label,
            description=row.get("description", ""),
            inverse_entity_id=row.get("inverse_entity_id", ""),
            inverse_label=row.get("inverse_label", ""),
            inverse_source=row.get("inverse_source", ""),
            needs_review=parse_bool(row.get("needs_review", ""), where, "needs_review", KBError),
            is_symmetric=parse_bool(row.get("is_symmetric", ""), where, "is_symmetric", KBError),
            is_canonical=parse_bool(row["is_canonical"], where, "is_canonical", KBError),
            canonical_entity_id=row["canonical_entity_id"] or entity_id,
            example=row.get("example", ""),
        )
        if relation.is_symmetric and (relation.inverse_entity_id or not relation.is_canonical):
            raise KBError(
                f"{where}: {entity_id} is symmetric but paired; a symmetric relation has no converse"
            )
        if relation.is_canonical != (relation.canonical_entity_id == entity_id):
            raise KBError(
                f"{where}: {entity_id} has is_canonical={relation.is_canonical} but "
                f"canonical_entity_id={relation.canonical_entity_id}"
            )
        relations[entity_id] = relation
        lines[entity_id] = line
        labels[key] = (entity_id, line)
    for entity_id, relation in relations.items():
        target = relations.get(relation.canonical_entity_id)
        where = f"{path}: line {lines[entity_id]}"
        if target is None:
            raise KBError(
                f"{where}: canonical_entity_id {relation.canonical_entity_id} is not in the KB"
            )
        if target.is_symmetric and target.entity_id != entity_id:
            raise KBError(
                f"{where}: {entity_id} folds onto {target.entity_id}, which is symmetric; "
                "a symmetric relation has no converse"
            )
        if not target.is_canonical:
            raise KBError(
                f"{where}: canonical_entity_id {target.entity_id} of {entity_id} is not itself canonical"
            )
    if not relations:
        raise KBError(f"{path}: the KB has no rows")
    return relations
