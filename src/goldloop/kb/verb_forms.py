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
from goldloop.settings import SPACY_MODELS

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

    def __init__(self, models: tuple[str, ...] = SPACY_MODELS) -> None:
        """``models``: pipelines to try in order (the first with a rule lemmatizer serves)."""
        self._lemmatizer = _load_lemmatizer(models)
        lookups = self._lemmatizer.lookups
        self._exceptions: dict[str, list[str]] = dict(lookups.get_table("lemma_exc")["verb"])
        self._base_verbs = frozenset(lookups.get_table("lemma_index")["verb"])
        self._irregular: dict[str, list[str]] = {}
        for form, lemmas in self._exceptions.items():
            for lemma in lemmas:
                if lemma != form:
                    self._irregular.setdefault(lemma, []).append(form)
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

    def inflections(self, word: str) -> tuple[str, ...]:
        """The past forms and the -ing form of the known verb ``word`` is a form of ("binds" →
        "bound", "binding"; "secretes" → "secreted", "secreting"); () for a word that is no
        inflection of a known base verb.

        Irregular spellings (an irregular past, a doubled consonant) come from the lemmatizer's
        exceptions, which cannot tell a past tense from a participle ("eats" → "ate", "eaten");
        a verb listed there gets its past forms only from them, since the regular rule would be
        wrong for it ("shut" is not "shutted").
        """
        lemma = self.lemma(word)
        if lemma == word or lemma not in self._base_verbs:
            return ()
        irregular = self._irregular.get(lemma, [])
        participles = [f for f in irregular if self.is_participle(f)]
        if not irregular:
            participles = [_regular_participle(lemma)]
        gerunds = [f for f in irregular if f.endswith("ing")] or [_regular_gerund(lemma)]
        return tuple(participles + gerunds)


_VOWELS = frozenset("aeiou")


def _regular_participle(lemma: str) -> str:
    if lemma.endswith("e"):
        return lemma + "d"
    if lemma.endswith("y") and lemma[-2:-1] not in _VOWELS:
        return lemma[:-1] + "ied"
    return lemma + "ed"


def _regular_gerund(lemma: str) -> str:
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")):
        return lemma[:-1] + "ing"
    return lemma + "ing"


@cache
def verb_forms(models: tuple[str, ...] = SPACY_MODELS) -> VerbForms:
    """One :class:`VerbForms` per list of pipelines (loading the lemmatizer takes a moment)."""
    return VerbForms(models)
