"""BioC XML and JSON: exact round trip, read by the bioc package itself, bad files refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bioc import biocjson, biocxml
from bioc.validator import BioCValidator

from goldloop.formats.gold import Document, read_gold
from goldloop.interchange import export_gold, import_corpus
from goldloop.interchange.bioc import MAX_GAP
from goldloop.interchange.spans import FormatError
from goldloop.kb import KB
from tests.conftest import Cli
from tests.interchange.conftest import as_json

FORMATS = {"bioc-xml": "gold.xml", "bioc-json": "gold.bioc.json"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_is_exact(tmp_path: Path, documents: list[Document], kb: KB, fmt: str) -> None:
    out = tmp_path / FORMATS[fmt]
    export_gold(fmt, documents, out)
    gold, counts = import_corpus(fmt, out, kb)
    assert as_json(gold.documents) == as_json(documents)
    assert counts.hits == sum(len(d.ground_truth) for d in documents)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_bioc_package_reads_every_annotation_as_its_surface(
    tmp_path: Path, documents: list[Document], fmt: str
) -> None:
    out = tmp_path / FORMATS[fmt]
    export_gold(fmt, documents, out)
    with out.open("rb" if fmt == "bioc-xml" else "r") as handle:
        collection = (biocxml if fmt == "bioc-xml" else biocjson).load(handle)
    BioCValidator().validate(collection)  # its own check: text[offset:offset + length]
    for document, doc in zip(documents, collection.documents, strict=True):
        (passage,) = doc.passages
        assert passage.text == document.text  # CRs included
        for hit, annotation in zip(document.ground_truth, passage.annotations, strict=True):
            (location,) = annotation.locations
            text = passage.text[location.offset : location.offset + location.length]
            assert text == annotation.text == hit.surface
            assert annotation.infons["identifier"] == hit.entity_id
            assert annotation.infons["direction"] == hit.direction


def test_xml_writes_a_carriage_return_as_a_character_reference(
    tmp_path: Path, documents: list[Document]
) -> None:
    out = tmp_path / "gold.xml"
    export_gold("bioc-xml", documents, out)
    raw = out.read_bytes()
    assert b"\r" not in raw  # an XML parser would turn a literal CR LF into LF
    assert b"&#13;\n" in raw


def test_export_puts_the_verification_counts_in_collection_infons(
    tmp_path: Path, gold_file: Path, cli: Cli
) -> None:
    sidecar = gold_file.with_name(gold_file.name + ".verification.json")
    sidecar.write_text(json.dumps({"accept": 7, "fix": 2, "annotators": ["a@x"]}))
    out = tmp_path / "gold.xml"
    result = cli("export", "--gold", gold_file, "--format", "bioc-xml", "--out", out)
    assert result.returncode == 0, result.stderr
    with out.open("rb") as handle:
        infons = biocxml.load(handle).infons
    assert infons["accept"] == "7" and infons["annotators"] == '["a@x"]'
    assert not (tmp_path / "gold.xml.verification.json").exists()


def test_the_cli_round_trip_gives_the_gold_back(
    tmp_path: Path, gold_file: Path, kb: KB, cli: Cli
) -> None:
    out, back = tmp_path / "gold.bioc.json", tmp_path / "back.json"
    assert cli("export", "--gold", gold_file, "--format", "bioc-json", "--out", out).returncode == 0
    result = cli("import", "--format", "bioc-json", "--in", out, "--out", back)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "back.json.report.json").read_text())
    assert (report["documents"], report["hits"], report["unmapped_types"]) == (3, 9, {})
    assert as_json(read_gold(back, kb).documents) == as_json(read_gold(gold_file, kb).documents)


def test_a_passage_offset_that_does_not_match_its_text_names_file_and_line(
    tmp_path: Path, documents: list[Document], cli: Cli
) -> None:
    source, out = tmp_path / "gold.xml", tmp_path / "back.json"
    export_gold("bioc-xml", documents, source)
    lines = source.read_text(encoding="utf-8").split("\n")
    first = next(i for i, line in enumerate(lines) if "<offset>0</offset>" in line)
    lines[first] = lines[first].replace(">0<", ">4<")
    source.write_text("\n".join(lines), encoding="utf-8")
    annotation = next(i for i, line in enumerate(lines) if "<annotation" in line) + 1
    result = cli("import", "--format", "bioc-xml", "--in", source, "--out", out)
    assert result.returncode == 2
    assert f"{source}: line {annotation}:" in result.err
    assert "differs from the document's text" in result.err
    assert "Traceback" not in result.stderr
    assert not out.exists() and not (tmp_path / "back.json.report.json").exists()


def test_a_non_integer_location_names_the_line(tmp_path: Path, cli: Cli) -> None:
    source = tmp_path / "c.xml"
    source.write_text(
        "<?xml version='1.0' encoding='utf-8'?>\n<collection><source/><date/><key/>\n"
        "<document><id>d</id><passage><offset>0</offset><text>abc</text>\n"
        '<annotation id="1"><infon key="identifier">X</infon>\n'
        '<location offset="a" length="1"/><text>a</text></annotation>\n'
        "</passage></document></collection>\n",
        encoding="utf-8",
    )
    result = cli("import", "--format", "bioc-xml", "--in", source, "--out", tmp_path / "o.json")
    assert result.returncode == 2
    assert f"{source}: line 5: location offset must be an integer" in result.err
    assert not (tmp_path / "o.json").exists()


def test_passages_are_placed_at_their_offsets(tmp_path: Path, kb: KB) -> None:
    # PubTator Central's BioC: a title at 0, the abstract one space after it.
    relation = next(r for r in kb if r.is_canonical)
    data = {
        "source": "", "date": "", "key": "", "infons": {},
        "documents": [{
            "id": "1", "infons": {}, "relations": [], "annotations": [],
            "passages": [
                {"offset": 0, "text": "A title.", "infons": {"type": "title"}, "sentences": [], "annotations": [], "relations": []},
                {"offset": 9, "text": "X binds Y.", "infons": {}, "sentences": [], "relations": [],
                 "annotations": [{"id": "1", "text": "binds", "infons": {"identifier": relation.entity_id},
                                  "locations": [{"offset": 11, "length": 5}]}]},
            ],
        }],
    }  # fmt: skip
    source = tmp_path / "c.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    gold, _ = import_corpus("bioc-json", source, kb)
    (document,) = gold.documents
    assert document.text == "A title. X binds Y."
    assert [(h.a, h.b, h.surface) for h in document.ground_truth] == [(11, 16, "binds")]


def test_sentence_annotations_are_imported_and_relations_counted(tmp_path: Path, kb: KB) -> None:
    relation = next(r for r in kb if r.is_canonical)
    source = tmp_path / "c.xml"
    source.write_text(
        "<?xml version='1.0' encoding='utf-8'?>\n<collection><source/><date/><key/>\n"
        "<document><id>d</id><passage><offset>0</offset><text>X binds Y.</text>\n"
        "<sentence><offset>0</offset><text>X binds Y.</text>\n"
        f'<annotation id="1"><infon key="identifier">{relation.entity_id}</infon>'
        '<location offset="2" length="5"/><text>binds</text></annotation>\n'
        '<relation id="R1"><node refid="1" role="trigger"/></relation>\n'
        "</sentence></passage></document></collection>\n",
        encoding="utf-8",
    )
    gold, counts = import_corpus("bioc-xml", source, kb)
    assert [(h.a, h.b, h.surface) for h in gold.documents[0].ground_truth] == [(2, 7, "binds")]
    assert counts.by_format["relations not imported"] == 1


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (("passages", 0, "annotations", 0, "locations", 0, "offset"), "5", "location offset"),
        (("passages", 0, "annotations", 0, "locations", 0, "length"), 9.5, "location length"),
        (("passages", 0, "annotations", 0, "infons"), {"type": 1}, "infons must map strings"),
        (("infons",), {"role": ["primary"]}, "infons must map strings"),
        (("passages", 0, "offset"), MAX_GAP + 1, "leaves a gap"),
    ],
)
def test_bioc_json_values_of_another_type_or_size_are_refused(
    tmp_path: Path, documents: list[Document], kb: KB, where: tuple[object, ...], value: object,
    message: str,
) -> None:  # fmt: skip
    """Issue 44, item 5: the bioc package's reader takes any value; goldloop names the bad one."""
    path = tmp_path / "gold.bioc.json"
    export_gold("bioc-json", documents[:1], path)
    data = json.loads(path.read_text())
    node = data["documents"][0]
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match=f"{path}: document 0 .*{message}"):
        import_corpus("bioc-json", path, kb)
