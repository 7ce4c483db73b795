"""Deriving the pairs KB: converse pairs, their canonical member, and the curator's review.

A merged KB lists relations one per row, some with a declared inverse (``inverse_entity_id``,
as from ``owl:inverseOf``). The derivation pairs converse relations so that a passive mention
("regulated by") folds onto one canonical relation ("regulates") with the direction flipped.

Pairs come from four rules, recorded per row in ``inverse_source``:

- ``ro``: the row declares the inverse (or its partner does and no surface rule matches): a fact.
- ``has_of``: "has X" ↔ "X of".
- ``passive_by``: "[is] V-ed by" ↔ the active relation with the same verb lemma
  ("regulated by" ↔ "regulates", "bound by" ↔ "binds").
- ``passive_prep``: "[is] V-ed <other preposition>" ↔ the same ("expressed in" ↔ "expresses").

The last three are proposals a curator reviews (``needs_review``) in
``<output>.pending_review.csv``; a filled sheet passed back accepts or rejects each pair.
Symmetric relations are never paired. One member of each pair is canonical: the one whose
label is not a converse surface form (participle + preposition, or "… of"); ties go to the
smaller id.

A row whose partner declared the pair keeps the surface rule that also matches it (so the
curator still sees that proposal), as the bundled KB's upstream derivation does; see
``tests/kb/derive/test_reproduce_bundled.py`` for where goldloop and that upstream file differ.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_text
from goldloop.files.csvfile import parse_bool, read_csv, table_text
from goldloop.kb.verb_forms import VerbForms, verb_forms

RULES = ("ro", "has_of", "passive_by", "passive_prep")
PROPOSAL_RULES = RULES[1:]
VERDICTS = ("accept", "reject")
KB_COLUMNS = (
    "entity_id",
    "label",
    "description",
    "inverse_entity_id",
    "inverse_label",
    "inverse_source",
    "needs_review",
    "is_symmetric",
    "is_canonical",
    "canonical_entity_id",
    "example",
)
REVIEW_COLUMNS = (
    "entity_id",
    "label",
    "inverse_entity_id",
    "inverse_label",
    "inverse_source",
    "verdict",
    "note",
)
PENDING_SUFFIX = ".pending_review.csv"
UNPAIRED = {
    "inverse_entity_id": "",
    "inverse_label": "",
    "inverse_source": "",
    "needs_review": "False",
    "is_canonical": "True",
}

# One trailing preposition ends a converse surface form ("regulated by", "expressed in").
PREPOSITIONS = frozenset(("by", "in", "of", "from", "to", "for", "with", "at", "on"))
COPULAS = frozenset(("is", "are", "be"))


class DeriveError(GoldloopError):
    """An input of the derivation is invalid; the message names the file and row."""


@dataclass(frozen=True)
class InputRelation:
    """One row of the merged KB, as read."""

    line: int
    entity_id: str
    label: str
    declared_inverse: str
    symmetric: bool
    values: dict[str, str]


@dataclass(frozen=True)
class Proposal:
    """A surface-form pair; ``first`` comes first in the input."""

    first: str
    second: str
    rule: str

    @property
    def key(self) -> frozenset[str]:
        return frozenset((self.first, self.second))


@dataclass
class DeriveReport:
    """What the derivation did, for the summary table and for tests."""

    output: Path
    pending_path: Path
    rows: int = 0
    pairs_by_rule: Counter[str] = field(default_factory=Counter)
    accepted_by_rule: Counter[str] = field(default_factory=Counter)
    rejected_by_rule: Counter[str] = field(default_factory=Counter)
    pending_by_rule: Counter[str] = field(default_factory=Counter)
    symmetric: int = 0
    canonical: int = 0
    converse: int = 0
    dropped_declarations: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    @property
    def pending(self) -> int:
        return sum(self.pending_by_rule.values())


@dataclass(frozen=True)
class ReviewRow:
    line: int
    first: str
    second: str
    verdict: str


# --- reading -------------------------------------------------------------------------------


def read_merged_kb(path: Path) -> tuple[list[str], list[InputRelation]]:
    """The merged KB: ``entity_id, label`` required; ``inverse_entity_id`` are declared inverses.

    When the file already carries ``inverse_source`` (a pairs KB derived before), only its
    ``ro`` rows count as declarations: the other links were proposals and are derived afresh.
    An ``is_symmetric`` column is read as the ontology's symmetric flag.
    """
    table = read_csv(path, required=("entity_id", "label"), error=DeriveError)
    relations: list[InputRelation] = []
    ids: dict[str, int] = {}
    labels: dict[str, int] = {}
    for line, row in table.rows:
        where = f"{path}: line {line}"
        entity_id, label = row["entity_id"].strip(), row["label"].strip()
        if not entity_id or not label:
            raise DeriveError(f"{where}: entity_id and label must not be empty")
        if entity_id in ids:
            first = ids[entity_id]
            raise DeriveError(f"{where}: duplicate entity_id {entity_id} (first on line {first})")
        key = label.casefold()
        if key in labels:
            raise DeriveError(f"{where}: label {label!r} repeats the label on line {labels[key]}")
        ids[entity_id], labels[key] = line, line
        declared = row.get("inverse_entity_id", "").strip()
        if row.get("inverse_source", "ro").strip() not in ("ro", ""):
            declared = ""
        relations.append(
            InputRelation(
                line=line,
                entity_id=entity_id,
                label=label,
                declared_inverse=declared,
                symmetric=parse_bool(
                    row.get("is_symmetric", ""), where, "is_symmetric", DeriveError
                ),
                values=row,
            )
        )
    return table.columns, relations


def read_symmetric(path: Path, known: set[str]) -> set[str]:
    """Ids listed in a symmetric sheet (``entity_id``; other columns are for people)."""
    rows = read_csv(path, required=("entity_id",), error=DeriveError).rows
    ids = set()
    for line, row in rows:
        entity_id = row["entity_id"].strip()
        if not entity_id:
            continue
        if entity_id not in known:
            raise DeriveError(f"{path}: line {line}: {entity_id} is not in the KB")
        ids.add(entity_id)
    return ids


def read_review(path: Path) -> list[ReviewRow]:
    """A filled review sheet: one row per pair, ``verdict`` accept, reject, or blank (pending)."""
    required = ("entity_id", "inverse_entity_id", "verdict")
    rows = read_csv(path, required=required, error=DeriveError).rows
    review = []
    seen: dict[frozenset[str], int] = {}
    for line, row in rows:
        where = f"{path}: line {line}"
        first, second = row["entity_id"].strip(), row["inverse_entity_id"].strip()
        verdict = row["verdict"].strip().casefold()
        if verdict and verdict not in VERDICTS:
            raise DeriveError(
                f"{where}: verdict for {first} / {second} must be accept, reject or blank, "
                f"got {row['verdict']!r}"
            )
        key = frozenset((first, second))
        if key in seen:
            raise DeriveError(f"{where}: pair {first} / {second} repeats line {seen[key]}")
        seen[key] = line
        review.append(ReviewRow(line, first, second, verdict))
    return review


# --- surface forms -------------------------------------------------------------------------


def _words(label: str) -> list[str]:
    return label.casefold().split()


def is_passive_form(label: str, forms: VerbForms) -> bool:
    """A past participle, then one preposition ("regulated by", "is bound by", "expressed in")."""
    words = _words(label)
    return len(words) >= 2 and words[-1] in PREPOSITIONS and forms.is_participle(words[-2])


def is_converse_surface(label: str, forms: VerbForms) -> bool:
    """The form that names the converse direction: participle + preposition, or "… of"."""
    return is_passive_form(label, forms) or _words(label)[-1] == "of"


def verb_key(label: str, forms: VerbForms) -> tuple[str, ...]:
    """The label's lemmas without one trailing preposition or a leading copula.

    "regulated by", "regulates" → ("regulate",); "is eaten by" → ("eat",); "binds to" → ("bind",).
    """
    words = _words(label)
    if len(words) > 1 and words[-1] in PREPOSITIONS:
        words = words[:-1]
    if len(words) > 1 and words[0] in COPULAS:
        words = words[1:]
    return tuple(forms.lemma(w) for w in words)


def _has_of_proposals(
    relations: Sequence[InputRelation],
) -> Iterable[tuple[InputRelation, InputRelation]]:
    by_label = {r.label.casefold(): r for r in relations}
    for relation in relations:
        words = _words(relation.label)
        if len(words) > 1 and words[0] == "has":
            partner = by_label.get(" ".join([*words[1:], "of"]))
            if partner is not None:
                yield relation, partner


def _passive_proposals(
    relations: Sequence[InputRelation], forms: VerbForms, report: DeriveReport
) -> Iterable[tuple[InputRelation, InputRelation, str]]:
    passive = [r for r in relations if is_passive_form(r.label, forms)]
    passive_ids = {r.entity_id for r in passive}
    actives: dict[tuple[str, ...], list[InputRelation]] = defaultdict(list)
    for relation in relations:
        if relation.entity_id not in passive_ids:
            actives[verb_key(relation.label, forms)].append(relation)
    for relation in passive:
        candidates = actives.get(verb_key(relation.label, forms), [])
        if len(candidates) > 1:
            names = ", ".join(c.entity_id for c in candidates)
            report.ambiguous.append(f"{relation.entity_id} ({relation.label}) matches {names}")
            continue
        if candidates:
            rule = "passive_by" if _words(relation.label)[-1] == "by" else "passive_prep"
            yield relation, candidates[0], rule


def propose_pairs(
    relations: Sequence[InputRelation], forms: VerbForms, report: DeriveReport
) -> list[Proposal]:
    """Surface-form proposals among non-symmetric rows; a row claimed twice is left unpaired."""
    eligible = [r for r in relations if not r.symmetric]
    order = {r.entity_id: i for i, r in enumerate(relations)}
    found: list[Proposal] = []
    matches = [(a, b, "has_of") for a, b in _has_of_proposals(eligible)]
    matches += list(_passive_proposals(eligible, forms, report))
    for a, b, rule in matches:
        first, second = sorted((a.entity_id, b.entity_id), key=order.__getitem__)
        found.append(Proposal(first, second, rule))
    claims = Counter(e for p in found for e in p.key)
    proposals = []
    for proposal in found:
        if any(claims[e] > 1 for e in proposal.key):
            report.ambiguous.append(
                f"{proposal.first} / {proposal.second} ({proposal.rule}): "
                "a member has another proposal"
            )
        else:
            proposals.append(proposal)
    return proposals


# --- the derivation ------------------------------------------------------------------------


def _declared_pairs(
    path: Path, relations: Sequence[InputRelation], report: DeriveReport
) -> dict[frozenset[str], set[str]]:
    """Declared pairs → the ids declaring them; bad declarations raise, dropped ones are counted."""
    by_id = {r.entity_id: r for r in relations}
    pairs: dict[frozenset[str], set[str]] = {}
    partner: dict[str, tuple[str, int]] = {}
    for relation in relations:
        other_id = relation.declared_inverse
        if not other_id:
            continue
        where = f"{path}: line {relation.line}"
        if other_id == relation.entity_id:
            raise DeriveError(
                f"{where}: {other_id} declares itself as its inverse; list it as symmetric instead"
            )
        other = by_id.get(other_id)
        if other is None:
            report.dropped_declarations.append(f"{relation.entity_id} → {other_id}: not in the KB")
            continue
        if relation.symmetric or other.symmetric:
            report.dropped_declarations.append(
                f"{relation.entity_id} → {other_id}: a symmetric relation is never paired"
            )
            continue
        for member, mate in ((relation.entity_id, other_id), (other_id, relation.entity_id)):
            known = partner.get(member)
            if known is not None and known[0] != mate:
                raise DeriveError(
                    f"{where}: {relation.entity_id} declares {other_id} as its inverse, but "
                    f"{member} is already paired with {known[0]} (line {known[1]})"
                )
            partner[member] = (mate, relation.line)
        pairs.setdefault(frozenset((relation.entity_id, other_id)), set()).add(relation.entity_id)
    return pairs


def _apply_review(
    review_path: Path,
    review: Sequence[ReviewRow],
    proposals: dict[frozenset[str], Proposal],
) -> dict[frozenset[str], str]:
    verdicts = {}
    for row in review:
        key = frozenset((row.first, row.second))
        if key not in proposals:
            raise DeriveError(
                f"{review_path}: line {row.line}: {row.first} / {row.second} is not a proposed pair"
            )
        if row.verdict:
            verdicts[key] = row.verdict
    return verdicts


@dataclass
class Derived:
    """The derived rows (input order) and the pending review rows."""

    rows: list[dict[str, str]]
    pending: list[dict[str, str]]


def derive(
    input_path: Path,
    relations: Sequence[InputRelation],
    *,
    symmetric: set[str],
    review: tuple[Path, Sequence[ReviewRow]] | None = None,
    report: DeriveReport,
    forms: VerbForms | None = None,
) -> Derived:
    """Pair, review and elect canonical members; pure apart from loading verb forms."""
    forms = forms or verb_forms()
    relations = [replace(r, symmetric=True) if r.entity_id in symmetric else r for r in relations]
    by_id = {r.entity_id: r for r in relations}
    declared = _declared_pairs(input_path, relations, report)
    proposals = _consistent_proposals(declared, propose_pairs(relations, forms, report), report)
    verdicts = _apply_review(*review, proposals) if review else {}
    _count_pairs(declared, proposals, verdicts, report)

    pairs = {key for key in [*declared, *proposals] if verdicts.get(key) != "reject"}
    mates = {member: next(iter(key - {member})) for key in pairs for member in key}
    rows: list[dict[str, str]] = []
    needs_review: dict[str, bool] = {}
    for relation in relations:
        row = dict(relation.values)
        row.update(
            entity_id=relation.entity_id, label=relation.label, is_symmetric=str(relation.symmetric)
        )
        mate = by_id.get(mates.get(relation.entity_id, ""))
        if mate is None:
            row.update(UNPAIRED, canonical_entity_id=relation.entity_id)
        else:
            key = frozenset((relation.entity_id, mate.entity_id))
            declares = relation.entity_id in declared.get(key, set())
            # A row takes the surface rule that matched it unless it declared the pair itself.
            source = "ro" if declares or key not in proposals else proposals[key].rule
            canonical = elect_canonical(relation, mate, forms)
            row.update(
                inverse_entity_id=mate.entity_id,
                inverse_label=mate.label,
                inverse_source=source,
                needs_review=str(source != "ro" and key not in verdicts),
                is_canonical=str(canonical == relation.entity_id),
                canonical_entity_id=canonical,
            )
        needs_review[relation.entity_id] = row["needs_review"] == "True"
        rows.append(row)

    pending_rows = _pending_rows(rows, needs_review, proposals)
    for pending_row in pending_rows:
        report.pending_by_rule[pending_row["inverse_source"]] += 1
    report.rows = len(rows)
    report.symmetric = sum(r.symmetric for r in relations)
    report.canonical = sum(row["is_canonical"] == "True" for row in rows)
    report.converse = report.rows - report.canonical
    return Derived(rows, pending_rows)


def _consistent_proposals(
    declared: dict[frozenset[str], set[str]], found: Iterable[Proposal], report: DeriveReport
) -> dict[frozenset[str], Proposal]:
    """Proposals that do not contradict a declared inverse; the others are reported."""
    partner_of = {m: next(iter(key - {m})) for key in declared for m in key}
    proposals = {}
    for proposal in found:
        clash = [m for m in proposal.key if m in partner_of and partner_of[m] not in proposal.key]
        if clash:
            report.conflicts.append(
                f"{proposal.first} / {proposal.second} ({proposal.rule}): "
                f"{clash[0]} is declared the inverse of {partner_of[clash[0]]}"
            )
        else:
            proposals[proposal.key] = proposal
    return proposals


def _count_pairs(
    declared: dict[frozenset[str], set[str]],
    proposals: dict[frozenset[str], Proposal],
    verdicts: dict[frozenset[str], str],
    report: DeriveReport,
) -> None:
    """Pairs per rule: a declared pair a surface rule also proposed counts under that rule,
    because that is the row the curator reviews."""
    tally = {"accept": report.accepted_by_rule, "reject": report.rejected_by_rule}
    for key, proposal in proposals.items():
        report.pairs_by_rule[proposal.rule] += 1
        if key in verdicts:
            tally[verdicts[key]][proposal.rule] += 1
    report.pairs_by_rule["ro"] = sum(1 for key in declared if key not in proposals)


def elect_canonical(a: InputRelation, b: InputRelation, forms: VerbForms) -> str:
    """The member whose label is not a converse surface form; otherwise the smaller id."""
    a_converse, b_converse = (
        is_converse_surface(a.label, forms),
        is_converse_surface(b.label, forms),
    )
    if a_converse != b_converse:
        return b.entity_id if a_converse else a.entity_id
    return min(a.entity_id, b.entity_id)


def _pending_rows(
    rows: Sequence[dict[str, str]],
    needs_review: dict[str, bool],
    proposals: dict[frozenset[str], Proposal],
) -> list[dict[str, str]]:
    """One row per unreviewed pair, from its first member (in input order) that needs review."""
    pending = []
    seen: set[frozenset[str]] = set()
    for row in rows:
        key = frozenset((row["entity_id"], row["inverse_entity_id"]))
        if not needs_review[row["entity_id"]] or key in seen:
            continue
        seen.add(key)
        pending.append(
            {
                "entity_id": row["entity_id"],
                "label": row["label"],
                "inverse_entity_id": row["inverse_entity_id"],
                "inverse_label": row["inverse_label"],
                "inverse_source": proposals[key].rule,
                "verdict": "",
                "note": "",
            }
        )
    return pending


# --- writing -------------------------------------------------------------------------------


def pending_review_path(output: Path) -> Path:
    return output.with_name(output.name + PENDING_SUFFIX)


def derive_kb(
    input_path: str | Path,
    output_path: str | Path,
    *,
    review_csv: str | Path | None = None,
    symmetric_csvs: Sequence[str | Path] = (),
    forms: VerbForms | None = None,
) -> DeriveReport:
    """Read a merged KB, derive the pairs KB, and write it with its pending review sheet.

    Both files are written atomically and only after every input has been read and checked.
    """
    source, output = Path(input_path), Path(output_path)
    pending_path = pending_review_path(output)
    review_path = Path(review_csv) if review_csv is not None else None
    if review_path is not None and review_path.resolve() == pending_path.resolve():
        raise DeriveError(
            f"{review_path}: the filled review sheet would be overwritten by the new pending "
            "sheet; save it under another name first"
        )
    columns, relations = read_merged_kb(source)
    known = {r.entity_id for r in relations}
    symmetric: set[str] = set()
    for sheet in symmetric_csvs:
        symmetric |= read_symmetric(Path(sheet), known)
    review = read_review(review_path) if review_path is not None else []
    report = DeriveReport(output=output, pending_path=pending_path)
    derived = derive(
        source,
        relations,
        symmetric=symmetric,
        review=(review_path, review) if review_path is not None else None,
        report=report,
        forms=forms,
    )
    extra = [c for c in columns if c not in KB_COLUMNS]
    atomic_write_text(output, table_text([*KB_COLUMNS, *extra], derived.rows, spreadsheet=False))
    atomic_write_text(pending_path, table_text(REVIEW_COLUMNS, derived.pending, spreadsheet=False))
    return report
