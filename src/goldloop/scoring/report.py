"""Writing score results: one flat row per system and regime, JSON, CSV, a table, a PNG chart."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from goldloop.atomic import atomic_open, atomic_write_json, atomic_write_text

COLUMNS = (
    "system", "regime", "match_mode", "rows", "scored", "malformed",
    "n_gold", "n_predicted", "n_matched", "precision", "recall", "f1", "f1_low", "f1_high",
    "n_id_comparable", "entity_accuracy", "strict_f1", "partial_f1",
    "n_answered", "abstentions",
    "accuracy_overall", "accuracy_overall_low", "accuracy_overall_high",
    "accuracy_on_predicted", "coverage", "direction_accuracy", "wall_time_s",
)  # fmt: skip


def headline(result: dict[str, Any]) -> tuple[str, float | None, list[float | None]]:
    """The number a chart shows for a result: F1 end-to-end, accuracy_overall linking-only."""
    name = "f1" if result["regime"] == "end-to-end" else "accuracy_overall"
    value = (result.get("detection") or result.get("linking") or {}).get(name)
    return name, value, result.get("intervals", {}).get(name, [None, None])


def summary_row(result: dict[str, Any]) -> dict[str, Any]:
    """A flat row of ``COLUMNS`` (blank where a column does not apply to the regime)."""
    inputs = result["inputs"]
    row: dict[str, Any] = {
        "system": result["system"],
        "regime": result["regime"],
        "match_mode": result["match_mode"],
        "rows": inputs["rows"],
        "scored": inputs["scored"],
        "malformed": sum(inputs["malformed"].values()),
        "direction_accuracy": result["direction"]["accuracy"],
        "wall_time_s": result.get("wall_time_s"),
    }
    intervals = result.get("intervals", {})
    if "detection" in result:
        detection = result["detection"]
        row |= {
            key: detection[key]
            for key in ("n_gold", "n_predicted", "n_matched", "precision", "recall", "f1")
        }
        row |= {
            "n_id_comparable": detection["n_id_comparable"],
            "entity_accuracy": detection["entity_accuracy"],
        }
        overall = result["schemas"]["overall"]
        row |= {"strict_f1": overall["strict"]["f1"], "partial_f1": overall["partial"]["f1"]}
        row["f1_low"], row["f1_high"] = intervals.get("f1", [None, None])
    else:
        linking = result["linking"]
        keys = (
            "n_gold",
            "n_answered",
            "abstentions",
            "accuracy_overall",
            "accuracy_on_predicted",
            "coverage",
        )
        row |= {key: linking[key] for key in keys}
        row["accuracy_overall_low"], row["accuracy_overall_high"] = intervals.get(
            "accuracy_overall", [None, None]
        )
    return {column: row.get(column) for column in COLUMNS}


def seed_compatibility_line(result: dict[str, Any]) -> str | None:
    """The seed scorer's detection figures, labelled, where they differ from the headline's."""
    seed = result.get("detection_seed_compatible")
    if seed is None or seed["n_matched"] == result["detection"]["n_matched"]:
        return None
    figures = ", ".join(
        f"{key} {_cell(seed, key)}" for key in ("n_matched", "precision", "recall", "f1")
    )
    return (
        f"{result['system']}: seed-compatible detection (a matched span blocks its offsets in "
        f"every document; not the headline): {figures}"
    )


def write_reports(
    results: Sequence[dict[str, Any]], directory: Path, stem: str, meta: dict[str, Any]
) -> list[Path]:
    """``<stem>.json`` (full results), ``<stem>.csv`` (summary rows), ``<stem>.png`` (chart)."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path, csv_path, png_path = (directory / f"{stem}.{ext}" for ext in ("json", "csv", "png"))
    atomic_write_json(json_path, {**meta, "results": list(results)})
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(summary_row(result) for result in results)
    atomic_write_text(csv_path, buffer.getvalue())
    write_chart(results, png_path)
    return [json_path, csv_path, png_path]


def write_chart(results: Sequence[dict[str, Any]], path: Path) -> None:
    """Bars of each result's headline number with its bootstrap interval, when there is one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names, values, lows, highs = [], [], [], []
    for result in results:
        metric, value, (low, high) = headline(result)
        names.append(f"{result['system']}\n{result['regime']} · {metric}")
        values.append(value if value is not None else 0.0)
        lows.append(0.0 if value is None or low is None else max(0.0, value - low))
        highs.append(0.0 if value is None or high is None else max(0.0, high - value))
    figure, axes = plt.subplots(figsize=(max(4.0, 1.6 * len(names) + 1), 4.0))
    positions = range(len(names))
    axes.bar(positions, values, yerr=[lows, highs], capsize=6, color="#4C72B0")
    axes.set_xticks(list(positions), names, fontsize=8)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("score (95% bootstrap interval where computed)")
    axes.set_title("systems on the gold")
    for x, value in zip(positions, values, strict=True):
        axes.text(x, value + 0.02, f"{value:.3f}", ha="center", fontsize=8)
    figure.tight_layout()
    with atomic_open(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)


def results_tables(results: Sequence[dict[str, Any]], title: str) -> list[Table]:
    """One table per regime, one line per system, with the numbers an analyst reads first."""
    tables = []
    for regime, columns in _TABLE_COLUMNS.items():
        rows = [summary_row(r) for r in results if r["regime"] == regime]
        if not rows:
            continue
        table = Table(title=f"{title}: {regime}", title_justify="left")
        for header, _ in columns:
            table.add_column(header, justify="left" if header == "system" else "right")
        for row in rows:
            table.add_row(*(_cell(row, key) for _, key in columns))
        tables.append(table)
    return tables


_TABLE_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "end-to-end": (
        ("system", "system"), ("gold", "n_gold"), ("pred", "n_predicted"),
        ("match", "n_matched"), ("P", "precision"), ("R", "recall"), ("F1", "f1"),
        ("F1 95%", "f1_interval"), ("ent acc", "entity_accuracy"), ("strict F1", "strict_f1"),
        ("dir acc", "direction_accuracy"), ("skipped", "malformed"),
    ),
    "linking-only": (
        ("system", "system"), ("gold", "n_gold"), ("answered", "n_answered"),
        ("acc overall", "accuracy_overall"), ("95%", "accuracy_overall_interval"),
        ("acc on pred", "accuracy_on_predicted"), ("coverage", "coverage"),
        ("dir acc", "direction_accuracy"), ("skipped", "malformed"),
    ),
}  # fmt: skip


def _cell(row: dict[str, Any], key: str) -> str:
    if key.endswith("_interval"):
        base = key.removesuffix("_interval")
        low, high = row[f"{base}_low"], row[f"{base}_high"]
        return "" if low is None or high is None else f"{low:.3f}–{high:.3f}"
    value = row[key]
    if isinstance(value, float):
        return _fmt(value)
    return "–" if value is None else str(value)


def _fmt(value: float) -> str:
    return f"{value:.3f}"
