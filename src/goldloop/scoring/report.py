"""Writing score results: one flat row per system and regime, JSON, CSV, a table, a PNG chart."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from goldloop.files.atomic import (
    atomic_open,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from goldloop.files.csvfile import table_text
from goldloop.scoring.score_result import EndToEndFigures, ScoreResult

COLUMNS = (
    "system", "regime", "match_mode", "rows", "scored", "malformed",
    "n_gold", "n_predicted", "n_matched", "precision", "recall", "f1", "f1_low", "f1_high",
    "n_id_comparable", "entity_accuracy", "strict_f1", "partial_f1",
    "n_answered", "abstentions",
    "accuracy_overall", "accuracy_overall_low", "accuracy_overall_high",
    "accuracy_on_predicted", "coverage", "direction_accuracy", "wall_time_s",
    "corpus_precision", "corpus_recall", "corpus_f1", "corpus_f1_low", "corpus_f1_high",
    "corpus_entity_accuracy", "corpus_accuracy_overall", "corpus_accuracy_overall_low",
    "corpus_accuracy_overall_high", "corpus_coverage", "population_docs",
)  # fmt: skip


# What the chart shows per regime: the overall figures, then one metric per slice.
_CHART: dict[str, tuple[tuple[str, ...], str]] = {
    "end-to-end": (("f1", "precision", "recall"), "recall"),
    "linking-only": (("accuracy_overall", "coverage"), "accuracy_overall"),
}
CHART_RELATIONS = 10  # relations shown in the chart: those with the most gold mentions
_Point = tuple[float, float | None, float | None]  # value, low, high


def _overall(result: ScoreResult, name: str) -> float | None:
    """The overall figure ``name`` of the regime's headline section (detection, linking)."""
    figures = result.figures
    section = figures.detection if isinstance(figures, EndToEndFigures) else figures.linking
    value: float | None = getattr(section, name)
    return value


def chart_rows(results: Sequence[ScoreResult]) -> list[tuple[str, dict[str, _Point]]]:
    """``(row label, {system: (value, low, high)})`` for results of one regime: the overall
    figures, then the slice metric for anchoring, role and the most frequent relations."""
    if not results:
        return []
    overall, metric = _CHART[results[0].regime]
    rows: list[tuple[str, dict[str, _Point]]] = []
    for name in overall:
        points = {}
        for result in results:
            value = _overall(result, name)
            if value is not None:
                points[result.system] = (
                    value,
                    *result.figures.intervals.get(name, [None, None]),
                )
        rows.append((f"all · {name}", points))
    # The corpus (design-weighted) figures right below the sample's, when the gold has a design.
    for name in overall:
        points = {}
        for result in results:
            corpus = result.corpus
            if corpus is not None and corpus.values[name] is not None:
                points[result.system] = (
                    corpus.values[name],
                    *corpus.intervals.get(name, [None, None]),
                )
        if points:
            rows.append((f"corpus · {name}", points))
    slices = results[0].figures.slices  # gold-side: the same slices and sizes for every system
    relations = sorted(slices["relation"], key=lambda k: (-slices["relation"][k].n_gold, k))
    for kind, keys in (
        ("anchoring", sorted(slices["anchoring"])),
        ("role", sorted(slices["role"])),
        ("relation", relations[:CHART_RELATIONS]),
    ):
        for key in keys:
            entry = slices[kind][key]
            points = {}
            for result in results:
                mine = result.figures.slices[kind][key]
                share = mine.shares()[metric]
                if share is not None:
                    low, high = (mine.intervals or {}).get(metric, [None, None])
                    points[result.system] = (share, low, high)
            label = key if entry.label is None else entry.label
            rows.append((f"{kind} · {label} (n={entry.n_gold})", points))
    return rows


def summary_row(result: ScoreResult) -> dict[str, Any]:
    """A flat row of ``COLUMNS`` (blank where a column does not apply to the regime)."""
    inputs, figures = result.inputs, result.figures
    row: dict[str, Any] = {
        "system": result.system,
        "regime": result.regime,
        "match_mode": result.match_mode,
        "rows": inputs.rows,
        "scored": inputs.scored,
        "malformed": sum(inputs.malformed.values()),
        "direction_accuracy": figures.direction.accuracy,
        "wall_time_s": result.wall_time_s,
    }
    intervals = figures.intervals
    corpus = result.corpus
    if corpus is not None:
        row["population_docs"] = corpus.population_docs
        for name in _CORPUS_FIGURES:
            if name in corpus.values:
                row[f"corpus_{name}"] = corpus.values[name]
        for name in ("f1", "accuracy_overall"):
            if name in corpus.values:
                low, high = corpus.intervals.get(name, [None, None])
                row[f"corpus_{name}_low"], row[f"corpus_{name}_high"] = low, high
    if isinstance(figures, EndToEndFigures):
        detection = figures.detection
        row |= {
            "n_gold": detection.n_gold,
            "n_predicted": detection.n_predicted,
            "n_matched": detection.n_matched,
            "precision": detection.precision,
            "recall": detection.recall,
            "f1": detection.f1,
            "n_id_comparable": detection.n_id_comparable,
            "entity_accuracy": detection.entity_accuracy,
        }
        overall = figures.schemas["overall"]
        row |= {"strict_f1": overall["strict"]["f1"], "partial_f1": overall["partial"]["f1"]}
        row["f1_low"], row["f1_high"] = intervals.get("f1", [None, None])
    else:
        linking = figures.linking
        row |= {
            "n_gold": linking.n_gold,
            "n_answered": linking.n_answered,
            "abstentions": linking.abstentions,
            "accuracy_overall": linking.accuracy_overall,
            "accuracy_on_predicted": linking.accuracy_on_predicted,
            "coverage": linking.coverage,
        }
        row["accuracy_overall_low"], row["accuracy_overall_high"] = intervals.get(
            "accuracy_overall", [None, None]
        )
    return {column: row.get(column) for column in COLUMNS}


_CORPUS_FIGURES = (
    "precision", "recall", "f1", "entity_accuracy", "accuracy_overall", "coverage",
)  # fmt: skip


def seed_compatibility_line(result: ScoreResult) -> str | None:
    """The seed scorer's detection figures, labelled, where they differ from the headline's."""
    figures = result.figures
    if not isinstance(figures, EndToEndFigures):
        return None
    seed = figures.seed_detection
    if seed.n_matched == figures.detection.n_matched:
        return None
    shown = ", ".join(
        f"{label} {_text(value)}"
        for label, value in (
            ("matched", seed.n_matched),
            ("P", seed.precision),
            ("R", seed.recall),
            ("F1", seed.f1),
        )
    )
    return f"{result.system}: seed-compatible detection (not the headline): {shown}"


def report_paths(directory: Path, stem: str) -> tuple[Path, Path, Path]:
    """Where :func:`write_reports` writes: ``<stem>.json``, ``<stem>.csv``, ``<stem>.png``."""
    json_path, csv_path, png_path = (directory / f"{stem}.{ext}" for ext in ("json", "csv", "png"))
    return json_path, csv_path, png_path


NOTHING_ANNOTATED = "nothing annotated yet"


def write_reports(
    results: Sequence[ScoreResult], directory: Path, stem: str, meta: dict[str, Any]
) -> list[Path]:
    """``<stem>.json`` (full results), ``<stem>.csv`` (summary rows), ``<stem>.png`` (chart)."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path, csv_path, png_path = report_paths(directory, stem)
    atomic_write_json(json_path, {**meta, "results": [result.to_dict() for result in results]})
    summary = table_text(COLUMNS, (summary_row(r) for r in results), spreadsheet=False)
    atomic_write_text(csv_path, summary)
    write_chart(results, png_path)
    return [json_path, csv_path, png_path]


def _panels(
    results: Sequence[ScoreResult],
) -> list[tuple[str, list[tuple[str, dict[str, _Point]]]]]:
    regimes = [r for r in _CHART if any(result.regime == r for result in results)]
    return [
        (regime, chart_rows([result for result in results if result.regime == regime]))
        for regime in regimes
    ]


def nothing_to_chart(results: Sequence[ScoreResult]) -> bool:
    """No figure has a value (a gold without mentions, before anyone annotated)."""
    return not any(points for _, rows in _panels(results) for _, points in rows)


def write_placeholder_png(path: Path, message: str) -> None:
    """A chart with nothing to draw says so in words: no empty axes on a made-up scale."""
    atomic_write_bytes(path, placeholder_png(message))


def placeholder_png(message: str) -> bytes:
    """:func:`write_placeholder_png`'s chart as bytes, for a caller writing it with others."""
    import matplotlib  # matplotlib loads only when a chart is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(6, 1.2))
    figure.text(0.5, 0.5, message, ha="center", va="center", fontsize=11)
    chart = io.BytesIO()
    figure.savefig(chart, format="png", dpi=100)
    plt.close(figure)
    return chart.getvalue()


def write_chart(results: Sequence[ScoreResult], path: Path) -> None:
    """One panel per regime: each system's overall figures and its metric per slice (recall
    end-to-end, accuracy_overall linking-only), with 95% bootstrap intervals when computed."""
    if nothing_to_chart(results):
        write_placeholder_png(path, f"{NOTHING_ANNOTATED}: the gold holds no mentions")
        return
    import matplotlib  # matplotlib loads only when a chart is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = list(dict.fromkeys(result.system for result in results))
    panels = _panels(results)
    n_rows = max((len(rows) for _, rows in panels), default=1)
    height = 1.6 + n_rows * max(0.3, 0.16 * len(systems))
    figure, axes = plt.subplots(
        1, max(1, len(panels)), figsize=(7.5 * max(1, len(panels)), height), squeeze=False
    )
    step = 0.8 / max(1, len(systems))
    labelled: set[str] = set()  # one legend entry per system across panels
    for ax, (regime, rows) in zip(axes[0], panels, strict=False):
        for k, system in enumerate(systems):
            offset = (k - (len(systems) - 1) / 2) * step
            for y, (_, points) in enumerate(rows):
                if system not in points:
                    continue
                value, low, high = points[system]
                error = None
                if low is not None and high is not None:
                    error = [[max(0.0, value - low)], [max(0.0, high - value)]]
                ax.errorbar(
                    value, y + offset, xerr=error, fmt="o", color=f"C{k}", capsize=3,
                    markersize=4, label=None if system in labelled else system,
                )  # fmt: skip
                labelled.add(system)
                right = value if high is None else max(value, high)
                ax.text(right + 0.01, y + offset, f"{value:.2f}", va="center", fontsize=7)
        labels = [label for label, _ in rows]
        ax.set_yticks(range(len(rows)), labels, fontsize=8)
        for y in range(1, len(rows)):
            if labels[y].split(" · ")[0] != labels[y - 1].split(" · ")[0]:
                ax.axhline(y - 0.5, color="0.8", linewidth=0.8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, 1.1)
        ax.grid(axis="x", color="0.92")
        first = next(r for r in results if r.regime == regime)
        n_relations = len(first.figures.slices["relation"])
        if n_relations > CHART_RELATIONS:
            ax.set_xlabel(
                f"relations: the {CHART_RELATIONS} of {n_relations} with the most gold mentions",
                fontsize=8,
            )
        metric = _CHART[regime][1]
        intervals = any(r.figures.intervals for r in results if r.regime == regime)
        corpus = any(r.corpus is not None for r in results if r.regime == regime)
        ax.set_title(
            f"{regime}: {metric} per slice"
            + (" (95% bootstrap intervals over documents)" if intervals else " (no intervals)")
            + ("\ncorpus rows: weighted by 1/p_incl, stratified bootstrap" if corpus else ""),
            fontsize=9,
        )
    if systems:
        figure.legend(loc="upper right", fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0, 0.92 if systems else 1, 1))
    with atomic_open(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)


class ResultsTable(NamedTuple):
    """A table's title, column heads, rows of printed cells, and a line saying what they mean."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    legend: str


def results_tables(results: Sequence[ScoreResult], title: str) -> list[ResultsTable]:
    """One table per regime, one line per system, with the numbers an analyst reads first."""
    tables = []
    for regime, columns in _TABLE_COLUMNS.items():
        mine = [r for r in results if r.regime == regime]
        rows = [summary_row(r) | _ppi_cells(r, regime) for r in mine]
        if not rows:
            continue
        legend = [_LEGENDS[regime], _INTERVAL_LEGEND[regime]]
        ppi = _PPI_COLUMNS[regime] if any(r.corpus_ppi is not None for r in mine) else ()
        if any(r.corpus is not None for r in mine):
            at = [key for _, key in columns].index(_CORPUS_AFTER[regime]) + 1
            columns = (*columns[:at], *_CORPUS_COLUMNS[regime], *ppi, *columns[at:])
            legend.append(_CORPUS_LEGEND[regime])
            if ppi:
                legend.append(_PPI_LEGEND)
        cells = [[_cell(row, key) for _, key in columns] for row in rows]
        if any("–" in row for row in cells):
            legend.append("–: undefined (nothing to count, e.g. ent acc with no comparable id)")
        tables.append(
            ResultsTable(
                f"{title}: {regime}", [header for header, _ in columns], cells, "; ".join(legend)
            )
        )
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
_LEGENDS = {
    "end-to-end": (
        "gold / pred: mentions in the gold / the system; match: predicted spans matched to a gold "
        "span; P: match / pred; R: match / gold; F1: their harmonic mean; ent acc: matched "
        "spans with the gold's "
        "relation (folded); strict F1: span and relation both exact (nervaluate strict); dir "
        "acc: matched spans with the gold's direction; skipped: rows not scored (malformed)"
    ),
    "linking-only": (
        "gold: gold spans asked about; answered: those the system gave an id; acc overall: right "
        "ids / gold; acc on pred: right ids / answered; coverage: answered / gold; dir acc: "
        "right directions; skipped: rows not scored (malformed)"
    ),
}


_INTERVAL_LEGEND = {
    "end-to-end": "F1 95%: the 95% interval of the sample F1, resampling documents (blank "
    "without --bootstrap)",
    "linking-only": "95%: the 95% interval of acc overall, resampling documents (blank without "
    "--bootstrap)",
}
_CORPUS_LEGEND = {
    "end-to-end": "corpus F1: F1 estimated on the eligible corpus the sample stands for "
    "(documents weighted by 1/p_incl); corpus 95%: its stratified bootstrap interval (blank "
    "without --bootstrap)",
    "linking-only": "corpus acc: acc overall estimated on the eligible corpus the sample stands "
    "for (documents weighted by 1/p_incl); corpus 95%: its stratified bootstrap interval (blank "
    "without --bootstrap)",
}

# The corpus figure and its interval, printed after the sample figure's interval.
_CORPUS_AFTER = {"end-to-end": "f1_interval", "linking-only": "accuracy_overall_interval"}
_CORPUS_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "end-to-end": (("corpus F1", "corpus_f1"), ("corpus 95%", "corpus_f1_interval")),
    "linking-only": (
        ("corpus acc", "corpus_accuracy_overall"),
        ("corpus 95%", "corpus_accuracy_overall_interval"),
    ),
}


_PPI_LEGEND = (
    "PPI: the corpus figure prediction-powered (the surrogate part's pre-annotation corrected"
    " by the gold; corpus_ppi in the JSON); PPI 95%: its 95% delta-method interval"
)
# The prediction-powered corpus figure and its interval (``corpus_ppi``), after the corpus's.
_PPI_FIGURE = {"end-to-end": "f1", "linking-only": "accuracy_overall"}
_PPI_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    regime: (("PPI", "ppi"), ("PPI 95%", "ppi_interval")) for regime in _PPI_FIGURE
}


def _ppi_cells(result: ScoreResult, regime: str) -> dict[str, Any]:
    """The table's ``ppi`` cells: the regime's headline figure from ``corpus_ppi``."""
    ppi = result.corpus_ppi
    if ppi is None:
        return {"ppi": None, "ppi_low": None, "ppi_high": None}
    name = _PPI_FIGURE[regime]
    low, high = ppi.intervals.get(name, [None, None])
    return {"ppi": ppi.values.get(name), "ppi_low": low, "ppi_high": high}


def _cell(row: dict[str, Any], key: str) -> str:
    """A table row's cell ``key``: a figure, or an interval from its ``_low`` and ``_high``."""
    if key.endswith("_interval"):
        base = key.removesuffix("_interval")
        low, high = row[f"{base}_low"], row[f"{base}_high"]
        return "" if low is None or high is None else f"{low:.3f}–{high:.3f}"
    return _text(row[key])


def _text(value: object) -> str:
    """A figure as the tables print it: three decimals, ``–`` when undefined."""
    if isinstance(value, float):
        return f"{value:.3f}"
    return "–" if value is None else str(value)
