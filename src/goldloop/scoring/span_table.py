"""The table two annotators' spans are compared in: per shared document, each span labelled
(offsets, folded relation, direction), the count columns' groups (all spans, labelled, each
relation, each direction), the overlapping pairs, and each document's counts of spans and pairs,
strict and lenient. :mod:`goldloop.scoring.span_agreement` turns the counts into figures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.scoring.folding import fold_answer
from goldloop.scoring.matching import match_spans

MODES = ("strict", "lenient")
_MATCH_MODE = {"strict": "exact", "lenient": "overlap"}

# A span as compared: offsets, folded relation id, direction ("symmetric" on a symmetric relation).
Labelled = tuple[int, int, str, str]


@dataclass(frozen=True)
class Groups:
    """The count columns' groups: 0 all spans, 1 labelled, then each relation, then each
    direction. Relations and directions are two namespaces: a relation id may be spelled like a
    direction (``"forward"``, ``"none"``) and still needs its own group."""

    relation: dict[str, int]
    direction: dict[str, int]

    @classmethod
    def of(cls, relations: Sequence[str], directions: Sequence[str]) -> Groups:
        return cls(
            {r: g for g, r in enumerate(relations, start=2)},
            {d: g for g, d in enumerate(directions, start=2 + len(relations))},
        )

    @property
    def size(self) -> int:
        return 2 + len(self.relation) + len(self.direction)


class Labeller:
    """Hits as compared: each distinct (id, direction) folded through the KB once (a report
    meets a few hundred of them on thousands of hits); ``folded`` holds those it met."""

    def __init__(self, kb: KB | None) -> None:
        self.kb = kb
        self.folded: dict[tuple[str, str | None], tuple[str, str]] = {}

    def __call__(self, hits: Sequence[Hit]) -> list[Labelled]:
        out = []
        for hit in hits:
            key = (hit.entity_id, hit.direction)
            found = self.folded.get(key)
            if found is None:
                found = self.folded[key] = self._fold(*key)
            out.append((hit.a, hit.b, *found))
        return out

    def fold(self, hit: Hit) -> tuple[str, str]:
        """One hit's folded relation id and direction (``symmetric`` on a symmetric relation,
        ``none`` for no direction)."""
        return self.fold_key((hit.entity_id, hit.direction))

    def fold_key(self, key: tuple[str, str | None]) -> tuple[str, str]:
        """:meth:`fold` of a hit whose (id, direction) is ``key``."""
        found = self.folded.get(key)
        if found is None:
            found = self.folded[key] = self._fold(*key)
        return found

    def _fold(self, entity_id: str, direction: str | None) -> tuple[str, str]:
        relation_id, direction = fold_answer(self.kb, entity_id, direction)
        relation = self.kb.get(str(relation_id)) if self.kb is not None else None
        if relation is not None and relation.is_symmetric:
            direction = "symmetric"
        return str(relation_id), direction or "none"


# One side's spans of every document: document, start, end, relation's and direction's group.
SpanArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Overlaps:
    """Span pairs read off the overlaps: side A's span ``first[i]`` pairs side B's
    ``second[i]`` (indices into each side's :data:`SpanArrays`), in the documents where that is
    the greedy matcher's pairing; ``matcher`` marks the others, which only the matcher pairs."""

    first: np.ndarray
    second: np.ndarray
    matcher: np.ndarray


def overlap_pairs(arrays: Sequence[SpanArrays], n_docs: int) -> Overlaps:
    """:class:`Overlaps` of ``n_docs`` documents from both sides' :data:`SpanArrays`.

    When no span of a document overlaps two spans of the other side (the usual case), the greedy
    matcher pairs exactly the overlapping spans, whichever subset it is given (one relation, one
    relation and direction; strict: those at the same offsets). The others (a span overlapping
    two, an empty or reversed span) are left to the matcher.
    """
    sides = list(arrays)
    matcher = np.zeros(n_docs, dtype=bool)
    for doc, a, b, _, _ in sides:
        matcher[doc[(a < 0) | (a >= b)]] = True
    kept1, kept2 = (np.flatnonzero(~matcher[side[0]]) for side in sides)
    (doc1, a1, b1), (doc2, a2, b2) = (
        tuple(column[kept] for column in side[:3])
        for side, kept in zip(sides, (kept1, kept2), strict=True)
    )
    # The documents end to end, a character apart, so no span overlaps another document's.
    ends = np.zeros(n_docs, dtype=np.int64)
    np.maximum.at(ends, doc1, b1)
    np.maximum.at(ends, doc2, b2)
    start = np.concatenate(([0], np.cumsum(ends + 1)[:-1]))
    a1, b1, a2, b2 = a1 + start[doc1], b1 + start[doc1], a2 + start[doc2], b2 + start[doc2]
    # Spans of the other side each span overlaps: those starting before its end, less those
    # ending at or before its start (all of which start before its end).
    degree1 = np.searchsorted(np.sort(a2), b1) - np.searchsorted(np.sort(b2), a1, side="right")
    degree2 = np.searchsorted(np.sort(a1), b2) - np.searchsorted(np.sort(b1), a2, side="right")
    matcher[doc1[degree1 > 1]] = True
    matcher[doc2[degree2 > 1]] = True
    # A span overlapping one: it is the last of the other side to start before its end, unless
    # that one lies nested before it (then left to the matcher).
    by_start = np.argsort(a2, kind="stable")
    first = np.flatnonzero(degree1 == 1)
    second = by_start[np.searchsorted(a2[by_start], b1[first]) - 1]
    nested = b2[second] <= a1[first]
    matcher[doc1[first[nested]]] = True
    first, second = first[~nested], second[~nested]
    read = ~matcher[doc1[first]]
    return Overlaps(kept1[first[read]], kept2[second[read]], matcher)


def span_counts(
    labelled: Callable[[int], tuple[list[Labelled], list[Labelled]]],
    groups: Groups,
    arrays: Sequence[SpanArrays],
    overlaps: Overlaps,
) -> np.ndarray:
    """:func:`group_counts`'s counts, read off the overlapping pairs where that is the same.

    Documents whose pairs :func:`overlap_pairs` read (``overlaps``) are counted all at once;
    the matcher's are matched by :func:`group_counts` on their hits as compared
    (``labelled``: a document's A and B sides). ``arrays``: each side's :data:`SpanArrays`.
    """
    n_docs, width = len(overlaps.matcher), 4 * groups.size
    (doc1, a1, b1, rel1, dir1), (doc2, a2, b2, rel2, dir2) = arrays
    first, second = overlaps.first, overlaps.second
    strict = (a1[first] == a2[second]) & (b1[first] == b2[second])
    same_relation = rel1[first] == rel2[second]
    same_key = same_relation & (dir1[first] == dir2[second])
    doc = doc1[first]
    # Columns as group_counts: n_a, n_b, strict and lenient pairs per group (0: all spans, 1:
    # labelled, then relations and directions); a strict pair also counts leniently. The
    # matcher's documents are counted here too, then overwritten.
    columns = [
        (doc1, 0),
        (doc1, 4),
        (doc1, 4 * rel1),
        (doc1, 4 * dir1),
        (doc2, 1),
        (doc2, 5),
        (doc2, 4 * rel2 + 1),
        (doc2, 4 * dir2 + 1),
        (doc, 3),
        (doc[strict], 2),
        (doc[same_relation], 4 * rel1[first][same_relation] + 3),
        (doc[same_relation & strict], 4 * rel1[first][same_relation & strict] + 2),
        (doc[same_key], 7),
        (doc[same_key & strict], 6),
        (doc[same_key], 4 * dir1[first][same_key] + 3),
        (doc[same_key & strict], 4 * dir1[first][same_key & strict] + 2),
    ]
    flat = np.concatenate([rows * width + column for rows, column in columns])
    counts = np.bincount(flat, minlength=n_docs * width).reshape(n_docs, width)
    matched = np.flatnonzero(overlaps.matcher)
    if len(matched):
        sides = [labelled(d) for d in matched.tolist()]
        counts[matched] = group_counts([a for a, _ in sides], [b for _, b in sides], groups)
    return counts


@dataclass(frozen=True)
class SpanTable:
    """The shared documents' spans as compared: each side's :data:`SpanArrays` and each span's
    (id, direction) as an index into ``keys``, the relations and directions they fold to
    (sorted) with their groups, and the pairs read off the overlaps. Span agreement counts
    from it; agreement's κ pairs read the same pairing."""

    shared: Sequence[tuple[Document, Document]]
    label: Labeller
    keys: list[tuple[str, str | None]]
    key_index: tuple[np.ndarray, np.ndarray]
    relations: list[str]
    directions: list[str]
    groups: Groups
    arrays: tuple[SpanArrays, SpanArrays]
    overlaps: Overlaps

    @classmethod
    def of(cls, shared: Sequence[tuple[Document, Document]], kb: KB | None) -> SpanTable:
        """The table of ``(A's, B's)`` versions of each shared document."""
        # One pass over the hits: offsets and an index per distinct (id, direction), which is
        # then folded once (a report meets a few hundred on thousands of hits).
        index: dict[tuple[str, str | None], int] = {}
        code = index.setdefault
        sides = [
            np.fromiter(
                chain.from_iterable(
                    (d, hit.a, hit.b, code((hit.entity_id, hit.direction), len(index)))
                    for d, document in enumerate(documents)
                    for hit in document.ground_truth
                ),
                dtype=np.int64,
            ).reshape(-1, 4)
            for documents in ([a for a, _ in shared], [b for _, b in shared])
        ]
        label = Labeller(kb)
        keys = list(index)
        folded = [label.fold_key(key) for key in keys]
        relations = sorted({r for r, _ in folded})
        directions = sorted({d for _, d in folded})
        groups = Groups.of(relations, directions)
        relation = np.array([groups.relation[r] for r, _ in folded], dtype=np.int64)
        direction = np.array([groups.direction[d] for _, d in folded], dtype=np.int64)
        arrays = tuple(
            (side[:, 0], side[:, 1], side[:, 2], relation[side[:, 3]], direction[side[:, 3]])
            for side in sides
        )
        return cls(
            shared,
            label,
            keys,
            (sides[0][:, 3], sides[1][:, 3]),
            relations,
            directions,
            groups,
            (arrays[0], arrays[1]),
            overlap_pairs(arrays, len(shared)),
        )

    def labelled(self, d: int) -> tuple[list[Labelled], list[Labelled]]:
        """Document ``d``'s hits as compared, A's and B's."""
        doc_a, doc_b = self.shared[d]
        return self.label(doc_a.ground_truth), self.label(doc_b.ground_truth)


def group_counts(
    labelled_a: list[list[Labelled]], labelled_b: list[list[Labelled]], groups: Groups
) -> np.ndarray:
    """Per document: four counts (n_a, n_b, pairs strict, pairs lenient) for all spans, for
    labelled pairs, then per relation and per direction at the column ``groups`` gives."""
    counts = np.zeros((len(labelled_a), 4 * groups.size), dtype=np.int64)
    for d, (hits_a, hits_b) in enumerate(zip(labelled_a, labelled_b, strict=True)):
        row = [0] * counts.shape[1]
        row[0:4] = [len(hits_a), len(hits_b), *paired(spans_of(hits_a), spans_of(hits_b))]
        row[4:6] = [len(hits_a), len(hits_b)]
        for side, hits in enumerate((hits_a, hits_b)):
            for _, _, relation, direction in hits:
                row[4 * groups.relation[relation] + side] += 1
                row[4 * groups.direction[direction] + side] += 1
        relations_a, relations_b = grouped(hits_a, 2), grouped(hits_b, 2)
        by_relation = {}
        for relation in relations_a.keys() & relations_b.keys():
            g = groups.relation[relation]
            by_relation[relation] = paired(relations_a[relation], relations_b[relation])
            row[4 * g + 2 : 4 * g + 4] = by_relation[relation]
        # A labelled pair needs the same relation and direction; per direction is that pairing
        # split by direction, so each (relation, direction) is matched once for both, and not
        # again where both sides gave the relation in that one direction only.
        keyed_a, keyed_b = grouped(hits_a, slice(2, 4)), grouped(hits_b, slice(2, 4))
        for key in keyed_a.keys() & keyed_b.keys():
            relation = key[0]
            if keyed_a[key] == relations_a[relation] and keyed_b[key] == relations_b[relation]:
                strict, lenient = by_relation[relation]
            else:
                strict, lenient = paired(keyed_a[key], keyed_b[key])
            g = groups.direction[key[1]]
            for column in (6, 4 * g + 2):
                row[column] += strict
                row[column + 1] += lenient
        counts[d] = row
    return counts


def spans_of(hits: list[Labelled]) -> list[tuple[int, int]]:
    return sorted((h[0], h[1]) for h in hits)


def grouped(hits: list[Labelled], key: int | slice) -> dict[Any, list[tuple[int, int]]]:
    """The sorted spans of each value of ``hit[key]``."""
    out: dict[Any, list[tuple[int, int]]] = {}
    for hit in hits:
        out.setdefault(hit[key], []).append((hit[0], hit[1]))
    for spans in out.values():
        spans.sort()
    return out


def paired(spans_a: list[tuple[int, int]], spans_b: list[tuple[int, int]]) -> list[int]:
    """The pairs the shared matcher finds strictly and leniently between two sorted span lists."""
    return [
        len(spans_a) - match_spans(spans_a, spans_b, _MATCH_MODE[mode]).count(None)
        for mode in MODES
    ]
