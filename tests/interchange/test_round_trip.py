"""Random texts and spans through every importable format and back: the gold is unchanged.

The alphabet holds what shifts offsets in other tools: astral characters, CR, LF, CRLF, U+2028,
NBSP, a ligature, a combining mark, a tab, '|' and '<&'."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldloop.formats.gold import Document, Hit
from goldloop.interchange import IMPORT_FORMATS, export_gold, import_corpus
from goldloop.interchange.spans import FormatError
from goldloop.kb import KB
from tests.interchange.conftest import as_json

ALPHABET = [
    *"ab Z.-",
    "😀",
    "𝔸",
    "\r",
    "\n",
    "\r\n",
    "\u2028",
    "\u00a0",
    "ﬁ",
    "e\u0301",
    "\t",
    "|",
    "<&",
]
BREAKS = "\r\n\u2028"


@st.composite
def documents(draw: st.DrawFn, entity_id: str) -> list[Document]:
    out = []
    for i in range(draw(st.integers(1, 3))):
        text = "".join(draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=40)))
        hits = []
        for _ in range(draw(st.integers(0, 4))):
            a = draw(st.integers(0, len(text) - 1))
            b = draw(st.integers(a + 1, len(text)))
            # BRAT has no form for a span beginning or ending with a line break (README).
            if text[a] in BREAKS or text[b - 1] in BREAKS:
                continue
            hits.append(Hit(a=a, b=b, surface=text[a:b], entity_id=entity_id, direction="na"))
        out.append(Document(doc_id=f"d{i}", text=text, p_incl=0.5, ground_truth=hits))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_format_gives_the_gold_back(kb: KB, data: st.DataObject) -> None:
    relation = next(r for r in kb if r.is_canonical and not r.is_symmetric)
    docs = data.draw(documents(relation.entity_id))
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in IMPORT_FORMATS:
            out = Path(tmp) / fmt
            export_gold(fmt, docs, out)
            gold, _ = import_corpus(fmt, out, kb)
            assert as_json(gold.documents) == as_json(docs), fmt


def test_xml_refuses_a_text_it_cannot_carry(tmp_path: Path, kb: KB) -> None:
    document = Document(doc_id="d", text="a\x0cb", ground_truth=[])
    with pytest.raises(FormatError, match="document d: its text holds U\\+000C at 1"):
        export_gold("bioc-xml", [document], tmp_path / "x.xml")
    assert not (tmp_path / "x.xml").exists()
    export_gold("bioc-json", [document], tmp_path / "x.json")
    gold, _ = import_corpus("bioc-json", tmp_path / "x.json", kb)
    assert gold.documents[0].text == "a\x0cb"
