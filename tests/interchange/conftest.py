"""Documents every format must carry exactly: astral characters, CRLF and a lone CR, NBSP, a
ligature, a combining mark, a line separator, hits at offset 0 and at the very end, and every
hit and document field gold writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.formats.gold import Document, Hit, write_gold
from goldloop.kb import KB

TEXTS = [
    # A hit at offset 0, an astral emoji before others, CRLF inside a hit, NBSP, a ligature, a
    # combining mark, a hit ending the text.
    "regulates 😀 TNF\r\nbinds\u00a0IL-6; ﬁnds e\u0301x and then regulates",
    # Astral letters at offset 0, a lone CR, a line separator, a hit inside a token.
    "𝔸𝔹 inhibits\rX\u2028Y and it ends",
    # No hit at all.
    "Nothing here.\n",
]
SURFACES = [
    ["regulates", "binds", "TNF\r\nbinds", "ﬁnds", "e\u0301x", "regulates"],
    ["𝔸𝔹", "inhibits", "nds"],
    [],
]


def make_documents(kb: KB) -> list[Document]:
    relation = next(r for r in kb if r.is_canonical and not r.is_symmetric)
    documents = []
    for i, (text, surfaces) in enumerate(zip(TEXTS, SURFACES, strict=True)):
        hits = []
        for k, surface in enumerate(surfaces):
            # The last surface is found from the end: in the first text, the hit ending the text.
            a = text.rindex(surface) if k == len(surfaces) - 1 else text.index(surface)
            hits.append(
                Hit(
                    a=a,
                    b=a + len(surface),
                    surface=surface,
                    entity_id=relation.entity_id,
                    label=relation.label,
                    direction="forward" if k % 2 else "inverse",
                    source="llm",
                    annotator="gpt-5-mini",
                    verdict="accept",
                    surface_anchored=bool(k % 2),
                    confidence=0.75,
                    subject_span=(0, 2),
                    decided="agreed",
                    kept_by=["a@example.org", "b@example.org"],
                )
            )
        documents.append(
            Document(
                doc_id=f"pmid:{100 + i}",
                text=text,
                ids={"pmid": str(100 + i), "doi": f"10.1/x{i}"},
                role="primary" if i else "double",
                batch=i,
                p_incl=0.125,
                stratum="y0-low-tail",
                ground_truth=hits,
            )
        )
    return documents


@pytest.fixture
def documents(kb: KB) -> list[Document]:
    return make_documents(kb)


@pytest.fixture
def gold_file(tmp_path: Path, documents: list[Document]) -> Path:
    path = tmp_path / "gold.json"
    write_gold(path, documents)
    return path


def as_json(documents: list[Document]) -> list[dict[str, object]]:
    return [d.to_json() for d in documents]
