"""The package is pure file code: importing it loads no Label Studio, LLM or network module."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from goldloop.formats.gold import GoldStats
from goldloop.interchange import ImportReport
from goldloop.interchange.spans import ImportCounts

ABOVE = (
    "goldloop.studio",
    "goldloop.llm",
    "goldloop.backend",
    "label_studio_sdk",
    "openai",
    "anthropic",
)
# httpx is not listed: spaCy itself imports it.


def test_importing_interchange_loads_nothing_from_the_layers_above() -> None:
    code = (
        "import json, sys\n"
        "import goldloop.interchange\n"
        f"print(json.dumps(sorted({{m.split('.')[0] if not m.startswith('goldloop') else '.'.join(m.split('.')[:2]) for m in sys.modules}} & set({ABOVE!r}))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_the_import_report_keeps_its_keys_in_order_the_format_counts_last() -> None:
    stats = GoldStats(documents=2, hits=5, folded_to_canonical=1, not_in_kb=Counter({"X": 1}))
    counts = ImportCounts(
        unmapped_types=Counter({"Protein": 1, "Binding": 3}),
        by_format=Counter({"relations and events not imported": 2}),
    )
    data = ImportReport("brat", "in", stats, counts).to_dict()
    assert list(data) == [
        "format", "source", "documents", "hits", "unmapped_types", "folded_to_canonical",
        "direction_coerced", "not_in_kb", "relations and events not imported",
    ]  # fmt: skip
    assert data["unmapped_types"] == {"Binding": 3, "Protein": 1}
    assert list(data["unmapped_types"]) == ["Binding", "Protein"]  # most frequent first
    assert (data["documents"], data["hits"], data["not_in_kb"]) == (2, 5, {"X": 1})
