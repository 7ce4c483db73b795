"""The gold in the field's formats, both ways: BioC XML and JSON, PubTator, BRAT standoff, and
spaCy's ``DocBin`` (export only). Pure file code, beside :mod:`goldloop.formats.gold`.

One module per format; :mod:`goldloop.interchange.spans` holds what they share (offsets in each
format's unit and the surface check on both sides, fields as strings, the type map). Every
conversion checks ``text[a:b] == surface``: an export refuses a hit whose surface is not its
text, an import an annotation whose text is not the document's there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_json
from goldloop.files.beside import verification_path
from goldloop.heap import paused_gc
from goldloop.interchange.spans import FormatError, ImportCounts, TypeMap

if TYPE_CHECKING:
    from goldloop.formats.gold import Document, GoldFile, GoldStats
    from goldloop.kb import KB

# Every format module and the gold's pydantic models are imported when a conversion runs (BioC
# needs the bioc package, DocBin spaCy), so `goldloop export --help` lists the formats without
# them.

EXPORT_FORMATS = ("bioc-xml", "bioc-json", "pubtator", "brat", "spacy")
IMPORT_FORMATS = ("bioc-xml", "bioc-json", "pubtator", "brat")
# BRAT writes a folder; every other format one file.
FOLDER_FORMATS = ("brat",)


@dataclass
class ExportReport:
    documents: int
    hits: int
    # Per-format counts: spans not on token boundaries, line breaks written as spaces, ...
    counts: dict[str, int] = field(default_factory=dict)
    sidecar: Path | None = None


def export_gold(
    fmt: str, documents: list[Document], out: Path, verification: dict[str, Any] | None = None
) -> ExportReport:
    """Write ``documents`` to ``out`` in ``fmt``. The verification counts (a pulled gold's
    ``.verification.json``) go into BioC's collection infons, else beside ``out`` as
    ``<out>.verification.json``."""
    for document in documents:
        try:
            document.text.encode("utf-8")
        except UnicodeEncodeError as exc:
            # A gold file's JSON can hold an escaped lone surrogate; no format's file can.
            raise FormatError(
                f"document {document.doc_id}: its text holds a lone surrogate at {exc.start}"
            ) from None
    with paused_gc():
        counts, sidecar = _export(fmt, documents, out, verification)
    hits = sum(len(d.ground_truth) for d in documents)
    return ExportReport(len(documents), hits, counts, sidecar)


def _export(
    fmt: str, documents: list[Document], out: Path, verification: dict[str, Any] | None
) -> tuple[dict[str, int], Path | None]:
    from goldloop.interchange import brat, pubtator

    counts: dict[str, int] = {}
    sidecar = None
    if fmt in ("bioc-xml", "bioc-json"):
        from goldloop.interchange import bioc

        (bioc.write_xml if fmt == "bioc-xml" else bioc.write_json)(out, documents, verification)
    else:
        writers = {"pubtator": pubtator.write, "brat": brat.write, "spacy": _docbin_write}
        if fmt not in writers:
            raise FormatError(f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
        counts = writers[fmt](out, documents)
        if verification is not None:
            sidecar = verification_path(out)
            atomic_write_json(sidecar, verification)
    return counts, sidecar


def _docbin_write(out: Path, documents: list[Document]) -> dict[str, int]:
    from goldloop.interchange import docbin

    return docbin.write(out, documents)


def folder_files(fmt: str, documents: list[Document]) -> list[str]:
    """The names of the files an export in ``fmt`` puts in its folder (none: one file)."""
    from goldloop.interchange import brat

    return brat.folder_files(documents) if fmt == "brat" else []


def import_corpus(
    fmt: str, source: Path, kb: KB | None, type_map: TypeMap | None = None
) -> tuple[GoldFile, ImportCounts]:
    """Read a corpus in ``fmt`` as gold, validated and folded through ``kb`` like a gold file."""
    from goldloop.formats.gold import gold_from_data
    from goldloop.interchange import bioc, brat, pubtator

    readers = {
        "bioc-xml": bioc.read_xml,
        "bioc-json": bioc.read_json,
        "pubtator": pubtator.read,
        "brat": brat.read,
    }
    if fmt not in readers:
        raise FormatError(f"unknown import format {fmt!r} (known: {', '.join(IMPORT_FORMATS)})")
    counts = ImportCounts()
    with paused_gc():
        items = readers[fmt](source, type_map or TypeMap(), counts)
        return gold_from_data(source, items, kb), counts


@dataclass(frozen=True)
class ImportReport:
    """An import's ``<out>.report.json``: the format and source, the documents and hits read,
    annotations of unmapped types by type, what folding through the KB changed, ids not in the
    KB, then the format's own counts (annotations not imported, by reason)."""

    format: str
    source: str
    stats: GoldStats
    counts: ImportCounts

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": self.source,
            "documents": self.stats.documents,
            "hits": self.stats.hits,
            "unmapped_types": dict(self.counts.unmapped_types.most_common()),
            "folded_to_canonical": self.stats.folded_to_canonical,
            "direction_coerced": self.stats.direction_coerced,
            "not_in_kb": dict(self.stats.not_in_kb.most_common()),
            **dict(self.counts.by_format),
        }


def read_verification(path: Path) -> dict[str, Any] | None:
    """A gold file's ``.verification.json`` (written by ``pull``) when it is there."""
    sidecar = verification_path(path)
    if not sidecar.exists():
        return None
    try:
        value = jsonl.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FormatError(f"{sidecar}: not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise FormatError(f"{sidecar}: expected a JSON object")
    return value
