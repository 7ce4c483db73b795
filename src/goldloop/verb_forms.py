"""English verb morphology for relation labels: verb lemmas and past participles.

The converse-pair rules compare "binds" with "bound by" and "regulates" with "regulated by":
both sides must reduce to one lemma, irregular participles included. spaCy's rule lemmatizer
carries the tables for that (suffix rules, an exceptions list of irregular forms, an index of
known base verbs); only its lemmatizer component is loaded, so no tagging or parsing happens
and a label is read the same way whatever the context.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING

from goldloop.errors import GoldloopError
from goldloop.settings import spacy_model_names

if TYPE_CHECKING:
    from spacy.pipeline import Lemmatizer

# Every component of the English pipelines except the lemmatizer: none is needed here.
_UNUSED_COMPONENTS = ["tok2vec", "tagger", "parser", "senter", "attribute_ruler", "ner"]


def _load_lemmatizer(names: tuple[str, ...]) -> Lemmatizer:
    # spaCy is imported here, not at module level: every CLI command imports this module.
    import spacy
    from spacy.pipeline import Lemmatizer

    for name in names:
        try:
            nlp = spacy.load(name, exclude=_UNUSED_COMPONENTS)
        except OSError:
            continue
        lemmatizer = nlp.get_pipe("lemmatizer")
        if isinstance(lemmatizer, Lemmatizer) and lemmatizer.mode == "rule":
            return lemmatizer
    raise GoldloopError(
        f"no spaCy English pipeline with a rule lemmatizer installed (tried {', '.join(names)}); "
        "install goldloop with its dependencies or set GOLDLOOP_SPACY_MODEL"
    )


class VerbForms:
    """Verb lemmas and participle checks backed by a spaCy rule lemmatizer."""

    def __init__(self, model: str | None = None) -> None:
        self._lemmatizer = _load_lemmatizer((model,) if model else spacy_model_names())
        lookups = self._lemmatizer.lookups
        self._exceptions: dict[str, list[str]] = dict(lookups.get_table("lemma_exc")["verb"])
        self._base_verbs = frozenset(lookups.get_table("lemma_index")["verb"])
        self.lemma = lru_cache(maxsize=None)(self._lemma)

    def _lemma(self, word: str) -> str:
        """The verb lemma of a lower-case word: "binds", "bound" → "bind".

        Irregular forms come first: "bound" is also a base verb (to leap), but in a relation
        label it is the participle of "bind".
        """
        irregular = self._exceptions.get(word)
        if irregular:
            return irregular[0]
        if word in self._base_verbs:
            return word
        from spacy.tokens import Doc  # spaCy loads lazily, as above

        token = Doc(self._lemmatizer.vocab, words=[word], pos=["VERB"])[0]
        return self._lemmatizer.rule_lemmatize(token)[0]

    def is_participle(self, word: str) -> bool:
        """A past participle: irregular ("bound", "eaten") or "-ed" and not itself a base verb."""
        irregular = self._exceptions.get(word)
        if irregular is not None:
            return word not in irregular and not word.endswith(("s", "ing"))
        return word.endswith("ed") and word not in self._base_verbs

    def participle_of(self, word: str) -> str | None:
        """The known base verb a past participle comes from ("induced" → "induce"), else None.

        Unlike :meth:`lemma`, an unknown stem gives None: "red" is not a participle of "re".
        """
        if not self.is_participle(word):
            return None
        lemma = self.lemma(word)
        return lemma if word in self._exceptions or lemma in self._base_verbs else None


@cache
def verb_forms() -> VerbForms:
    """The process-wide :class:`VerbForms` (loading the lemmatizer takes a moment)."""
    return VerbForms()
