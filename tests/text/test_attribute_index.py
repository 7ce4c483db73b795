"""The attribute ruler's indexed matches against spaCy's own Matcher, and the parse against
spaCy's pipeline as spaCy loads it."""

from __future__ import annotations

import csv
import pickle
from typing import Any

import numpy as np
import pytest
import spacy
from spacy.attrs import DEP, HEAD, IS_SPACE, LEMMA, LOWER, MORPH, POS, SENT_START, TAG
from spacy.pipeline import AttributeRuler

from goldloop.settings import DEMO_CORPUS
from goldloop.text.attribute_index import AttributeIndex, speed_up
from goldloop.text.nlp import EXCLUDED_COMPONENTS

# Texts that reach the bundled ruler's exceptions: contractions, "gonna", "y'all", pronouns as
# subject and object, expletive "there", auxiliaries, whitespace tokens.
TRICKY = (
    "Y'all gonna let's go, c'm on! I ain't gotta do it.  \n\n It gets  there; he got it.",
    "There is a way. There were none. Do you? I did it to you and it. But I said it.",
    "It has been shown that TNF does regulate IL-6, which it did.\t\tThat one binds those.",
    "   ",
    "",
    "y all gon na got ta",
)


def _texts() -> list[str]:
    with DEMO_CORPUS.open(encoding="utf-8", newline="") as handle:
        abstracts = [row["abstract"] for row in csv.DictReader(handle, delimiter="\t")]
    return [*abstracts, *TRICKY]


def _spacy_match(ruler: AttributeRuler, doc: Any) -> list[tuple[int, int, int, int]]:
    return AttributeRuler.match(ruler, doc)  # the class's own, whatever the instance holds


def test_the_bundled_rulers_patterns_are_indexed(nlp: Any) -> None:
    ruler = nlp.get_pipe("attribute_ruler")
    assert AttributeIndex.of(ruler) is not None
    # load_nlp installed it: the instance's match is the index's, not the class's.
    assert ruler.match.__self__.__class__ is AttributeIndex


def test_matches_are_the_matchers_on_real_text(nlp: Any) -> None:
    ruler = nlp.get_pipe("attribute_ruler")
    index = AttributeIndex.of(ruler)
    assert index is not None
    docs = list(nlp.pipe(_texts(), disable=["attribute_ruler", "lemmatizer"]))
    total = 0
    for doc in docs:
        expected = _spacy_match(ruler, doc)
        assert index.match(doc) == expected, doc.text[:60]
        total += len(expected)
    assert total > sum(len(doc) for doc in docs)  # every token's tag matched, and exceptions


def test_the_parse_is_spacys_own(nlp: Any) -> None:
    """Every annotation the pipeline sets equals the same model's, as spaCy loads it."""
    plain = spacy.load(nlp.meta["lang"] + "_" + nlp.meta["name"], exclude=list(EXCLUDED_COMPONENTS))
    texts = _texts()
    attrs = [TAG, POS, MORPH, LEMMA, DEP, HEAD, SENT_START, LOWER, IS_SPACE]
    for ours, theirs in zip(nlp.pipe(texts), plain.pipe(texts), strict=True):
        assert np.array_equal(ours.to_array(attrs), theirs.to_array(attrs)), ours.text[:60]
        assert [t.lemma_ for t in ours] == [t.lemma_ for t in theirs]
        assert [str(t.morph) for t in ours] == [str(t.morph) for t in theirs]


def _ruler(patterns: list[dict[str, Any]]) -> tuple[Any, AttributeRuler]:
    nlp = spacy.blank("en")
    ruler: Any = nlp.add_pipe("attribute_ruler")
    ruler.add_patterns(patterns)
    return nlp, ruler


def test_every_indexed_shape_matches_as_the_matcher_does() -> None:
    patterns: list[dict[str, Any]] = [
        {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "go"}},
        {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "to"}, "index": 1},
        {"patterns": [[{"LOWER": {"REGEX": "^y'?$"}}, {"LOWER": "all"}]], "attrs": {"NORM": "you"}},
        {"patterns": [[{"ORTH": {"IN": ["It", "it", "They"]}}]], "attrs": {"LEMMA": "it"}},
        {
            "patterns": [[{"LOWER": {"NOT_IN": ["the", "a", ""]}, "IS_SPACE": False}]],
            "attrs": {"TAG": "X"},
        },
        {"patterns": [[{"IS_SPACE": True}]], "attrs": {"TAG": "_SP"}},
        {
            "patterns": [[{"NORM": "it"}], [{"LOWER": "binds"}, {"ORTH": "to"}]],
            "attrs": {"TAG": "Y"},
            "index": -1,
        },
        {"patterns": [[{"LOWER": {"REGEX": "s$"}}]], "attrs": {"LEMMA": "plural"}},
        {"patterns": [[{"LOWER": "it"}]], "attrs": {"LEMMA": "it"}},  # a second group, same span
    ]
    nlp, ruler = _ruler(patterns)
    index = AttributeIndex.of(ruler)
    assert index is not None
    texts = [*TRICKY, "It binds to the gene; y all gonna bind it.  They bind a protein."]
    found = 0
    for doc in nlp.pipe(texts, disable=["attribute_ruler"]):
        expected = _spacy_match(ruler, doc)
        assert index.match(doc) == expected, doc.text
        found += len(expected)
    assert found > 50


@pytest.mark.parametrize(
    "spec",
    [
        {"LOWER": "a", "OP": "?"},  # an operator
        {"LENGTH": {">=": 3}},  # a comparison
        {"POS": "VERB"},  # an attribute the index does not read
        {"_": {"flag": True}},  # an extension attribute
        {"LOWER": {"FUZZY": "gene"}},  # a predicate the index does not know
    ],
)
def test_a_ruler_with_other_patterns_keeps_the_matcher(spec: dict[str, Any]) -> None:
    nlp, ruler = _ruler([{"patterns": [[spec]], "attrs": {"TAG": "X"}}])
    assert AttributeIndex.of(ruler) is None
    speed_up(nlp)
    assert "match" not in vars(ruler)  # still the class's method


def test_the_ruler_with_its_index_pickles(nlp: Any) -> None:
    """spaCy's own worker processes (where fork is missing) receive the pipes pickled."""
    ruler = nlp.get_pipe("attribute_ruler")
    copy = pickle.loads(pickle.dumps(ruler))
    assert isinstance(vars(copy)["match"].__self__, AttributeIndex)
    for doc in nlp.pipe(TRICKY, disable=["attribute_ruler", "lemmatizer"]):
        assert copy.match(doc) == _spacy_match(ruler, doc)
