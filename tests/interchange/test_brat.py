"""BRAT standoff: exact round trip, read by a minimal standoff parser, foreign corpora through a
type map, bad files refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.formats.gold import Document, read_gold
from goldloop.interchange import export_gold, import_corpus
from goldloop.interchange.brat import SIDE_FILE, file_names
from goldloop.interchange.spans import FormatError
from goldloop.kb import KB
from tests.conftest import Cli
from tests.interchange.conftest import as_json


def standoff(ann: str) -> dict[str, tuple[str, list[tuple[int, int]], str]]:
    """A minimal reader of text-bound lines: id → (type, fragments, text)."""
    spans = {}
    for line in ann.splitlines():
        if line.startswith("T"):
            key, head, text = line.split("\t")
            kind, offsets = head.split(" ", 1)
            fragments = [tuple(map(int, part.split())) for part in offsets.split(";")]
            spans[key] = (kind, [(a, b) for a, b in fragments], text)
    return spans


def test_round_trip_is_exact(tmp_path: Path, documents: list[Document], kb: KB) -> None:
    export_gold("brat", documents, tmp_path / "brat")
    gold, counts = import_corpus("brat", tmp_path / "brat", kb)
    assert as_json(gold.documents) == as_json(documents)
    assert counts.by_format["fragmented spans joined"] == 1  # the hit across CRLF


def test_a_standoff_parser_reads_every_span_as_its_surface(
    tmp_path: Path, documents: list[Document]
) -> None:
    folder = tmp_path / "brat"
    export_gold("brat", documents, folder)
    names = json.loads((folder / SIDE_FILE).read_text())["documents"]
    for name, document in zip(names, documents, strict=True):
        raw = (folder / f"{name}.txt").read_bytes()
        assert raw == document.text.encode("utf-8")  # CRLF and CR as written
        text = raw.decode("utf-8")
        spans = standoff((folder / f"{name}.ann").read_text(encoding="utf-8"))
        assert len(spans) == len(document.ground_truth)
        for hit, (kind, fragments, surface) in zip(
            document.ground_truth, spans.values(), strict=True
        ):
            assert kind == "Predicate"
            assert " ".join(text[a:b] for a, b in fragments) == surface
            assert text[fragments[0][0] : fragments[-1][1]] == hit.surface


def test_a_foreign_corpus_maps_its_types_and_reports_the_rest(
    tmp_path: Path, kb: KB, cli: Cli
) -> None:
    relation = next(r for r in kb if r.is_canonical and not r.is_symmetric)
    folder = tmp_path / "bionlp"
    folder.mkdir()
    text = "IL-6 is upregulated by TNF.\nIt binds X."
    (folder / "PMID-1.txt").write_text(text, encoding="utf-8", newline="")
    (folder / "PMID-1.ann").write_text(
        "T1\tProtein 0 4\tIL-6\n"
        "T2\tPositive_regulation 8 19\tupregulated\n"
        "T3\tBinding 31 36\tbinds\n"
        "E1\tPositive_regulation:T2 Theme:T1\n",
        encoding="utf-8",
    )
    type_map = tmp_path / "types.csv"
    type_map.write_text(f"type,entity_id\nPositive_regulation,{relation.entity_id}\n")
    out = tmp_path / "gold.json"
    result = cli("import", "--format", "brat", "--in", folder, "--out", out, "--type-map", type_map)
    assert result.returncode == 0, result.stderr
    (document,) = read_gold(out, kb).documents
    assert document.doc_id == "PMID-1"
    assert [(h.surface, h.entity_id) for h in document.ground_truth] == [
        ("upregulated", relation.entity_id)
    ]
    report = json.loads((tmp_path / "gold.json.report.json").read_text())
    assert report["unmapped_types"] == {"Protein": 1, "Binding": 1}
    assert report["relations and events not imported"] == 1
    assert "unmapped types: Protein (1), Binding (1)" in result.out


def test_offsets_that_disagree_with_the_txt_name_file_and_line(
    tmp_path: Path, documents: list[Document], cli: Cli
) -> None:
    folder, out = tmp_path / "brat", tmp_path / "back.json"
    export_gold("brat", documents, folder)
    ann = folder / "pmid_101.ann"
    lines = ann.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith("T2\t"))
    lines[number] = lines[number].replace("Predicate 3 ", "Predicate 4 ")
    ann.write_text("\n".join(lines), encoding="utf-8")
    result = cli("import", "--format", "brat", "--in", folder, "--out", out)
    assert result.returncode == 2
    assert f"{ann}: line {number + 1}: the annotation's text 'inhibits' differs" in result.err
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_export_refuses_a_file_where_the_folder_goes(
    tmp_path: Path, gold_file: Path, cli: Cli
) -> None:
    target = tmp_path / "brat"
    target.write_text("x")
    result = cli("export", "--gold", gold_file, "--format", "brat", "--out", target)
    assert result.returncode == 2
    assert f"--out {target}: is a file, not a folder" in result.err


def test_file_names_are_unique_by_construction(tmp_path: Path, kb: KB) -> None:
    """Issue 44, item 2: ids that clean to one name, or to another's suffixed name."""
    ids = ["a_b", "a_b.2", "a:b", "a/b", "A_B", "a_b_2"]
    documents = [Document(doc_id=i, text="x", ground_truth=[]) for i in ids]
    names = file_names(documents)
    assert names == ["a_b", "a_b_2", "a_b.2", "a_b.3", "A_B.4", "a_b_2.2"]
    assert len({n.casefold() for n in names}) == len(ids)
    export_gold("brat", documents, tmp_path / "brat")
    gold, _ = import_corpus("brat", tmp_path / "brat", kb)
    assert [d.doc_id for d in gold.documents] == ids


def test_a_file_outside_the_corpus_is_refused(tmp_path: Path, kb: KB) -> None:
    """Issue 44, item 6: by a name in the side file, or by a link."""
    folder, outside = tmp_path / "brat", tmp_path / "outside"
    for each in (folder, outside):
        each.mkdir()
        (each / "s.txt").write_text("x")
        (each / "s.ann").write_text("")
    (folder / SIDE_FILE).write_text(json.dumps({"documents": {"../outside/s": {}}}))
    with pytest.raises(FormatError, match=r"outside/s\.txt: lies outside the corpus folder"):
        import_corpus("brat", folder, kb)
    (folder / SIDE_FILE).unlink()
    (folder / "s.ann").unlink()
    (folder / "s.ann").symlink_to(outside / "s.ann")
    with pytest.raises(FormatError, match=r"brat/s\.ann: lies outside the corpus folder"):
        import_corpus("brat", folder, kb)
