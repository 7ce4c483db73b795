"""English verb morphology for relation labels: verb lemmas and past participles.

The converse-pair rules compare "binds" with "bound by" and "regulates" with "regulated by":
both sides must reduce to one lemma, irregular participles included. spaCy's rule lemmatizer
carries the tables for that (suffix rules, an exceptions list of irregular forms, an index of
known base verbs); only its lemmatizer component is loaded, so no tagging or parsing happens
and a label is read the same way whatever the context.
"""

from __future__ import annotations

from functools import cache

from goldloop.errors import GoldloopError
from goldloop.settings import spacy_model_names

# Every component of the English pipelines except the lemmatizer: none is needed here.
_UNUSED_COMPONENTS = ["tok2vec", "tagger", "parser", "senter", "attribute_ruler", "ner"]


class VerbForms:
    """Verb lemmas and participle checks backed by a spaCy rule lemmatizer."""

    def __init__(self, model: str | None = None) -> None:
        import spacy
        from spacy.tokens import Doc

        names = (model,) if model else spacy_model_names()
        for name in names:
            try:
                self._nlp = spacy.load(name, exclude=_UNUSED_COMPONENTS)
                break
            except OSError:
                continue
        else:
            raise GoldloopError(
                f"no spaCy English pipeline installed (tried {', '.join(names)}); "
                "install goldloop with its dependencies or set GOLDLOOP_SPACY_MODEL"
            )
        self._doc = Doc
        lookups = self._nlp.get_pipe("lemmatizer").lookups
        self._exceptions: dict[str, list[str]] = dict(lookups.get_table("lemma_exc")["verb"])
        self._base_verbs = frozenset(lookups.get_table("lemma_index")["verb"])

    @cache  # noqa: B019 - one instance per process (see verb_forms()); labels repeat
    def lemma(self, word: str) -> str:
        """The verb lemma of a lower-case word ("binds", "bound" → "bind"); a base verb is itself."""
        if word in self._base_verbs:
            return word
        token = self._doc(self._nlp.vocab, words=[word], pos=["VERB"])[0]
        return self._nlp.get_pipe("lemmatizer").rule_lemmatize(token)[0]

    def is_participle(self, word: str) -> bool:
        """A past participle: irregular ("bound", "eaten") or regular "-ed" that is not a base verb."""
        irregular = self._exceptions.get(word)
        if irregular is not None:
            return word not in irregular and not word.endswith(("s", "ing"))
        return word.endswith("ed") and word not in self._base_verbs


@cache
def verb_forms() -> VerbForms:
    """The process-wide :class:`VerbForms` (loading the lemmatizer takes a moment)."""
    return VerbForms()
