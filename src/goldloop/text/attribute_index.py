"""The attribute ruler's matches found through an index of its patterns, not spaCy's Matcher.

spaCy's Matcher tries every pattern at every token; with the bundled pipeline's 179 tag-map and
exception patterns that was 30% of the whole parse. Those patterns are one or two tokens of exact
values, ``IN`` / ``NOT_IN`` sets and ``REGEX`` on a few token attributes, so each can be indexed by
one of its exact values: a token is tried only against the patterns that name its tag, its lower
form or its dependency. The matches are the Matcher's (the same list in the same order), so the
ruler sets the same annotations; a ruler with any pattern outside that shape keeps the Matcher.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spacy.attrs import IDS
from spacy.language import Language
from spacy.pipeline import AttributeRuler
from spacy.strings import get_string_id
from spacy.tokens import Doc

# Attributes whose to_array value is what the Matcher compares: a string's hash, or 0/1 for a flag.
STRING_ATTRS = ("ORTH", "LOWER", "NORM", "TAG", "DEP", "LEMMA")
FLAG_ATTRS = ("IS_SPACE",)
# Indexed before the others: the most selective first.
INDEX_ORDER = ("LOWER", "ORTH", "NORM", "LEMMA", "TAG", "DEP", "IS_SPACE")

EQUAL, IN, NOT_IN, REGEX = "==", "IN", "NOT_IN", "REGEX"
Check = tuple[str, Any]  # (the test, what the token's value is tested against)


@dataclass(frozen=True)
class _Pattern:
    group: int  # the ruler's attrs index: later groups take precedence
    key: int  # the Matcher's match id, the hash of str(group)
    tokens: tuple[tuple[tuple[int, Check], ...], ...]  # per token: (column, check) pairs


class AttributeIndex:
    """An attribute ruler's patterns indexed by an exact value of one of their tokens."""

    def __init__(self, columns: Sequence[str]) -> None:
        self._ids = [IDS[name] for name in columns]
        # (column, value → [(pattern, offset of the indexed token in it)]), per indexed column
        self._index: list[tuple[int, dict[int, list[tuple[_Pattern, int]]]]] = []
        self._scan: list[_Pattern] = []  # patterns with no exact value: tried at every token

    @classmethod
    def of(cls, ruler: AttributeRuler) -> AttributeIndex | None:
        """The index of ``ruler``'s patterns, or None when one of them is not of that shape."""
        entries: list[tuple[int, int, list[dict[str, Any]]]] = []
        groups: list[Any] = ruler.patterns
        for group, entry in enumerate(groups):
            key = ruler.vocab.strings.add(str(group))
            for pattern in entry["patterns"]:
                specs = [
                    {str(name).upper(): value for name, value in spec.items()} for spec in pattern
                ]
                entries.append((group, key, specs))
        if any(
            _check(a, v) is None for _, _, specs in entries for s in specs for a, v in s.items()
        ):
            return None
        columns = list(dict.fromkeys(attr for _, _, specs in entries for s in specs for attr in s))
        index = cls(columns)
        by_column: dict[int, dict[int, list[tuple[_Pattern, int]]]] = {}
        for group, key, specs in entries:
            tokens = tuple(
                tuple((columns.index(a), _check(a, v)) for a, v in spec.items()) for spec in specs
            )
            pattern = _Pattern(group, key, tokens)  # type: ignore[arg-type]
            found = _exact_values(specs)
            if found is None:
                index._scan.append(pattern)
                continue
            offset, attr, values = found
            values_of = by_column.setdefault(columns.index(attr), {})
            for value in values:
                values_of.setdefault(value, []).append((pattern, offset))
        index._index = sorted(by_column.items())
        return index

    def match(self, doc: Doc) -> list[tuple[int, int, int, int]]:
        """What ``AttributeRuler.match`` returns for ``doc``: (group, match id, start, end),
        sorted."""
        if not self._ids or not len(doc):
            return []
        table = doc.to_array(self._ids).reshape(len(doc), len(self._ids))
        rows: list[list[int]] = table.tolist()  # type: ignore[assignment]  # uint64 → ints
        strings = doc.vocab.strings
        n = len(rows)
        found: set[tuple[int, int, int, int]] = set()
        for i, row in enumerate(rows):
            for column, values in self._index:
                for pattern, offset in values.get(row[column], ()):
                    start = i - offset
                    if _fits(pattern, rows, start, n, strings):
                        found.add((pattern.group, pattern.key, start, start + len(pattern.tokens)))
            for pattern in self._scan:
                if _fits(pattern, rows, i, n, strings):
                    found.add((pattern.group, pattern.key, i, i + len(pattern.tokens)))
        return sorted(found)


def speed_up(nlp: Language) -> None:
    """Let ``nlp``'s attribute ruler, if any, find its matches through an :class:`AttributeIndex`
    (unchanged when its patterns are not of the indexed shape)."""
    if "attribute_ruler" not in nlp.pipe_names:
        return
    ruler = nlp.get_pipe("attribute_ruler")
    if not isinstance(ruler, AttributeRuler):
        return
    index = AttributeIndex.of(ruler)
    if index is not None:
        ruler.match = index.match  # type: ignore[method-assign]


def _check(attr: str, value: Any) -> Check | None:
    """How a token's value of ``attr`` is tested against a pattern's ``value``, or None when the
    index does not know the test. Plain data (no closures): a pipeline with the index pickles."""
    if attr in FLAG_ATTRS:
        return (EQUAL, int(value)) if isinstance(value, bool) else None
    if attr not in STRING_ATTRS:
        return None
    if isinstance(value, str):
        return EQUAL, get_string_id(value)
    if not isinstance(value, dict) or len(value) != 1:
        return None
    ((op, arg),) = value.items()
    if op in (IN, NOT_IN) and isinstance(arg, list):
        return op, frozenset(get_string_id(v) for v in arg)
    if op == REGEX and isinstance(arg, str):
        return op, re.compile(arg)
    return None


def _exact_values(specs: Sequence[dict[str, Any]]) -> tuple[int, str, list[int]] | None:
    """The token, attribute and values to index a pattern by: the first exact value (or ``IN``
    set) in :data:`INDEX_ORDER`, or None when it has none (tried at every token)."""
    for attr in INDEX_ORDER:
        for offset, spec in enumerate(specs):
            value = spec.get(attr)
            if isinstance(value, bool):
                return offset, attr, [int(value)]
            if isinstance(value, str):
                return offset, attr, [get_string_id(value)]
            if isinstance(value, dict) and isinstance(value.get("IN"), list):
                return offset, attr, [get_string_id(v) for v in value["IN"]]
    return None


def _fits(pattern: _Pattern, rows: list[list[int]], start: int, n: int, strings: Any) -> bool:
    if start < 0 or start + len(pattern.tokens) > n:
        return False
    for k, token in enumerate(pattern.tokens):
        row = rows[start + k]
        for column, (op, wanted) in token:
            got = row[column]
            if op == EQUAL:
                fits = got == wanted
            elif op == IN:
                fits = got in wanted
            elif op == NOT_IN:
                fits = got not in wanted
            else:  # the Matcher searches the attribute's string
                fits = wanted.search(strings[got]) is not None
            if not fits:
                return False
    return True
