"""BioC XML and JSON: one collection, a document per gold document, one passage at offset 0 holding
the whole text, an annotation per hit.

Offsets are code points, as the ``bioc`` package reads them (its validator slices ``str``). The
package writes both forms; its XML writer (lxml) writes a carriage return as ``&#13;``, so a CRLF
text survives an XML parser, which turns a literal CR LF into LF. goldloop reads XML with lxml
itself, to name the line of a bad element (the package's reader names none); JSON with the
package's reader. Hit and document fields travel as infons (:func:`spans.to_strings`), the KB id
as the ``identifier`` infon, beside ``type``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bioc
from bioc import biocjson, biocxml
from bioc.biocjson import decoder as biocjson_decoder
from lxml import etree

from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_text
from goldloop.formats.gold import Document
from goldloop.interchange.spans import (
    MENTION_TYPE,
    FormatError,
    ImportCounts,
    TypeMap,
    document_fields,
    from_strings,
    hit_fields,
    settle_hit,
    span_in,
    span_out,
    to_strings,
)

# Characters XML 1.0 cannot carry, not even as a character reference.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Names a BioC object in an error: a line in XML, the document and annotation in JSON.
Where = Callable[[object], str]
# The most spaces a passage offset may put between two passages (a title and its abstract are
# one apart): a bigger gap is a damaged offset, and 10^12 spaces would exhaust the memory.
MAX_GAP = 100_000


def collection(
    documents: list[Document], infons: dict[str, Any] | None = None
) -> bioc.BioCCollection:
    """The gold as a BioC collection; ``infons`` (the verification counts) go on the collection."""
    out = bioc.BioCCollection()
    out.source = "goldloop"
    out.infons = to_strings(infons or {})
    for document in documents:
        doc = bioc.BioCDocument()
        doc.id = document.doc_id
        doc.infons = to_strings(document_fields(document))
        passage = bioc.BioCPassage()
        passage.offset = 0
        passage.text = document.text
        for k, hit in enumerate(document.ground_truth):
            a, b = span_out(document, hit, k)
            annotation = bioc.BioCAnnotation()
            annotation.id = f"T{k + 1}"
            annotation.infons = {
                "type": MENTION_TYPE,
                "identifier": hit.entity_id,
                **to_strings(hit_fields(hit)),
            }
            annotation.text = hit.surface
            annotation.add_location(bioc.BioCLocation(a, b - a))
            passage.add_annotation(annotation)
        doc.add_passage(passage)
        out.add_document(doc)
    return out


def write_xml(path: Path, documents: list[Document], infons: dict[str, Any] | None = None) -> None:
    """BioC XML; a text holding a character XML 1.0 cannot carry, even as a reference (most C0
    controls), is refused, naming the document: BioC JSON carries it."""
    for document in documents:
        bad = _NOT_XML.search(document.text)
        if bad:
            raise FormatError(
                f"document {document.doc_id}: its text holds U+{ord(bad.group()):04X} at "
                f"{bad.start()}, which XML cannot carry (BioC JSON can)"
            )
    try:
        text = biocxml.dumps(collection(documents, infons))
    except ValueError as exc:  # lxml's refusal of such a character in a field
        raise FormatError(f"{path}: {exc} (BioC JSON can carry it)") from None
    atomic_write_text(path, text)


def write_json(path: Path, documents: list[Document], infons: dict[str, Any] | None = None) -> None:
    atomic_write_text(path, biocjson.dumps(collection(documents, infons)))


def read_xml(path: Path, type_map: TypeMap, counts: ImportCounts) -> list[dict[str, Any]]:
    try:
        root = etree.parse(str(path), etree.XMLParser(huge_tree=True)).getroot()
    except (OSError, etree.XMLSyntaxError) as exc:
        raise FormatError(f"{path}: not BioC XML: {exc}") from None
    lines: dict[int, int] = {}
    parsed = _collection_from_xml(path, root, lines)
    return _gold_items(
        parsed, lambda obj: f"{path}: line {lines.get(id(obj), '?')}", type_map, counts
    )


def read_json(path: Path, type_map: TypeMap, counts: ImportCounts) -> list[dict[str, Any]]:
    try:
        # goldloop's one JSON reader (non-finite numbers, deep nesting refused), then the
        # package's own reading of the collection.
        parsed = biocjson_decoder.parse_collection(
            jsonl.loads(path.read_text(encoding="utf-8-sig"))
        )
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # json's errors name the line; the package's name a missing key or a bad value.
        raise FormatError(f"{path}: not BioC JSON: {exc}") from None
    names: dict[int, str] = {id(parsed): "collection"}
    for d, doc in enumerate(parsed.documents):
        names[id(doc)] = f"document {d} ({doc.id})"
        for p, passage in enumerate(doc.passages):
            names[id(passage)] = f"document {d} ({doc.id}): passage {p}"
            for ann in passage.annotations:
                names[id(ann)] = f"document {d} ({doc.id}): passage {p}: annotation {ann.id}"
            for s, sentence in enumerate(passage.sentences):
                names[id(sentence)] = f"document {d} ({doc.id}): passage {p}: sentence {s}"
                for ann in sentence.annotations:
                    names[id(ann)] = (
                        f"document {d} ({doc.id}): passage {p}: sentence {s}: annotation {ann.id}"
                    )
        for ann in doc.annotations:
            names[id(ann)] = f"document {d} ({doc.id}): annotation {ann.id}"

    def where(obj: object) -> str:
        return f"{path}: {names.get(id(obj), '?')}"

    _check_json_types(parsed, where)
    return _gold_items(parsed, where, type_map, counts)


def _check_json_types(parsed: bioc.BioCCollection, where: Where) -> None:
    """Values of the types BioC gives them (the package's JSON reader takes any): offsets and
    lengths whole numbers, infons strings, ids and texts strings."""

    def strings(obj: Any, value: Any, name: str) -> None:
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise FormatError(f"{where(obj)}: {name} must map strings to strings, got {value!r}")

    def number(obj: Any, value: Any, name: str) -> None:
        if type(value) is not int:  # a bool is an int to isinstance
            raise FormatError(f"{where(obj)}: {name} must be a whole number, got {value!r}")

    def string(obj: Any, value: Any, name: str) -> None:
        if value is not None and not isinstance(value, str):
            raise FormatError(f"{where(obj)}: {name} must be a string, got {value!r}")

    def annotations(anns: list[bioc.BioCAnnotation]) -> None:
        for ann in anns:
            string(ann, ann.id, "id")
            strings(ann, ann.infons, "infons")
            string(ann, ann.text, "text")
            for location in ann.locations:
                number(ann, location.offset, "location offset")
                number(ann, location.length, "location length")

    strings(parsed, parsed.infons, "infons")
    for doc in parsed.documents:
        string(doc, doc.id, "id")
        strings(doc, doc.infons, "infons")
        annotations(doc.annotations)
        for passage in doc.passages:
            strings(passage, passage.infons, "infons")
            number(passage, passage.offset, "passage offset")
            string(passage, passage.text, "text")
            annotations(passage.annotations)
            for sentence in passage.sentences:
                number(sentence, sentence.offset, "sentence offset")
                annotations(sentence.annotations)


def _gold_items(
    parsed: bioc.BioCCollection, where: Where, type_map: TypeMap, counts: ImportCounts
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for doc in parsed.documents:
        if not (doc.id or "").strip():
            raise FormatError(f"{where(doc)}: the document has no <id>: goldloop names each by it")
        text = _document_text(doc, where)
        hits = []
        # Offsets are the document's at every level: passages and sentences only group them.
        in_passages = [ann for passage in doc.passages for ann in passage.annotations]
        in_sentences = [
            ann for passage in doc.passages for s in passage.sentences for ann in s.annotations
        ]
        relations = len(doc.relations) + sum(
            len(p.relations) + sum(len(s.relations) for s in p.sentences) for p in doc.passages
        )
        if relations:
            counts.by_format["relations not imported"] += relations
        for ann in [*in_passages, *in_sentences, *doc.annotations]:
            if not ann.locations:
                raise FormatError(f"{where(ann)}: annotation {ann.id} has no location")
            first, last = ann.locations[0], ann.locations[-1]
            if len(ann.locations) > 1:
                # A discontinuous annotation becomes the span from its first to its last location.
                counts.by_format["discontinuous annotations joined"] += 1
                a, b = span_in(where(ann), text, first.offset, last.offset + last.length, None)
            else:
                a, b = span_in(
                    where(ann), text, first.offset, first.offset + first.length, ann.text
                )
            infons = dict(ann.infons)
            ids = [infons.pop("identifier")] if infons.get("identifier") else []
            kind = infons.pop("type", None)
            hit = settle_hit(
                a, b, text, ids, kind, from_strings(where(ann), infons), type_map, counts
            )
            if hit is not None:
                hits.append(hit)
        fields = from_strings(where(doc), dict(doc.infons))
        items.append({"doc_id": doc.id, **fields, "text": text, "ground_truth": hits})
        counts.documents += 1
    return items


def _document_text(doc: bioc.BioCDocument, where: Where) -> str:
    """The passages placed at their offsets, gaps filled with spaces (PubTator Central puts a
    title at 0 and the abstract after one space)."""
    text = ""
    for passage in doc.passages:
        if passage.offset < len(text):
            raise FormatError(
                f"{where(passage)}: passage offset {passage.offset} falls inside the text before "
                f"it (which ends at {len(text)})"
            )
        if passage.offset - len(text) > MAX_GAP:
            raise FormatError(
                f"{where(passage)}: passage offset {passage.offset} leaves a gap of "
                f"{passage.offset - len(text)} characters after the text before it (at most "
                f"{MAX_GAP})"
            )
        text += " " * (passage.offset - len(text)) + (passage.text or "")
    return text


def _collection_from_xml(path: Path, root: Any, lines: dict[int, int]) -> bioc.BioCCollection:
    def number(element: Any, value: str | None, name: str) -> int:
        try:
            return int(value or "")
        except ValueError:
            raise FormatError(
                f"{path}: line {element.sourceline}: {name} must be an integer, got {value!r}"
            ) from None

    def infons(element: Any) -> dict[str, str]:
        found = {}
        for child in element.findall("infon"):
            if child.get("key") is None:
                raise FormatError(f"{path}: line {child.sourceline}: an <infon> needs a key")
            found[child.get("key")] = child.text or ""
        return found

    def annotation(element: Any) -> bioc.BioCAnnotation:
        ann = bioc.BioCAnnotation()
        ann.id = element.get("id") or ""
        ann.infons = infons(element)
        ann.text = element.findtext("text")
        for location in element.findall("location"):
            ann.add_location(
                bioc.BioCLocation(
                    number(location, location.get("offset"), "location offset"),
                    number(location, location.get("length"), "location length"),
                )
            )
        lines[id(ann)] = element.sourceline
        return ann

    if root.tag != "collection":
        raise FormatError(f"{path}: line {root.sourceline}: not BioC XML: the root is <{root.tag}>")
    out = bioc.BioCCollection()
    out.infons = infons(root)
    for element in root.findall("document"):
        doc = bioc.BioCDocument()
        doc.id = element.findtext("id") or ""
        doc.infons = infons(element)
        lines[id(doc)] = element.sourceline
        for child in element.findall("passage"):
            passage = bioc.BioCPassage()
            offset = child.find("offset")
            passage.offset = number(
                child, None if offset is None else offset.text, "passage offset"
            )
            passage.text = child.findtext("text") or ""
            lines[id(passage)] = child.sourceline
            for ann in child.findall("annotation"):
                passage.add_annotation(annotation(ann))
            for sentence_element in child.findall("sentence"):
                sentence = bioc.BioCSentence()
                for ann in sentence_element.findall("annotation"):
                    sentence.add_annotation(annotation(ann))
                sentence.relations = _placeholders(sentence_element)
                passage.add_sentence(sentence)
            passage.relations = _placeholders(child)
            doc.add_passage(passage)
        for ann in element.findall("annotation"):
            doc.add_annotation(annotation(ann))
        doc.relations = _placeholders(element)
        out.add_document(doc)
    return out


def _placeholders(element: Any) -> list[bioc.BioCRelation]:
    """One empty relation per ``<relation>``: relations are counted, not imported."""
    return [bioc.BioCRelation() for _ in element.findall("relation")]
