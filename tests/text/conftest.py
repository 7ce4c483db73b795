"""Shared fixtures for the mention detector tests: the bundled KB and the real spaCy pipeline."""

from __future__ import annotations

import pytest
from spacy.language import Language

from goldloop.kb import KB, load_kb
from goldloop.text.nlp import load_nlp


@pytest.fixture(scope="session")
def bundled_kb() -> KB:
    return load_kb()


@pytest.fixture(scope="session")
def nlp() -> Language:
    return load_nlp()
