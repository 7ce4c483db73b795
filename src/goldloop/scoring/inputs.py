"""Reading gold and what systems predicted: gold files, Label Studio JSON exports, JSON/JSONL
rows, and the id bridge.

Every prediction is checked against the gold it will be scored on. A row that cannot be scored
is not dropped silently: it is counted under a reason (``not_an_object``, ``no_document``,
``unknown_document``, ``bad_offsets``, ``bad_direction``, ``bad_id``) and left out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.csvfile import read_csv
from goldloop.files.jsonl import json_lines
from goldloop.formats.documents import read_gold_documents
from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import is_label_studio_export, read_export
from goldloop.kb import DIRECTIONS, KB

# A first row holding one of these names is the id bridge's header, not a mapping.
BRIDGE_HEADERS = ("entity_id_predicted", "predicted", "from")


class PredictionsError(GoldloopError):
    """A predictions or id-bridge file cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Prediction:
    """One predicted mention of a gold document: the core mention's place (``doc_id``, the
    code-point span ``[a, b)``), the KB id and direction the system gave, and its score.

    Not a :class:`~goldloop.formats.mention.Mention`: a system may abstain on a span (``entity_id``
    None), which a mention cannot, and its surface is the gold text's. A file's rows may place a
    prediction by the document's position (``itext``); reading resolves it to ``doc_id`` here, and
    nothing past this module speaks of positions.
    """

    doc_id: str
    a: int
    b: int
    entity_id: str | None
    direction: str | None = None
    score: float | None = None


@dataclass
class SystemPredictions:
    """A system's readable predictions, and the rows that could not be scored, by reason."""

    name: str
    path: Path | None
    format: str
    predictions: list[Prediction]
    rows_seen: int
    malformed: Counter[str] = field(default_factory=Counter)


def read_predictions(
    path: str | Path, gold: Sequence[Document], *, name: str | None = None, kb: KB | None = None
) -> SystemPredictions:
    """Read predictions from JSONL rows, a JSON list of rows, a gold-format file or a Label
    Studio export.

    Rows are ``{doc_id | itext, a, b, entity_id_predicted, direction_predicted?, score?}``; a
    gold-format file's hits become predictions (``entity_id``, ``direction``).
    """
    source = Path(path)
    label = name or source.stem
    try:
        raw = source.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise PredictionsError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PredictionsError(f"{source}: not UTF-8 text") from exc
    if source.suffix == ".jsonl" or _looks_like_jsonl(raw):
        return rows_to_predictions(
            label,
            source,
            "jsonl",
            (row for _, row in json_lines(source, raw.splitlines(), PredictionsError)),
            gold,
        )
    try:
        data = jsonl.loads(raw)
    except json.JSONDecodeError as exc:
        raise PredictionsError(f"{source}: not valid JSON: {exc}") from exc
    if _is_gold_format(data) or is_label_studio_export(data):
        return _gold_format(label, source, gold, kb)
    if not isinstance(data, list):
        raise PredictionsError(f"{source}: expected a list of prediction rows or gold documents")
    return rows_to_predictions(label, source, "rows", data, gold)


def rows_to_predictions(
    name: str, path: Path | None, fmt: str, rows: Iterable[Any], gold: Sequence[Document]
) -> SystemPredictions:
    """Validate rows against the gold documents; a row's ``itext`` becomes its document's
    ``doc_id``."""
    position = {doc.doc_id: index for index, doc in enumerate(gold)}
    out = SystemPredictions(name, path, fmt, [], 0)
    for row in rows:
        out.rows_seen += 1
        reason, prediction = _check_row(row, gold, position)
        if prediction is None:
            out.malformed[reason] += 1
        else:
            out.predictions.append(prediction)
    return out


def per_document(
    documents: Sequence[Document], predictions: Iterable[Prediction]
) -> list[list[Prediction]]:
    """The predictions of each document, in the documents' order (each in the order given)."""
    position = {document.doc_id: index for index, document in enumerate(documents)}
    out: list[list[Prediction]] = [[] for _ in documents]
    for prediction in predictions:
        out[position[prediction.doc_id]].append(prediction)
    return out


def read_id_bridge(path: str | Path) -> dict[str, str]:
    """A CSV mapping a system's minted ids onto KB ids: the first two columns, header optional."""
    source = Path(path)
    table = read_csv(source, error=PredictionsError)
    rows = [(number, list(row.values())) for number, row in table.rows]
    if table.columns[0] not in BRIDGE_HEADERS:
        rows.insert(0, (1, table.columns))
    bridge: dict[str, str] = {}
    for number, row in rows:
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise PredictionsError(
                f"{source}: line {number}: needs two columns, predicted id and KB id"
            )
        minted, kb_id = row[0].strip(), row[1].strip()
        if bridge.get(minted, kb_id) != kb_id:
            raise PredictionsError(
                f"{source}: line {number}: {minted} maps to both {bridge[minted]} and {kb_id}"
            )
        bridge[minted] = kb_id
    return bridge


def _looks_like_jsonl(raw: str) -> bool:
    """Several JSON values, one per line, whatever the file is called."""
    lines = [line for line in raw.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    try:
        jsonl.loads(lines[0])
    except json.JSONDecodeError:
        return False
    return True


def _is_gold_format(data: Any) -> bool:
    first = data[0] if isinstance(data, list) and data else data
    return isinstance(first, dict) and "ground_truth" in first and "text" in first


def _gold_format(
    name: str, source: Path, gold: Sequence[Document], kb: KB | None
) -> SystemPredictions:
    """A gold-format file or Label Studio export: its hits become rows, joined on ``doc_id``."""
    rows = [
        {
            "doc_id": document.doc_id,
            "a": hit.a,
            "b": hit.b,
            "entity_id_predicted": hit.entity_id,
            "direction_predicted": hit.direction,
            "score": hit.confidence,
        }
        for document in read_gold_documents(source, kb)
        for hit in document.ground_truth
    ]
    fmt = "label-studio-export" if read_export(source) is not None else "gold"
    return rows_to_predictions(name, source, fmt, rows, gold)


def _check_row(
    row: Any, gold: Sequence[Document], position: dict[str, int]
) -> tuple[str, Prediction | None]:
    if not isinstance(row, dict):
        return "not_an_object", None
    # A row names its document by doc_id, or (pelinker's rows) by its position, itext.
    if row.get("doc_id") is not None:
        index = position.get(str(row["doc_id"]))
    elif row.get("itext") is not None:
        index = row["itext"] if _is_int(row["itext"]) and 0 <= row["itext"] < len(gold) else None
    else:
        return "no_document", None
    if index is None:
        return "unknown_document", None
    a, b = row.get("a"), row.get("b")
    if not (_is_int(a) and _is_int(b) and 0 <= a < b <= len(gold[index].text)):
        return "bad_offsets", None
    direction = row.get("direction_predicted")
    if direction is not None and direction not in DIRECTIONS:
        return "bad_direction", None
    entity_id = row.get("entity_id_predicted")
    if entity_id is not None and not isinstance(entity_id, str):
        return "bad_id", None
    score = row.get("score")
    return "", Prediction(
        gold[index].doc_id, a, b, entity_id, direction, float(score) if _is_number(score) else None
    )


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
