from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.files.atomic import atomic_write_json
from goldloop.formats.gold import Document, GoldError, Hit, read_gold, write_gold
from goldloop.kb import KB
from tests.conftest import LEGACY

TEXT = "IL-6 is activated by TNF and regulates STAT3."


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def doc(**hit: object) -> dict:
    base = {"a": 8, "b": 20, "entity_id": "PEL.000000"}
    return {"doc_id": "pmid:1", "text": TEXT, "ground_truth": [{**base, **hit}]}


def test_legacy_single_object_reads_as_one_document(kb: KB):
    gold = read_gold(LEGACY, kb)
    (document,) = gold.documents
    assert document.doc_id == "legacy:0"
    assert len(document.ground_truth) == 41
    assert {h.source for h in document.ground_truth} == {"legacy"}
    first = document.ground_truth[0]
    assert first.surface == document.text[first.a : first.b] == "secrete in"
    assert first.model_extra == {"itext": 0}
    # "expressed in" (RO.0002206) is the converse of "expresses": folded and counted.
    assert gold.stats.folded_to_canonical == 2
    assert gold.stats.not_in_kb["NEW"] == 4
    folded = [h for h in document.ground_truth if h.label_canonicalized]
    assert {h.entity_id for h in folded} == {"RO.0002292"}


def test_list_form_round_trips_unknown_fields(tmp_path):
    source = [
        {
            "doc_id": "pmid:1",
            "doc_uid": "1",
            "ids": {"pmid": "1", "doi": None},
            "text": TEXT,
            "role": "primary",
            "batch": 0,
            "p_incl": 0.125,
            "stratum": "y1-high-tail",
            "custom_doc_field": {"kept": [1, 2]},
            "ground_truth": [
                {
                    "a": 8, "b": 20, "surface": "activated by", "entity_id": "PEL.000000",
                    "label": "activated by", "direction": "inverse", "annotator": "gpt-5-mini@low",
                    "source": "llm", "surface_anchored": True, "label_canonicalized": True,
                    "confidence": 0.9, "subject_span": [21, 24], "object_span": [0, 4],
                    "custom_hit_field": None,
                }
            ],
        }
    ]  # fmt: skip
    path = write(tmp_path, source)
    out = tmp_path / "out.json"
    write_gold(out, read_gold(path).documents)
    assert json.loads(out.read_text()) == source


def test_flags_written_only_when_true_and_surface_always():
    hit = Hit(a=0, b=4, entity_id="X", surface="IL-6")
    assert hit.to_json() == {"a": 0, "b": 4, "surface": "IL-6", "entity_id": "X"}


def test_missing_surface_is_filled_from_text(tmp_path):
    gold = read_gold(write(tmp_path, [doc()]))
    assert gold.documents[0].ground_truth[0].surface == "activated by"


def test_non_canonical_id_is_folded_and_counted(kb: KB, tmp_path):
    regulated_by = kb.lookup("regulated by").entity_id
    gold = read_gold(write(tmp_path, [doc(entity_id=regulated_by, direction="forward")]), kb)
    hit = gold.documents[0].ground_truth[0]
    assert hit.entity_id == kb.lookup("regulates").entity_id
    assert hit.direction == "inverse" and hit.label_canonicalized
    assert gold.stats.folded_to_canonical == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([doc(a=20, b=8)], "hit 0: span [20, 8) must have b > a"),
        ([doc(b=999)], "lie inside the text"),
        ([doc(surface="activated")], "differs from text[8:20]"),
        ([doc(direction="sideways")], "hit 0: unknown direction 'sideways'"),
        ([doc(source="oracle")], "hit 0: source"),
        ([doc(), doc()], "doc_id 'pmid:1' repeats document 0"),
        ([{"doc_id": "pmid:1"}], "'text' must be a string"),
        ([{"doc_id": "pmid:1", "text": TEXT, "ground_truth": [{"a": 1, "b": 2}]}], "entity_id"),
        ("not a list", "expected a list of documents"),
        ([doc(a="8")], "hit 0: a: Input should be a valid integer (got '8')"),
        ([doc(b=True)], "hit 0: b: Input should be a valid integer (got True)"),
        ([doc(a=8.0)], "hit 0: a: Input should be a valid integer (got 8.0)"),
        (
            [{"text": TEXT, "ground_truth": []}],
            "document 0: 'doc_id' must be a string (it is missing)",
        ),
        ([{"doc_id": 7, "text": TEXT}], "document 0: 'doc_id' must be a string (it is int 7)"),
    ],
)
def test_invalid_gold_names_file_document_and_hit(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(GoldError) as err:
        read_gold(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_unreadable_json_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(GoldError, match="not valid JSON"):
        read_gold(path)


class Unencodable:
    """A value json cannot encode: serialisation fails part-way through the document list."""


def test_crash_mid_write_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "gold.json"
    write_gold(path, [Document(doc_id="d1", text="old")])
    before = path.read_bytes()
    with pytest.raises(TypeError):
        atomic_write_json(path, [{"doc_id": "d2"}, {"bad": Unencodable()}])
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_crash_inside_atomic_open_leaves_the_old_file_intact(tmp_path):
    from goldloop.files.atomic import atomic_open

    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(path) as handle:
        handle.write("half of the new")
        raise RuntimeError("killed mid-write")
    assert path.read_text() == "old"
    assert list(tmp_path.iterdir()) == [path]


def test_written_files_get_the_usual_mode(tmp_path):
    import os

    from goldloop.files.atomic import atomic_write_text

    path = tmp_path / "out.txt"
    atomic_write_text(path, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_byte_order_mark_is_read_past(tmp_path):
    path = tmp_path / "gold.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([doc()]).encode())
    assert read_gold(path).documents[0].doc_id == "pmid:1"


def test_jsonl_with_a_bom_and_cr_line_endings(tmp_path):
    from goldloop.files.jsonl import read_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r{"a": 2}\r')
    assert read_jsonl(path) == [(1, {"a": 1}), (2, {"a": 2})]
