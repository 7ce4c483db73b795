"""PubTator: exact round trip (line breaks put back from the header), offsets over
title + " " + abstract, read by the bioc package, bad lines refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bioc import pubtator as bioc_pubtator

from goldloop.formats.gold import Document
from goldloop.interchange import export_gold, import_corpus
from goldloop.interchange.spans import FormatError
from goldloop.kb import KB
from tests.conftest import Cli
from tests.interchange.conftest import as_json


def test_round_trip_is_exact(tmp_path: Path, documents: list[Document], kb: KB) -> None:
    out = tmp_path / "gold.pubtator"
    report = export_gold("pubtator", documents, out)
    assert report.counts == {"line breaks written as spaces": 5}  # CR LF, CR, U+2028, LF
    gold, _ = import_corpus("pubtator", out, kb)
    assert as_json(gold.documents) == as_json(documents)


def test_the_file_holds_no_line_break_inside_a_text(
    tmp_path: Path, documents: list[Document]
) -> None:
    out = tmp_path / "gold.pubtator"
    export_gold("pubtator", documents, out)
    raw = out.read_text(encoding="utf-8")
    assert "\r" not in raw and "\u2028" not in raw
    assert "pmid:100|a|regulates 😀 TNF  binds\u00a0IL-6;" in raw


def test_the_bioc_package_reads_every_annotation_as_its_text(
    tmp_path: Path, documents: list[Document]
) -> None:
    out = tmp_path / "gold.pubtator"
    export_gold("pubtator", documents, out)
    read = [d for d in bioc_pubtator.loads(out.read_text(encoding="utf-8"))]
    with_hits = [d for d in documents if d.ground_truth]
    assert len(read) >= len(with_hits)
    by_id = {d.pmid: d for d in read}
    for document in with_hits:
        doc = by_id[document.doc_id]
        text = f"{doc.title} {doc.abstract}"
        for hit, annotation in zip(document.ground_truth, doc.annotations, strict=True):
            assert text[annotation.start : annotation.end] == annotation.text
            assert (annotation.start, annotation.end) == (hit.a + 1, hit.b + 1)
            assert annotation.id == hit.entity_id


def test_a_titled_document_reads_as_title_space_abstract(tmp_path: Path, kb: KB) -> None:
    relation = next(r for r in kb if r.is_canonical)
    source = tmp_path / "c.txt"
    source.write_text(
        f"1|t|A title.\n1|a|X binds Y.\n1\t11\t16\tbinds\tRelation\t{relation.entity_id}\n\n",
        encoding="utf-8",
    )
    gold, _ = import_corpus("pubtator", source, kb)
    (document,) = gold.documents
    assert (document.doc_id, document.text) == ("1", "A title. X binds Y.")
    assert [(h.a, h.b, h.surface) for h in document.ground_truth] == [(11, 16, "binds")]


def test_a_non_integer_offset_names_file_and_line(
    tmp_path: Path, documents: list[Document], cli: Cli
) -> None:
    source, out = tmp_path / "gold.pubtator", tmp_path / "back.json"
    export_gold("pubtator", documents, source)
    lines = source.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith("pmid:101\t"))
    lines[number] = lines[number].replace("\t1\t", "\tone\t", 1)
    source.write_text("\n".join(lines), encoding="utf-8")
    result = cli("import", "--format", "pubtator", "--in", source, "--out", out)
    assert result.returncode == 2
    assert f"{source}: line {number + 1}: offsets must be integers, got 'one'" in result.err
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_the_verification_counts_go_beside_the_output(
    tmp_path: Path, gold_file: Path, cli: Cli
) -> None:
    sidecar = gold_file.with_name(gold_file.name + ".verification.json")
    sidecar.write_text('{"accept": 7}', encoding="utf-8")
    out = tmp_path / "gold.pubtator"
    result = cli("export", "--gold", gold_file, "--format", "pubtator", "--out", out)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gold.pubtator.verification.json").read_text(encoding="utf-8").strip() == (
        '{\n  "accept": 7\n}'
    )


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ('{"line_breaks": {"YZ": [4]}}', "line_breaks key 'YZ' is not one line-break character"),
        ('{"line_breaks": {"\\n": [99]}}', "position 99 holds nothing"),
        ('{"hits": [[]]}', "hits must be a list of objects"),
        ("1", "must be a JSON object"),
    ],
)
def test_a_malformed_header_is_refused(tmp_path: Path, kb: KB, header: str, message: str) -> None:
    """Issue 44, item 4: a line break longer than one character would move every offset."""
    path = tmp_path / "bad.pubtator"
    path.write_text(f"#goldloop {header}\nd|t|\nd|a|IL-6 regulates TNF\nd\t6\t15\tregulates\n")
    with pytest.raises(FormatError, match=f"{path}: line 1: .*{re.escape(message)}"):
        import_corpus("pubtator", path, kb)
