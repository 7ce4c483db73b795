"""goldloop.scoring.report: the chart shows each slice with its interval."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.inputs import rows_to_predictions
from goldloop.scoring.regimes import score_system
from goldloop.scoring.report import chart_rows, write_chart

from .conftest import row


def test_chart_rows_carry_every_slice_with_its_interval(
    gold_file: Path, kb: KB, tmp_path: Path
) -> None:
    documents = read_gold(gold_file, kb).documents
    results = [
        score_system(
            documents,
            rows_to_predictions(name, None, "rows", rows, documents),
            kb=kb,
            regime=regime,
            bootstrap=200,
        )
        for name, rows in (
            ("one", [row(0, "directly regulates", "RO.0002578")]),
            ("two", [row(1, "activates", "PEL.000000"), row(0, "binds to", "PEL.000003")]),
        )
        for regime in ("end-to-end", "linking-only")
    ]
    e2e = [r for r in results if r.regime == "end-to-end"]
    rows = dict(chart_rows(e2e))
    assert list(rows)[:3] == ["all · f1", "all · precision", "all · recall"]
    anchored = rows["anchoring · anchored (n=2)"]
    assert anchored["one"] == (
        0.5,
        *(e2e[0].figures.slices["anchoring"]["anchored"].intervals or {})["recall"],
    )
    assert anchored["two"][0] == 0.5
    label = kb.get("PEL.000000").label  # type: ignore[union-attr]
    assert rows[f"relation · {label} (n=1)"]["two"][1:] == (1.0, 1.0)
    assert "role · double (n=2)" in rows and "role · primary (n=2)" in rows
    path = tmp_path / "chart.png"
    write_chart(results, path)
    with Image.open(path) as image:
        width = image.size[0]
    assert width > 1.5 * 7.5 * 100  # two panels, one per regime
