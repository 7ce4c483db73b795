"""Re-deriving the bundled pairs KB from its inputs reproduces it, up to one explained quirk.

The input is the bundled ``relations.pairs.csv`` stripped of every derived column: only its
``ro`` rows keep ``inverse_entity_id`` (the declared inverses), and its ``is_symmetric`` set
stands in for the ontology's symmetric list. Deriving again with the bundled review sheet and
``symmetric.csv`` must give back every row's pair, source, review flag, symmetric flag and
canonical choice, and every other column unchanged.

The one difference is an upstream quirk. Upstream (pelinker's ``derive_inverse_pairs.py``)
records a declared inverse only on the row that declares it; the partner is linked only if a
surface rule also matches it. Where none does ("has participant", declared the inverse by
"participates in"), both members stay canonical and the pair never folds, though ``ro`` is a
fact and the design elects one canonical member per pair. goldloop pairs both rows: the
partner gets ``inverse_source = ro`` and folds onto the canonical member. The test derives
that set of rows from the bundled file independently and fails on any other difference,
listing each one.
"""

from __future__ import annotations

import csv

import pytest

from goldloop.kb import KB, load_kb
from goldloop.kb.derive import KB_COLUMNS, PENDING_SUFFIX, derive_kb
from goldloop.settings import BUNDLED_KB, BUNDLED_KB_DIR

from .helpers import read_csv, write_csv

COMPARED = KB_COLUMNS[1:]  # every column but the entity_id rows are keyed on


def shipped_rows() -> list[dict[str, str]]:
    with BUNDLED_KB.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def stripped_inputs(tmp_path, shipped):
    merged = write_csv(
        tmp_path / "merged.csv",
        [
            {
                "entity_id": r["entity_id"],
                "label": r["label"],
                "description": r["description"],
                "inverse_entity_id": r["inverse_entity_id"] if r["inverse_source"] == "ro" else "",
                "example": r["example"],
            }
            for r in shipped
        ],
    )
    ontology = write_csv(
        tmp_path / "ontology_symmetric.csv",
        [{"entity_id": r["entity_id"]} for r in shipped if r["is_symmetric"] == "True"],
    )
    return merged, ontology


def one_sided_declarations(shipped) -> dict[str, dict[str, str]]:
    """Rows the shipped file leaves unlinked although another row declares them its inverse."""
    by_id = {r["entity_id"]: r for r in shipped}
    return {
        r["inverse_entity_id"]: r
        for r in shipped
        if r["inverse_source"] == "ro" and not by_id[r["inverse_entity_id"]]["inverse_entity_id"]
    }


def expected_row(shipped_row, declarer) -> dict[str, str]:
    """What goldloop writes for a partner of a one-sided declaration."""
    return {
        **shipped_row,
        "inverse_entity_id": declarer["entity_id"],
        "inverse_label": declarer["label"],
        "inverse_source": "ro",
        "needs_review": "False",
        "is_canonical": str(declarer["canonical_entity_id"] == shipped_row["entity_id"]),
        "canonical_entity_id": declarer["canonical_entity_id"],
    }


@pytest.fixture(scope="module")
def rederived(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("rederive")
    shipped = shipped_rows()
    merged, ontology = stripped_inputs(tmp_path, shipped)
    report = derive_kb(
        merged,
        tmp_path / "pairs.csv",
        review_csv=BUNDLED_KB_DIR / "inverse_pairs.review.csv",
        symmetric_csvs=[BUNDLED_KB_DIR / "symmetric.csv", ontology],
    )
    return shipped, tmp_path, report


def test_rederiving_the_bundled_kb_reproduces_it(rederived):
    shipped, tmp_path, report = rederived
    derived = {r["entity_id"]: r for r in read_csv(tmp_path / "pairs.csv")}
    quirks = one_sided_declarations(shipped)
    assert [r["entity_id"] for r in shipped] == list(derived), "row order or ids differ"
    differences = []
    for row in shipped:
        entity_id = row["entity_id"]
        declarer = quirks.get(entity_id)
        expected = expected_row(row, declarer) if declarer else row
        for column in COMPARED:
            if derived[entity_id][column] != expected[column]:
                differences.append(
                    f"{entity_id} {column}: expected {expected[column]!r}, "
                    f"derived {derived[entity_id][column]!r}"
                )
    assert not differences, "\n".join(differences)
    # The quirk is real on every one of those rows: goldloop changed what upstream wrote.
    assert len(quirks) == 21
    for entity_id, declarer in quirks.items():
        assert derived[entity_id]["canonical_entity_id"] == declarer["entity_id"] != entity_id
    assert report.pending == 0
    assert read_csv(tmp_path / f"pairs.csv{PENDING_SUFFIX}") == []


def test_rederived_kb_loads_and_folds_both_sides_of_every_pair(kb: KB, rederived):
    _, tmp_path, _ = rederived
    rederived_kb = load_kb(tmp_path / "pairs.csv", equivalences=BUNDLED_KB_DIR / "equivalences.csv")
    summary = rederived_kb.summary()
    upstream = kb.summary()
    assert (summary.rows, summary.symmetric, summary.needs_review) == (355, 20, 0)
    assert summary.converse == upstream.converse + 21
    assert rederived_kb.fold("RO.0000057", "forward").entity_id == "RO.0000056"
    for relation in rederived_kb:
        if relation.inverse_entity_id:
            assert rederived_kb.fold_id(relation.entity_id) == rederived_kb.fold_id(
                relation.inverse_entity_id
            )


def test_unreviewed_derivation_proposes_exactly_the_bundled_review_sheet(tmp_path):
    shipped = shipped_rows()
    merged, ontology = stripped_inputs(tmp_path, shipped)
    report = derive_kb(
        merged, tmp_path / "pairs.csv", symmetric_csvs=[BUNDLED_KB_DIR / "symmetric.csv", ontology]
    )
    pending = read_csv(tmp_path / f"pairs.csv{PENDING_SUFFIX}")
    review = read_csv(BUNDLED_KB_DIR / "inverse_pairs.review.csv")
    columns = ("entity_id", "label", "inverse_entity_id", "inverse_label", "inverse_source")
    # The curated sheet was reordered by hand; each row's orientation and rule are as proposed.
    assert sorted(tuple(p[c] for c in columns) for p in pending) == sorted(
        tuple(r[c] for c in columns) for r in review
    )
    assert report.pending == len(review) == 55
    assert dict(report.pending_by_rule) == {"passive_by": 50, "passive_prep": 3, "has_of": 2}
