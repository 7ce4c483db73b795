"""The lexical mention detector: a parsed text's KB mentions, one label per site.

The offline ``lexical`` pre-annotator, the sampler's mention pool, the baselines and the
backend's interactive suggestions all detect through :func:`detect_mentions`, on the labels
as :mod:`goldloop.text.nlp` reads them (the one verb-predicate definition).

Verb-predicate labels are matched from the dependency parse, one per verb: the verb's lemma selects
the labels built on it, the voice picks the label form (active "X regulates Y" → "regulates",
forward; passive "Y is regulated by X" → "regulated by", folded onto the canonical id with
direction inverse; when the KB has no passive form, the active label with direction inverse), and
the label's other words must follow the verb (adverbs and determiners may intervene). Labels that
are not verb predicates are matched by lemma windows (consecutive lemmas, determiners skipped; not
when the last word only modifies a following noun, as "host" in "has a host range"). Nouns never
match verb labels: "increase in IL-6" is not "increases". Each site keeps one label; where
candidates overlap, the longest wins.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from spacy.attrs import LEMMA, POS, TAG
from spacy.language import Language
from spacy.parts_of_speech import NAMES as POS_NAMES
from spacy.tokens import Doc, Token

from goldloop.kb import KB, Relation
from goldloop.text.nlp import (
    PARTICIPLE_TAG,
    VERB_POS,
    LabelForm,
    label_forms,
    parse_many,
    pipeline_of,
    verb_lemma,
)
from goldloop.text.parsing import Parsing

# Bump when a change can alter which mentions are detected: sample pool caches key on it.
DETECTOR_VERSION = "1"

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


_lock = threading.Lock()
# The KB's label patterns depend on the pipeline that parses: keyed by its name and the KB.
_indexes: dict[tuple[str, str], _KBIndex] = {}


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


def prepare(kb: KB, nlp: Language) -> None:
    """Build ``kb``'s label patterns for pipeline ``nlp`` now: parse workers forked after this
    share them instead of each building its own."""
    _kb_index(kb, pipeline_of(nlp.make_doc("")))


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
    "detect_many",
    "detect_mentions",
    "is_passive",
]
