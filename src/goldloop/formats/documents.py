"""The one documents reader: a sample dir, a documents JSONL, or a gold JSON file (or a Label
Studio JSON export, read as ``pull`` reads it). ``goldloop.sample.read_documents`` is this
function."""

from __future__ import annotations

from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document, read_gold
from goldloop.formats.labelstudio.tasks import read_export
from goldloop.formats.labelstudio.verify import verify
from goldloop.formats.sampledir import MANIFEST, TEXTS
from goldloop.formats.sampledir import read_documents as read_sample_documents
from goldloop.kb import KB


class DocumentsError(GoldloopError):
    """Documents that cannot be used; the message names the file and document."""


def read_documents(path: str | Path, kb: KB | None = None) -> list[Document]:
    """Documents in file order (a sample dir: manifest order, sampling fields filled).

    A ``.json`` file is gold (its hits checked against ``kb`` when given); anything else is a
    sample dir or a documents JSONL (``{doc_id, text, ...}`` per line). A document whose text is
    empty (or only whitespace) is refused: there is nothing to annotate, verify or score in it.
    """
    source = Path(path)
    if source.suffix == ".json" and not source.is_dir():
        documents = read_gold_documents(source, kb)
    else:
        documents = read_sample_documents(source)
    blank = next((d for d in documents if not d.text.strip()), None)
    if blank is not None:
        where = input_files(source)[-1]
        raise DocumentsError(f"{where}: document {blank.doc_id!r}: the text is empty")
    return documents


def input_files(path: str | Path) -> list[Path]:
    """The files :func:`read_documents` reads for ``path`` (a sample dir's manifest and texts)."""
    source = Path(path)
    if not source.is_dir():
        return [source]
    return [source / MANIFEST, source / TEXTS]


def read_gold_documents(path: str | Path, kb: KB | None) -> list[Document]:
    """Documents from a gold file (any form :func:`goldloop.formats.gold.read_gold` reads) or from a
    Label Studio JSON export, verified as ``goldloop pull`` verifies it."""
    tasks = read_export(Path(path))
    if tasks is None:
        return read_gold(path, kb).documents
    if kb is None:
        raise DocumentsError(f"{path}: reading a Label Studio export needs the KB")
    return verify(tasks, kb).documents
