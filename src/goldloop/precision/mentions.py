"""The mentions a precision study is about, their verdicts and labels, and the files holding them.

A mention is identified by its key ``doc_id|a-b|entity_id``. Verdicts (the judge's) and labels
(a person's) are one of ``supported``, ``contradicted``, ``not_found``; a mention the judge could
not check is ``unchecked``, which counts as not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.files.jsonl import read_jsonl, write_jsonl
from goldloop.formats.gold import Document
from goldloop.formats.mention import Mention, mention_key
from goldloop.kb import KB
from goldloop.llm.tasks.judge import VERDICTS
from goldloop.scoring.inputs import SystemPredictions

LABELS = VERDICTS  # a person labels with the judge's verdicts
UNCHECKED = "unchecked"


class PrecisionError(GoldloopError):
    """A verdicts or labels file is invalid; the message names the file and line."""


@dataclass(frozen=True)
class JudgedMention(Mention):
    """One mention (the core :class:`~goldloop.formats.mention.Mention`, its label the relation's),
    and the judge's verdict once judged."""

    verdict: str | None = None
    reason: str | None = None

    def judged(self, verdict: str, reason: str | None = None) -> JudgedMention:
        return replace(self, verdict=verdict, reason=reason)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, **{k: v for k, v in asdict(self).items() if v is not None}}


def system_mentions(
    predictions: SystemPredictions, documents: Sequence[Document], kb: KB
) -> tuple[list[JudgedMention], int]:
    """The system's mentions (folded through tier 0) with their surfaces, and how many rows
    abstained (no id). Rows ``read_predictions`` could not place are in ``predictions.malformed``.

    A mention given twice is an error: its verdict and label could not be told apart.
    """
    mentions: list[JudgedMention] = []
    seen: set[str] = set()
    abstained = 0
    by_id = {document.doc_id: document for document in documents}
    for row in predictions.predictions:
        if row.entity_id is None:
            abstained += 1
            continue
        doc = by_id[row.doc_id]
        folded = kb.fold(row.entity_id, row.direction)
        relation = kb.get(folded.entity_id)
        mention = JudgedMention(
            doc_id=doc.doc_id,
            a=row.a,
            b=row.b,
            entity_id=folded.entity_id,
            surface=doc.text[row.a : row.b],
            label=relation.label if relation else folded.entity_id,
            direction=folded.direction,
        )
        if mention.key in seen:
            raise PrecisionError(f"{predictions.path}: mention {mention.key} is given twice")
        seen.add(mention.key)
        mentions.append(mention)
    return mentions, abstained


def write_verdicts(path: str | Path, mentions: Sequence[JudgedMention]) -> None:
    write_jsonl(path, (m.to_json() for m in mentions))


def read_verdicts(path: str | Path, kb: KB | None = None) -> list[JudgedMention]:
    """A verdicts file (from ``precision judge`` or made by hand): one judged mention a line; a
    row without ``label`` takes its relation's label from ``kb`` (labellers read labels, not ids)."""
    mentions: list[JudgedMention] = []
    seen: dict[str, int] = {}
    for number, row in read_jsonl(path):
        where = f"{path}: line {number}"
        try:
            mention = JudgedMention(
                doc_id=str(row["doc_id"]),
                a=int(row["a"]),
                b=int(row["b"]),
                entity_id=str(row["entity_id"]),
                surface=str(row.get("surface", "")),
                label=str(row.get("label") or _label_of(str(row["entity_id"]), kb)),
                direction=row.get("direction"),
                verdict=row.get("verdict"),
                reason=row.get("reason"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise PrecisionError(f"{where}: needs doc_id, a, b, entity_id ({exc})") from exc
        if not 0 <= mention.a < mention.b:
            raise PrecisionError(f"{where}: span [{mention.a}, {mention.b}) is not a span")
        if mention.verdict not in (*LABELS, UNCHECKED):
            raise PrecisionError(
                f"{where}: verdict must be one of {', '.join((*LABELS, UNCHECKED))}, "
                f"got {mention.verdict!r}"
            )
        if mention.key in seen:
            raise PrecisionError(f"{where}: mention {mention.key} repeats line {seen[mention.key]}")
        seen[mention.key] = number
        mentions.append(mention)
    if not mentions:
        raise PrecisionError(f"{path}: no verdicts")
    return mentions


def _label_of(entity_id: str, kb: KB | None) -> str:
    relation = kb.get(entity_id) if kb is not None else None
    return relation.label if relation is not None else entity_id


@dataclass(frozen=True)
class Label:
    key: str
    label: str | None


def read_labels(path: str | Path) -> list[Label]:
    """Hand labels: ``key`` (or doc_id, a, b, entity_id) and ``label`` (null when unlabelled)."""
    labels: list[Label] = []
    for number, row in read_jsonl(path):
        where = f"{path}: line {number}"
        key = row.get("key")
        if not isinstance(key, str):
            try:
                key = mention_key(
                    str(row["doc_id"]), int(row["a"]), int(row["b"]), str(row["entity_id"])
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise PrecisionError(f"{where}: needs key, or doc_id, a, b, entity_id") from exc
        value = row.get("label")
        if value is not None and value not in LABELS:
            raise PrecisionError(
                f"{where}: label must be one of {', '.join(LABELS)} or null, got {value!r}"
            )
        labels.append(Label(key, value))
    return labels
