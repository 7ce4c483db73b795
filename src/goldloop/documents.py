"""Documents from whatever a command is given: a sample dir, a documents JSONL, or a gold JSON
file (or a Label Studio JSON export, read as ``pull`` reads it)."""

from __future__ import annotations

from pathlib import Path

from goldloop.gold import Document
from goldloop.kb import KB
from goldloop.sample import read_documents
from goldloop.scoring.inputs import read_gold_documents


def load_documents(path: str | Path, kb: KB | None = None) -> list[Document]:
    source = Path(path)
    if source.suffix == ".json":
        return read_gold_documents(source, kb)
    return read_documents(source)
