"""The shared part: fields as strings, the type map, the surface check."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.interchange.spans import FormatError, from_strings, span_in, span_out, to_strings
from tests.conftest import Cli


def test_fields_survive_as_strings() -> None:
    fields = {"direction": "forward", "p": 0.5, "flag": True, "ids": ["a"], "x": None, "s": "true"}
    strings = to_strings(fields)
    assert strings["direction"] == "forward" and strings["s"] == "true"
    assert all(isinstance(v, str) for v in strings.values())
    assert from_strings("here", strings) == fields


def test_a_surface_that_is_not_the_text_is_refused_on_both_sides() -> None:
    document = Document(doc_id="d", text="😀ab", ground_truth=[])
    hit = Hit(a=1, b=3, surface="ab", entity_id="X")
    assert span_out(document, hit, 0, shift=1) == (2, 4)
    with pytest.raises(FormatError, match="hit 0: surface 'ba' differs"):
        span_out(document, Hit(a=1, b=3, surface="ba", entity_id="X"), 0)
    assert span_in("f: line 1", document.text, 2, 4, "ab", shift=1) == (1, 3)
    with pytest.raises(FormatError, match="f: line 1: the annotation's text 'a' differs"):
        span_in("f: line 1", document.text, 0, 1, "a")
    with pytest.raises(FormatError, match="lie inside the text"):
        span_in("f: line 1", document.text, 2, 9, None)


def test_a_type_map_naming_an_unknown_kb_id_names_file_and_line(
    tmp_path: Path, gold_file: Path, cli: Cli
) -> None:
    corpus, out = tmp_path / "gold.xml", tmp_path / "back.json"
    assert (
        cli("export", "--gold", gold_file, "--format", "bioc-xml", "--out", corpus).returncode == 0
    )
    type_map = tmp_path / "types.csv"
    type_map.write_text("type,entity_id\nPredicate,NOT.0001\n", encoding="utf-8")
    result = cli(
        "import", "--format", "bioc-xml", "--in", corpus, "--out", out, "--type-map", type_map
    )
    assert result.returncode == 2
    assert f"{type_map}: line 2: entity_id 'NOT.0001' is not in the KB" in result.err
    assert not out.exists()
