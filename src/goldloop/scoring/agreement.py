"""Agreement between two annotators: Cohen's κ on relation and on direction.

Only documents both annotators covered count. Spans are paired by the shared greedy any-overlap
matcher; a span only one side marked enters the relation κ against an explicit ``∅`` on the
other side, so missing a mention and inventing one cost the same. κ is given on the ids as
written (raw) and folded through the KB (converse → canonical, then equivalences), so two
annotators naming one relation two ways agree. Direction κ is taken over span pairs whose folded
relation agrees; a symmetric relation agrees in any direction. The report also carries the span
agreement of :mod:`goldloop.scoring.span_agreement` (span F1, α_u, incomplete positions).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document, Hit
from goldloop.heap import paused_gc
from goldloop.kb import KB
from goldloop.scoring.bootstrap import ratio
from goldloop.scoring.design import CorpusFigures, Design, corpus_figures
from goldloop.scoring.matching import match_spans
from goldloop.scoring.span_agreement import (
    SpanAgreement,
    headline_counts,
    headline_f1,
    span_agreement,
)
from goldloop.scoring.span_table import Labeller, SpanTable

NONE = "∅"


class AgreementError(GoldloopError):
    """The two annotations cannot be compared (for example, one document with two texts)."""


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's κ over ``(rater_a, rater_b)`` category pairs.

    ``None`` when undefined: no pairs, or chance agreement of 1 (both raters used one and the
    same category throughout), where κ is 0/0 rather than perfect or null agreement.
    """
    n = len(pairs)
    if n == 0:
        return None
    count_a = Counter(a for a, _ in pairs)
    count_b = Counter(b for _, b in pairs)
    return _kappa(n, sum(a == b for a, b in pairs), sum(count_a[k] * count_b[k] for k in count_a))


def _kappa(n: int, agreeing: int, chance_pairs: int) -> float | None:
    """κ of ``n`` pairs, ``agreeing`` of them on one category, ``chance_pairs``: Σ over the
    categories of A's count times B's (whole numbers, so the floats are the same however they
    were counted)."""
    observed = agreeing / n
    chance = chance_pairs / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


# Slots, not frozen: a report builds thousands, and a frozen dataclass's __init__ (one
# object.__setattr__ a field) took four times as long; nothing changes one once built.
@dataclass(slots=True)
class SpanPair:
    """One unit of comparison: a span both marked, or one only A (``b`` None) or only B marked."""

    doc_id: str
    a: Hit | None
    b: Hit | None


@dataclass
class AgreementReport:
    n_docs_shared: int
    n_docs_only_a: int
    n_docs_only_b: int
    pairs: list[SpanPair]
    kappa_entity_id: float | None
    kappa_entity_id_folded: float | None
    n_direction_pairs: int
    kappa_direction: float | None
    confusion: dict[str, Counter[str]] = field(default_factory=dict)
    spans: SpanAgreement | None = None

    @property
    def n_span_matched(self) -> int:
        return sum(p.a is not None and p.b is not None for p in self.pairs)

    @property
    def n_only_a(self) -> int:
        return sum(p.b is None for p in self.pairs)

    @property
    def n_only_b(self) -> int:
        return sum(p.a is None for p in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        """The report's keys, then the folded relation confusion (A's id → B's id → count)."""
        out: dict[str, Any] = {
            "n_docs_shared": self.n_docs_shared,
            "n_pairs": len(self.pairs),
            "n_span_matched": self.n_span_matched,
            "n_only_a": self.n_only_a,
            "n_only_b": self.n_only_b,
            "kappa_entity_id": self.kappa_entity_id,
            "kappa_entity_id_folded": self.kappa_entity_id_folded,
            "n_direction_pairs": self.n_direction_pairs,
            "kappa_direction": self.kappa_direction,
        }
        out["confusion"] = {
            a: dict(sorted(row.items())) for a, row in sorted(self.confusion.items())
        }
        if self.spans is not None:
            out.update(self.spans.to_dict())
        return out


def pair_spans(
    documents_a: Sequence[Document], documents_b: Sequence[Document]
) -> tuple[list[SpanPair], int, int, int]:
    """Span pairs over the shared documents, with (shared, only-A, only-B) document counts."""
    both, only_a, only_b = shared_documents(documents_a, documents_b)
    pairs: list[SpanPair] = []
    for doc_a, doc_b in both:
        pairs.extend(_pair_document(doc_a.doc_id, doc_a.ground_truth, doc_b.ground_truth))
    return pairs, len(both), only_a, only_b


def shared_documents(
    documents_a: Sequence[Document], documents_b: Sequence[Document]
) -> tuple[list[tuple[Document, Document]], int, int]:
    """``(A's, B's)`` version of each document both annotated, in A's order, with the numbers
    of documents only A and only B annotated."""
    by_id_b = {doc.doc_id: doc for doc in documents_b}
    ids_a = {doc.doc_id for doc in documents_a}
    both: list[tuple[Document, Document]] = []
    for doc_a in documents_a:
        doc_b = by_id_b.get(doc_a.doc_id)
        if doc_b is None:
            continue
        if doc_a.text != doc_b.text:
            raise AgreementError(
                f"document {doc_a.doc_id}: the two annotations carry different texts"
            )
        both.append((doc_a, doc_b))
    return both, len(ids_a) - len(both), len(by_id_b.keys() - ids_a)


def _pair_document(doc_id: str, hits_a: list[Hit], hits_b: list[Hit]) -> list[SpanPair]:
    return [
        SpanPair(doc_id, None if i is None else hits_a[i], None if k is None else hits_b[k])
        for i, k in span_pairs([(h.a, h.b) for h in hits_a], [(h.a, h.b) for h in hits_b])
    ]


def span_pairs(
    spans_a: Sequence[tuple[int, int]], spans_b: Sequence[tuple[int, int]]
) -> list[tuple[int | None, int | None]]:
    """How two annotators' spans of one document pair up, as indices into each side.

    Both sides are taken in ``(a, b)`` order and matched by the greedy any-overlap matcher; A's
    spans come first (paired with B's index, or None), then B's unpaired spans (with None).
    """
    order_a = sorted(range(len(spans_a)), key=lambda i: spans_a[i])
    order_b = sorted(range(len(spans_b)), key=lambda k: spans_b[k])
    taken = match_spans([spans_a[i] for i in order_a], [spans_b[k] for k in order_b])
    pairs: list[tuple[int | None, int | None]] = [
        (i, None if k is None else order_b[k]) for i, k in zip(order_a, taken, strict=True)
    ]
    used = {k for k in taken if k is not None}
    pairs += [(None, order_b[k]) for k in range(len(order_b)) if k not in used]
    return pairs


def agreement(
    documents_a: Sequence[Document],
    documents_b: Sequence[Document],
    kb: KB | None,
    *,
    weights: Mapping[str, float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> AgreementReport:
    """κ between annotators A and B (ids compared as written and, with ``kb``, folded), and the
    span agreement of :mod:`goldloop.scoring.span_agreement` (``weights`` per ``doc_id``)."""
    both, only_a, only_b = shared_documents(documents_a, documents_b)
    # Thousands of pairs and tuples, none in a cycle: the collector's passes would only cost time.
    with paused_gc():
        # One table for the span agreement and the κ: its folds, arrays and pairing are read
        # once.
        table = SpanTable.of(both, kb)
        spans = span_agreement(both, kb, weights=weights, n_boot=n_boot, seed=seed, table=table)
        hits = (
            [hit for doc_a, _ in both for hit in doc_a.ground_truth],
            [hit for _, doc_b in both for hit in doc_b.ground_truth],
        )
        pairs, left, right = _table_pairs(both, table, hits)
        kappas = _Kappas(table, left, right)
    folded = kb is not None
    return AgreementReport(
        n_docs_shared=len(both),
        n_docs_only_a=only_a,
        n_docs_only_b=only_b,
        pairs=pairs,
        kappa_entity_id=kappas.raw(),
        kappa_entity_id_folded=kappas.folded() if folded else None,
        n_direction_pairs=kappas.n_direction_pairs,
        kappa_direction=kappas.direction(),
        confusion=kappas.confusion(folded),
        spans=spans,
    )


# Both sides' hits of the shared documents, one list a side: the order of the table's arrays.
FlatHits = tuple[list[Hit], list[Hit]]


def _table_pairs(
    both: Sequence[tuple[Document, Document]], table: SpanTable, hits: FlatHits
) -> tuple[list[SpanPair], np.ndarray, np.ndarray]:
    """:func:`pair_spans`'s pairs of ``both``, with each pair's A hit and B hit as an index
    into the table's arrays and ``hits`` (-1: none).

    Where the table read a document's pairs off its overlaps (:func:`overlap_pairs`: the
    matcher's pairing there), they are put in :func:`span_pairs`' order all at once: A's
    spans by offsets, then B's unpaired ones; the other documents run :func:`span_pairs`.
    """
    (doc_a, a_a, b_a, _, _), (doc_b, a_b, b_b, _, _) = table.arrays
    overlaps = table.overlaps
    partner = np.full(len(doc_a), -1, dtype=np.int64)
    partner[overlaps.first] = overlaps.second
    paired_b = np.zeros(len(doc_b), dtype=bool)
    paired_b[overlaps.second] = True
    # lexsort is stable: spans at the same offsets keep their order, as sorted() keeps it.
    order_a = np.lexsort((b_a, a_a, doc_a))
    order_a = order_a[~overlaps.matcher[doc_a[order_a]]]
    order_b = np.lexsort((b_b, a_b, doc_b))
    order_b = order_b[~paired_b[order_b] & ~overlaps.matcher[doc_b[order_b]]]
    docs = [doc_a[order_a], doc_b[order_b]]
    lefts = [order_a, np.full(len(order_b), -1, dtype=np.int64)]
    rights = [partner[order_a], order_b]
    # The matcher's documents: their hits' places in the arrays start where the document's do.
    start_a = np.searchsorted(doc_a, np.arange(len(both)))
    start_b = np.searchsorted(doc_b, np.arange(len(both)))
    for d in np.flatnonzero(overlaps.matcher).tolist():
        doc_a_, doc_b_ = both[d]
        found = span_pairs(
            [(h.a, h.b) for h in doc_a_.ground_truth], [(h.a, h.b) for h in doc_b_.ground_truth]
        )
        docs.append(np.full(len(found), d, dtype=np.int64))
        lefts.append(np.array([-1 if i is None else start_a[d] + i for i, _ in found], np.int64))
        rights.append(np.array([-1 if k is None else start_b[d] + k for _, k in found], np.int64))
    # Document by document (stable: each document's pairs come from one of the parts above).
    order = np.argsort(np.concatenate(docs), kind="stable")
    doc = np.concatenate(docs)[order]
    left, right = np.concatenate(lefts)[order], np.concatenate(rights)[order]
    hits_a, hits_b = hits
    ids = [doc_a_.doc_id for doc_a_, _ in both]
    pairs = [
        SpanPair(ids[d], None if i < 0 else hits_a[i], None if k < 0 else hits_b[k])
        for d, i, k in zip(doc.tolist(), left.tolist(), right.tolist(), strict=True)
    ]
    return pairs, left, right


class _Kappas:
    """The three κ and the confusion table of the pairs :func:`_table_pairs` gives (``left``,
    ``right``: indices into the table's arrays, -1 for ``∅``), from category codes: the same
    numbers as :func:`category_pairs` and :func:`cohen_kappa` on the pairs."""

    def __init__(self, table: SpanTable, left: np.ndarray, right: np.ndarray) -> None:
        (_, _, _, relation_a, direction_a), (_, _, _, relation_b, direction_b) = table.arrays
        # Ids as written: a code per id, ∅ first (an id spelled ∅ is the same category, as
        # with the strings), read through each hit's (id, direction).
        self.raw_names: dict[str, int] = {NONE: 0}
        code = self.raw_names.setdefault
        raw = np.array(
            [code(entity_id, len(self.raw_names)) for entity_id, _ in table.keys], dtype=np.int64
        )
        raw_a, raw_b = (raw[index] for index in table.key_index)
        # Folded relations by their group; ∅ as group 0 (all spans: never a relation's) unless a
        # relation is spelled ∅.
        none = table.groups.relation.get(NONE, 0)
        self.relation_names = {g: r for r, g in table.groups.relation.items()} | {none: NONE}
        self.left_raw, self.right_raw = _sides(raw_a, raw_b, left, right, 0)
        self.left, self.right = _sides(relation_a, relation_b, left, right, none)
        self.raw_size = len(self.raw_names)
        self.size = table.groups.size
        # Direction κ over matched pairs of one folded relation where both sides give a
        # direction (the labeller's "none": no direction).
        matched = (left >= 0) & (right >= 0)
        i, k = left[matched], right[matched]
        no_direction = table.groups.direction.get("none", -1)
        compared = (
            (relation_a[i] == relation_b[k])
            & (direction_a[i] != no_direction)
            & (direction_b[k] != no_direction)
        )
        self.direction_a, self.direction_b = direction_a[i[compared]], direction_b[k[compared]]
        self.n_direction_pairs = int(compared.sum())

    def raw(self) -> float | None:
        return _kappa_of_codes(self.left_raw, self.right_raw, self.raw_size)

    def folded(self) -> float | None:
        return _kappa_of_codes(self.left, self.right, self.size)

    def direction(self) -> float | None:
        return _kappa_of_codes(self.direction_a, self.direction_b, self.size)

    def confusion(self, folded: bool) -> dict[str, Counter[str]]:
        """A's category → B's → count, rows and their cells in the order the pairs first
        meet them (as counting pair by pair would): folded relations, or ids as written."""
        if folded:
            left, right, size, names = self.left, self.right, self.size, self.relation_names
        else:
            left, right, size = self.left_raw, self.right_raw, self.raw_size
            names = {c: name for name, c in self.raw_names.items()}
        cells, first, counts = np.unique(left * size + right, return_index=True, return_counts=True)
        order = np.argsort(first)
        table: dict[str, Counter[str]] = {}
        for cell, count in zip(cells[order].tolist(), counts[order].tolist(), strict=True):
            a, b = divmod(cell, size)
            row = table.get(names[a])
            if row is None:
                row = table[names[a]] = Counter()
            row[names[b]] = count
        return table


def _sides(
    code_a: np.ndarray, code_b: np.ndarray, left: np.ndarray, right: np.ndarray, none: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's category on side A and side B: its hit's code, ``none`` where it has none."""
    return _codes(code_a, left, none), _codes(code_b, right, none)


def _codes(codes: np.ndarray, index: np.ndarray, none: int) -> np.ndarray:
    found = np.full(len(index), none, dtype=np.int64)
    at = index >= 0
    found[at] = codes[index[at]]
    return found


def _kappa_of_codes(left: np.ndarray, right: np.ndarray, size: int) -> float | None:
    """:func:`cohen_kappa` of the pairs of category codes ``left``, ``right`` (below ``size``)."""
    if len(left) == 0:
        return None
    chance_pairs = np.bincount(left, minlength=size) @ np.bincount(right, minlength=size)
    return _kappa(len(left), int(np.count_nonzero(left == right)), int(chance_pairs))


def direction_pairs(
    pairs: Sequence[SpanPair], kb: KB | None, label: Labeller | None = None
) -> list[tuple[str, str]]:
    """``(direction_a, direction_b)`` over matched spans whose folded relation agrees.

    A symmetric relation agrees in any direction: its pairs count as ``symmetric`` on both
    sides. Other pairs count where both sides give a direction (folded with the relation).
    ``label``: a :class:`Labeller` of ``kb`` to fold through (its folds are reused).
    """
    return category_pairs(pairs, label or Labeller(kb))[2]


def category_pairs(
    pairs: Sequence[SpanPair], label: Labeller
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """The three κ's category pairs in one pass over ``pairs``: relation ids as written and
    folded through ``label`` (``∅`` for a span one side did not mark), and the directions of
    :func:`direction_pairs`."""
    raw: list[tuple[str, str]] = []
    folded: list[tuple[str, str]] = []
    directions: list[tuple[str, str]] = []
    # The folds met so far read directly (after the span agreement, all of them), the others
    # folded once.
    table, fold = label.folded, label.fold
    for pair in pairs:
        a, b = pair.a, pair.b
        if a is None or b is None:
            raw.append((NONE if a is None else a.entity_id, NONE if b is None else b.entity_id))
            folded.append((NONE if a is None else fold(a)[0], NONE if b is None else fold(b)[0]))
            continue
        relation_a, direction_a = table.get((a.entity_id, a.direction)) or fold(a)
        relation_b, direction_b = table.get((b.entity_id, b.direction)) or fold(b)
        raw.append((a.entity_id, b.entity_id))
        folded.append((relation_a, relation_b))
        # The labeller's fold is fold_answer's, with a symmetric relation's direction
        # "symmetric" on both sides and no direction "none" (not one a hit can carry): a pair
        # of one folded relation compares directions where both sides give one.
        if relation_a == relation_b and direction_a != "none" and direction_b != "none":
            directions.append((direction_a, direction_b))
    return raw, folded, directions


def corpus_agreement(
    report: AgreementReport,
    doc_ids: Sequence[str],
    kb: KB | None,
    design: Design,
    bootstrap: int,
    seed: int,
    *,
    shared: Sequence[tuple[Document, Document]] | None = None,
) -> CorpusFigures:
    """The ``corpus`` object of an agreement report: each κ from design-weighted observed and
    chance agreement (``doc_ids``: the shared documents in ``design``'s order), and the headline
    κ's (folded when ``kb`` is given) ``observed_agreement`` and ``chance_agreement``; with
    ``shared`` (the ``(A's, B's)`` versions in the same order), the headline span F1s too."""
    by_doc: dict[str, list[SpanPair]] = {doc_id: [] for doc_id in doc_ids}
    for pair in report.pairs:
        by_doc[pair.doc_id].append(pair)
    label = Labeller(kb)
    per_doc = [category_pairs(by_doc[d], label) for d in doc_ids]
    blocks = [("kappa_entity_id", [raw for raw, _, _ in per_doc])]
    if kb is not None:
        blocks.append(("kappa_entity_id_folded", [folded for _, folded, _ in per_doc]))
    blocks.append(("kappa_direction", [directions for _, _, directions in per_doc]))
    headline = "kappa_entity_id" if kb is None else "kappa_entity_id_folded"
    columns: list[np.ndarray] = []
    parts: list[tuple[str, int, int]] = []  # name, first column, categories
    at = 0
    for name, pairs in blocks:
        counts, k = kappa_counts(pairs)
        columns.append(counts)
        parts.append((name, at, k))
        at += counts.shape[1]
    if shared is not None:
        assert [a.doc_id for a, _ in shared] == list(doc_ids)
        columns.append(headline_counts(shared, kb))

    def metrics(sums: np.ndarray) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for name, start, k in parts:
            observed, chance, kappa = kappa_from_sums(sums[:, start : start + 2 + 2 * k], k)
            out[name] = kappa
            if name == headline:
                out["observed_agreement"], out["chance_agreement"] = observed, chance
        if shared is not None:
            out |= headline_f1(sums[:, at:])
        return out

    return corpus_figures(np.hstack(columns), metrics, design, bootstrap, seed)


def shared_corpus_agreement(
    report: AgreementReport,
    first: Sequence[Document],
    second: Sequence[Document],
    kb: KB | None,
    design_of: Callable[[list[Document]], Design | None],
    bootstrap: int,
    seed: int,
) -> CorpusFigures | None:
    """:func:`corpus_agreement` over the documents both annotated (in ``first``'s order, as the
    report's pairs), weighed by ``design_of`` those documents; ``None`` without a design."""
    by_id = {d.doc_id: d for d in second}
    shared = [d for d in first if d.doc_id in by_id]
    design = design_of(shared)
    if design is None:
        return None
    ids = [d.doc_id for d in shared]
    pairs = [(d, by_id[d.doc_id]) for d in shared]
    return corpus_agreement(report, ids, kb, design, bootstrap, seed, shared=pairs)


def kappa_counts(pairs_by_doc: Sequence[Sequence[tuple[str, str]]]) -> tuple[np.ndarray, int]:
    """Per document: pairs, agreeing pairs, then each category's count on side A and on side B
    (``k`` categories); summed with any weights, :func:`kappa_from_sums` gives Cohen's κ."""
    categories = sorted({c for pairs in pairs_by_doc for pair in pairs for c in pair})
    index = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    counts = np.zeros((len(pairs_by_doc), 2 + 2 * k))
    for d, pairs in enumerate(pairs_by_doc):
        for a, b in pairs:
            counts[d, 0] += 1
            counts[d, 1] += a == b
            counts[d, 2 + index[a]] += 1
            counts[d, 2 + k + index[b]] += 1
    return counts, k


KappaParts = tuple[np.ndarray, np.ndarray, np.ndarray]


def kappa_from_sums(sums: np.ndarray, k: int) -> KappaParts:
    """Observed agreement, chance agreement and κ per row of summed :func:`kappa_counts`; NaN
    where :func:`cohen_kappa` is undefined (no pairs, chance agreement 1)."""
    n = sums[:, 0]
    observed = ratio(sums[:, 1], n)
    chance = ratio((sums[:, 2 : 2 + k] * sums[:, 2 + k : 2 + 2 * k]).sum(axis=1), n * n)
    # Weighted sums of one category on both sides give chance 1 up to rounding.
    degenerate = np.isnan(chance) | np.isclose(chance, 1.0, rtol=0, atol=1e-12)
    kappa = ratio(observed - chance, np.where(degenerate, 0.0, 1 - chance))
    return observed, chance, kappa
