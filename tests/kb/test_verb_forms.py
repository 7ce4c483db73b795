"""Verb forms from spaCy's rule lemmatizer: the past and -ing forms of a label's head verb."""

from __future__ import annotations

import pytest

from goldloop.kb.verb_forms import verb_forms


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("secretes", ("secreted", "secreting")),
        ("inhibits", ("inhibited", "inhibiting")),
        ("supplies", ("supplied", "supplying")),
        ("binds", ("bound", "binding")),  # irregular
        ("overlaps", ("overlapped", "overlapping")),  # doubled consonant
        ("eats", ("ate", "eaten", "eating")),  # the exceptions list both past forms
        ("shuts", ("shutting",)),  # never the regular "shutted"
        ("inhibit", ()),  # a base form is no inflection
        ("homologous", ()),  # not a form of a known verb
        ("phosphorylates", ()),  # a verb the lemmatizer does not know
    ],
)
def test_inflections(word: str, forms: tuple[str, ...]) -> None:
    assert verb_forms().inflections(word) == forms
