"""A pool document's mentions: detected in this process through the one bulk parse.

``goldloop.sample.pool`` calls :func:`detect_here`, and each Dask worker does too
(``goldloop.sample.distributed``), so both parse and detect alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from goldloop.kb import KB
from goldloop.text.parsing import Parsing


@dataclass(frozen=True)
class PoolMention:
    """A detected mention as the pool keeps it: span, KB id, label, direction, verbal.

    Not the core :class:`goldloop.formats.mention.Mention`: it sits inside its pool document
    (``sample.pool.PoolDoc``, which has the ``doc_id``), and the pool cache stores these six
    fields as a positional list per mention, without the surface (the document's text has it),
    so its shape is the cache's format.
    """

    a: int
    b: int
    entity_id: str
    label: str
    direction: str | None
    verbal: bool


def detect_here(
    texts: Iterable[str],
    kb: KB,
    parsing: Parsing = Parsing(),
    *,
    workers: int = 1,
    batch_size: int = 64,
) -> Iterator[tuple[PoolMention, ...]]:
    """Pool mentions of each text, in order, parsed through the one bulk-parse path; with
    ``workers`` > 1 the parse workers detect too, so their docs are never read back here."""
    # spaCy loads only when texts are parsed.
    from goldloop.text.detector import prepare
    from goldloop.text.nlp import derive_many, load_nlp

    prepare(kb, load_nlp(parsing.models))
    return derive_many(
        texts,
        partial(_detected, kb=kb),
        parsing,
        n_process=workers,
        batch_size=batch_size,
    )


def _detected(doc: Any, kb: KB) -> tuple[PoolMention, ...]:
    from goldloop.text.detector import detect_mentions

    return pool_mentions(detect_mentions(doc, kb))


def pool_mentions(mentions: Iterable[Any]) -> tuple[PoolMention, ...]:
    return tuple(
        PoolMention(m.a, m.b, m.entity_id, m.label, m.direction, bool(m.verbal)) for m in mentions
    )
