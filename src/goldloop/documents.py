"""The one documents reader: a sample dir, a documents JSONL, or a gold JSON file (or a Label
Studio JSON export, read as ``pull`` reads it). ``goldloop.sample.read_documents`` is this
function."""

from __future__ import annotations

from pathlib import Path

from goldloop.gold import Document
from goldloop.kb import KB
from goldloop.scoring.inputs import read_gold_documents


def read_documents(path: str | Path, kb: KB | None = None) -> list[Document]:
    """Documents in file order (a sample dir: manifest order, sampling fields filled).

    A ``.json`` file is gold (its hits checked against ``kb`` when given); anything else is a
    sample dir or a documents JSONL (``{doc_id, text, ...}`` per line).
    """
    source = Path(path)
    if source.suffix == ".json" and not source.is_dir():
        return read_gold_documents(source, kb)
    # Imported here: goldloop.sample re-exports this function, so a top-level import would cycle.
    from goldloop.sample.sampledir import read_documents as read_sample_documents

    return read_sample_documents(source)


load_documents = read_documents
