"""The sampling pool: the parsed eligible documents with their detected KB mentions, and its cache.

In one phase the pool is every eligible document; in two phases it is phase 1, a prefix of one
seeded random order of them (``goldloop.sample.phase1``). It is parsed once and cached in
``pool_mentions.csv.gz`` (one row per parsed document, its mentions as a JSON column) beside
``pool_mentions.json``, which holds the fingerprint of everything the pool depends on: corpus and
excluded corpora bytes, column choices, KB, gate settings, detector version, spaCy model and, in
two phases, the order's seed. A later batch reuses the cache while that holds.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_open, atomic_write_json
from goldloop.files.csvfile import open_csv, table_text
from goldloop.formats.sampledir import ID_KINDS
from goldloop.kb import KB
from goldloop.sample.corpus import CorpusRecord
from goldloop.sample.distributed import detect_on_dask
from goldloop.sample.gate import Gate
from goldloop.sample.pool_mentions import PoolMention, detect_here
from goldloop.text.parsing import Parsing

POOL_FILE = "pool_mentions.csv.gz"
POOL_META = "pool_mentions.json"
POOL_COLUMNS = (
    "doc_id",
    "doc_uid",
    *ID_KINDS,
    "publication_year",
    "n_chars",
    "text_sha1",
    "mentions",
)
PROGRESS_EVERY = 256


@dataclass(frozen=True)
class PoolDoc:
    """An eligible document's identity, size and detected mentions (its text is not kept)."""

    doc_id: str
    doc_uid: str
    ids: dict[str, str | None]
    year: int
    n_chars: int
    text_sha1: str
    mentions: tuple[PoolMention, ...]

    @property
    def n_mentions(self) -> int:
        return len(self.mentions)

    @property
    def n_verb_mentions(self) -> int:
        return sum(m.verbal for m in self.mentions)

    @property
    def entity_ids(self) -> frozenset[str]:
        return frozenset(m.entity_id for m in self.mentions)


@dataclass
class Pool:
    """Parsed documents (phase 1 in its order, or every eligible one), the gate's counts, and the
    texts of the documents parsed by this run (so a draw from them needs no second read)."""

    documents: list[PoolDoc]
    rows_read: int
    gate: dict[str, int]
    fingerprint: str
    cache_hit: bool
    eligible: int
    parsed: int = 0
    texts: dict[str, str] = field(default_factory=dict)


def model_identity(parsing: Parsing) -> str:
    """Name and version of the spaCy pipeline ``parsing`` picks, read without loading it when
    it is an installed package (a pipeline given as a path is loaded for its meta)."""
    for name in parsing.models:
        if Path(name).exists():
            break  # a pipeline directory: only its meta knows what it is
        try:
            if importlib.util.find_spec(name) is not None:
                return f"{name}=={importlib.metadata.version(name)}"
        except (ValueError, ImportError, importlib.metadata.PackageNotFoundError):
            break
    from goldloop.text.nlp import load_nlp  # spaCy loads only for a pipeline given as a path

    meta = load_nlp(parsing.models).meta
    return f"{meta.get('lang')}_{meta.get('name')}=={meta.get('version')}"


def fingerprint(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode("utf-8")).hexdigest()


def load_cached_pool(sample_dir: Path, expected: str) -> Pool | None:
    """The cached pool when its fingerprint matches ``expected``, else ``None``."""
    meta_path, pool_path = sample_dir / POOL_META, sample_dir / POOL_FILE
    if not (meta_path.is_file() and pool_path.is_file()):
        return None
    try:
        meta = jsonl.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GoldloopError(f"{meta_path}: unreadable pool cache metadata: {exc}") from exc
    if meta.get("fingerprint") != expected:
        return None
    documents = read_pool_rows(pool_path)
    eligible = meta.get("eligible", len(documents))
    return Pool(documents, meta["rows_read"], meta["gate"], expected, True, eligible)


def read_pool_rows(path: Path) -> list[PoolDoc]:
    documents = []
    try:
        with open_csv(path) as reader:
            for _, raw in reader:
                documents.append(
                    PoolDoc(
                        doc_id=raw["doc_id"],
                        doc_uid=raw["doc_uid"],
                        ids={kind: raw[kind] or None for kind in ID_KINDS},
                        year=int(raw["publication_year"]),
                        n_chars=int(raw["n_chars"]),
                        text_sha1=raw["text_sha1"],
                        mentions=tuple(PoolMention(*m) for m in jsonl.loads(raw["mentions"])),
                    )
                )
    except (GoldloopError, KeyError, ValueError, TypeError) as exc:
        raise GoldloopError(
            f"{path}: corrupt pool cache ({exc}); delete it to parse again"
        ) from exc
    return documents


def write_pool(sample_dir: Path, pool: Pool, inputs: dict[str, Any]) -> None:
    """Write the pool rows, then the metadata that makes them a valid cache."""
    rows = (
        dict(zip(POOL_COLUMNS, (
            d.doc_id, d.doc_uid, *(d.ids.get(k) or "" for k in ID_KINDS), d.year, d.n_chars,
            d.text_sha1,
            json.dumps(
                [[m.a, m.b, m.entity_id, m.label, m.direction, m.verbal] for m in d.mentions],
                separators=(",", ":"),
            ),
        ), strict=True))
        for d in pool.documents
    )  # fmt: skip
    text = table_text(POOL_COLUMNS, rows, spreadsheet=False)
    with atomic_open(sample_dir / POOL_FILE, "wb") as handle:
        handle.write(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))
    meta = {
        "fingerprint": pool.fingerprint,
        "inputs": inputs,
        "rows_read": pool.rows_read,
        "gate": pool.gate,
        "eligible": pool.eligible,
    }
    atomic_write_json(sample_dir / POOL_META, meta)


def admitted(
    corpus: Iterable[CorpusRecord], gate: Gate, on_rows: Callable[[int], None] | None = None
) -> Iterator[CorpusRecord]:
    """The records that pass ``gate``, in corpus order; ``on_rows`` hears of every row read."""
    rows = 0
    for record in corpus:
        rows += 1
        if on_rows is not None and rows % PROGRESS_EVERY == 0:
            on_rows(PROGRESS_EVERY)
        if gate.admit(record):
            yield record
    if on_rows is not None:
        on_rows(rows % PROGRESS_EVERY)


def parse_pool(
    records: Iterable[CorpusRecord],
    kb: KB,
    *,
    parsing: Parsing = Parsing(),
    workers: int = 1,
    batch_size: int = 64,
    scheduler: str | None = None,
) -> Iterator[PoolDoc]:
    """Each record as a pool document with its mentions, in order: parsed here through
    ``nlp.parse_many`` (``workers`` processes), or on Dask when ``scheduler`` is given."""
    # Both parsers yield in input order, so the records waiting here line up with their output.
    waiting: deque[CorpusRecord] = deque()

    def texts() -> Iterator[str]:
        for record in records:
            waiting.append(record)
            yield record.text

    if scheduler is not None:
        found = detect_on_dask(texts(), kb, scheduler, parsing, batch_size=batch_size)
    else:
        found = detect_here(texts(), kb, parsing, workers=workers, batch_size=batch_size)
    for mentions in found:
        yield _pool_doc(waiting.popleft(), mentions)


def _pool_doc(record: CorpusRecord, mentions: tuple[PoolMention, ...]) -> PoolDoc:
    assert record.doc_id is not None and record.doc_uid is not None and record.year is not None
    return PoolDoc(
        doc_id=record.doc_id,
        doc_uid=record.doc_uid,
        ids=record.ids,
        year=record.year,
        n_chars=len(record.text),
        text_sha1=record.text_sha1,
        mentions=mentions,
    )
