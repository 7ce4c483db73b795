"""The campaign's page: one self-contained HTML file made from its datasheet.

Everything is inline (CSS, the script that sorts tables, the charts drawn as SVG): a reader opens
it offline and no request leaves it. Charts draw what the commands' PNGs show (tasks done per
role, span F1 per relation, minutes per mention per annotator, the effect of pre-annotation, each
system's scores), each figure with its interval; every chart and table row says in a hover (and
a line beneath) what it means. The datasheet's sections follow as sortable tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from goldloop import __version__
from goldloop.studio.datasheet import Datasheet, Section, fmt, fmt_interval

BAR_HEIGHT, LABEL_WIDTH, PLOT_WIDTH, VALUE_WIDTH = 22, 230, 420, 150


@dataclass(frozen=True)
class Bar:
    """One row of a chart: a value, its interval (or none), and what the hover says."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    hover: str = ""


def page_html(sheet: Datasheet) -> str:
    """The page: the charts, then the datasheet's sections."""
    charts = [
        _status_chart(sheet.section("annotation")),
        _relations_chart(sheet.section("agreement"), sheet.section("gold")),
        _effort_chart(sheet.section("effort")),
        *_effect_charts(sheet.section("effect")),
        _scores_chart(sheet.section("scores")),
    ]
    plan = sheet.section("plan")
    body = [
        f"<h1>{escape(sheet.title)}</h1>",
        f'<p class="meta">Made {escape(sheet.created)} by goldloop {escape(__version__)}. '
        "Hover over a bar, a point or a row for what it means; click a column's heading to "
        "sort a table.</p>",
        '<h2>The campaign at a glance</h2><div class="charts">',
        *charts,
        "</div>",
        _section_html(plan),
        "<h2>Datasheet</h2>",
        *(_section_html(s) for s in sheet.sections if s.key != "plan"),
    ]
    return PAGE.format(title=escape(sheet.title), style=STYLE, script=SCRIPT, body="\n".join(body))


def _status_chart(section: Section) -> str:
    title = "Tasks annotated per project"
    if section.missing:
        return _chart_missing(title, section.missing)
    bars = [
        Bar(role, row["annotated"] / row["tasks"] if row["tasks"] else None,
            hover=f"{role}: {row['annotated']} of {row['tasks']} tasks annotated, "
            f"{row['annotations_needed']} annotations still needed")
        for role, row in section.report["roles"].items()
    ]  # fmt: skip
    finish = section.report["finish"]
    line = (
        f"Share of each project's tasks with the annotations they need. Still needed: "
        f"{finish['annotations_needed']} annotations; at this pace "
        f"{fmt(finish['hours_left_at_this_pace'])} hours left."
    )
    return _chart(title, bars, line, (0.0, 1.0))


def _relations_chart(section: Section, gold: Section) -> str:
    title = "Span F1 (lenient) per relation, double documents"
    if section.missing:
        return _chart_missing(title, section.missing)
    labels = {}
    if gold.report and "gold" in gold.report:
        labels = {eid: row["label"] for eid, row in gold.report["gold"]["relations"].items()}
    bars = []
    for row in section.report["per_relation"]:
        low, high = row["f1_lenient_interval"] or (None, None)
        name = labels.get(row["entity_id"]) or row["entity_id"]
        bars.append(Bar(name, row["f1_lenient"], low, high,
                        f"{name} ({row['entity_id']}): the two annotators' spans of this relation "
                        f"matched on any overlap; A marked {row['n_a']}, B {row['n_b']}; F1 "
                        f"{fmt(row['f1_lenient'])} {fmt_interval([low, high])}"))  # fmt: skip
    line = (
        "Each bar: F1 between the two annotators' spans of one relation (sample), its 95% interval."
    )
    return _chart(title, bars, line, (0.0, 1.0))


def _effort_chart(section: Section) -> str:
    title = "Minutes per verified mention, by annotator"
    if section.missing:
        return _chart_missing(title, section.missing)
    bars = [
        Bar(person, row["minutes_per_verified_mention"],
            hover=f"{person}: {row['annotations']} annotations, {fmt(row['minutes'])} minutes, "
            f"{row['verified_mentions']} verified mentions")
        for person, row in section.report["by_annotator"].items()
    ]  # fmt: skip
    line = "Minutes an annotation was open (capped: idle time left out) per mention it verified."
    return _chart(title, bars, line)


# The effect's figures that are shares, and those in minutes: two charts, two scales.
EFFECT_SHARES = ("time_saving", "recall_pre", "recall_blind", "accepted_not_blind",
                 "missed_too_pre", "missed_too_blind")  # fmt: skip
EFFECT_MINUTES = ("minutes_per_mention_pre", "minutes_per_mention_blind")


def _effect_charts(section: Section) -> list[str]:
    title = "What pre-annotation saved and anchored"
    if section.missing:
        return [_chart_missing(title, section.missing)]
    cited = {f.name: f for f in section.figures}
    out = []
    for names, caption, domain in (
        (EFFECT_SHARES, "shares", (0.0, 1.0)),
        (EFFECT_MINUTES, "minutes per mention", None),
    ):
        bars = []
        for name in names:
            figure = cited[name]
            low, high = figure.interval or (None, None)
            bars.append(Bar(name, figure.value, low, high,
                            f"{name}: {figure.means} ({figure.estimates}) "
                            f"{fmt(figure.value)} {fmt_interval(figure.interval)}"))  # fmt: skip
        line = "With the candidates against without, on the blind documents; 95% intervals."
        out.append(_chart(f"{title}: {caption}", bars, line, domain))
    return out


def _scores_chart(section: Section) -> str:
    title = "Systems scored on the gold"
    if section.missing:
        return _chart_missing(title, section.missing)
    bars = []
    for figure in section.figures:
        low, high = figure.interval or (None, None)
        bars.append(Bar(figure.name, figure.value, low, high,
                        f"{figure.name}: {figure.means} ({figure.estimates}) "
                        f"{fmt(figure.value)} {fmt_interval(figure.interval)}"))  # fmt: skip
    line = (
        "Each system's precision, recall and F1 on the gold (sample) and corpus F1, 95% intervals."
    )
    return _chart(title, bars, line, (0.0, 1.0))


def _chart(
    title: str, bars: Sequence[Bar], line: str, domain: tuple[float, float] | None = None
) -> str:
    """A horizontal bar chart as inline SVG: one bar per row, its interval as a whisker."""
    values = [v for b in bars for v in map(_number, (b.value, b.low, b.high)) if v is not None]
    if not values:
        return _chart_missing(title, "no figure to draw yet")
    low, high = domain or (min(0.0, *values), max(values) or 1.0)
    low, high = min(low, *values), max(high, *values)
    span = (high - low) or 1.0

    def x(value: float) -> float:
        return LABEL_WIDTH + (value - low) / span * PLOT_WIDTH

    rows = []
    for i, bar in enumerate(bars):
        y = 10 + i * BAR_HEIGHT
        parts = [f"<title>{escape(bar.hover or bar.label)}</title>",
                 f'<text x="{LABEL_WIDTH - 6}" y="{y + 14}" text-anchor="end">'
                 f"{escape(_short(bar.label))}</text>"]  # fmt: skip
        value, lower, upper = _number(bar.value), _number(bar.low), _number(bar.high)
        if value is not None:
            start, end = sorted((x(max(low, 0.0)), x(value)))
            parts.append(f'<rect class="bar" x="{start:.1f}" y="{y + 3}" '
                         f'width="{max(end - start, 1.5):.1f}" height="{BAR_HEIGHT - 8}"/>')  # fmt: skip
        if lower is not None and upper is not None:
            a, b = x(lower), x(upper)
            mid = y + BAR_HEIGHT / 2
            parts.append(f'<path class="whisker" d="M{a:.1f},{mid - 5}v10M{a:.1f},{mid}H{b:.1f}'
                         f'M{b:.1f},{mid - 5}v10"/>')  # fmt: skip
        parts.append(f'<text class="value" x="{LABEL_WIDTH + PLOT_WIDTH + 8}" y="{y + 14}">'
                     f"{escape(fmt(bar.value))} {escape(fmt_interval([bar.low, bar.high]))}"
                     "</text>")  # fmt: skip
        rows.append(f'<g class="row">{"".join(parts)}</g>')
    height = 30 + len(bars) * BAR_HEIGHT
    width = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH
    axis = (f'<line class="axis" x1="{x(low):.1f}" x2="{x(low):.1f}" y1="6" y2="{height - 18}"/>'
            f'<text class="tick" x="{x(low):.1f}" y="{height - 4}">{low:g}</text>'
            f'<text class="tick" x="{x(high):.1f}" y="{height - 4}" text-anchor="end">'
            f"{high:.3g}</text>")  # fmt: skip
    return (
        f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
        f'<svg role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        f"<title>{escape(title)}</title>{axis}{''.join(rows)}</svg>"
        f'<p class="line">{escape(line)}</p></figure>'
    )


def _chart_missing(title: str, why: str) -> str:
    return (
        f'<figure class="chart empty"><figcaption>{escape(title)}</figcaption>'
        f'<p class="missing">Not available: {escape(why)}.</p></figure>'
    )


def _section_html(section: Section) -> str:
    out = [f'<section id="{escape(section.key)}"><h3>{escape(section.title)}</h3>']
    if section.command:
        out.append(f'<p class="meta">From <code>{escape(section.command)}</code>.</p>')
    if section.missing:
        out.append(_missing(section))
        return "".join(out) + "</section>"
    if section.figures:
        head = "".join(
            f"<th>{escape(h)}</th>"
            for h in ("figure", "value", "95% interval", "describes", "what it means")
        )
        rows = "".join(
            f'<tr title="{escape(f.means)}"><td>{escape(f.name)}</td>'
            f'<td data-sort="{_sort_key(f.value)}">{escape(fmt(f.value))}</td>'
            f"<td>{escape(fmt_interval(f.interval))}</td><td>{escape(f.estimates)}</td>"
            f"<td>{escape(f.means)}</td></tr>"
            for f in section.figures
        )
        out.append(f'<table class="sortable"><thead><tr>{head}</tr></thead>'
                   f"<tbody>{rows}</tbody></table>")  # fmt: skip
    out += [f'<p class="line">{escape(line)}</p>' for line in section.lines]
    return "".join(out) + "</section>"


def _missing(section: Section) -> str:
    return f'<p class="missing">Not available: {escape(section.missing or "")}.</p>'


def _sort_key(value: Any) -> str:
    return "" if _number(value) is None else f"{value}"


def _number(value: Any) -> float | None:
    """A value to draw: a finite number, else None (undefined, or not a number)."""
    finite = isinstance(value, int | float) and math.isfinite(value)
    return float(value) if finite else None


def _short(label: str) -> str:
    return label if len(label) <= 32 else label[:31] + "…"


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>{style}</style></head>
<body>
{body}
<script>{script}</script>
</body></html>
"""
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#1d2433;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #d5dae3}h3{margin-top:1.4em}
.meta{color:#5a6478}.line{color:#3b4558;margin:.3em 0}.missing{color:#8a5a00;font-style:italic}
.charts{display:flex;flex-wrap:wrap;gap:1.2em}
figure.chart{margin:0;padding:.6em .8em;border:1px solid #d5dae3;border-radius:6px;background:#fafbfd}
figcaption{font-weight:600;margin-bottom:.3em}
svg text{font-size:12px;fill:#1d2433}svg .tick{fill:#5a6478}
svg .bar{fill:#4f7cc9}svg .row:hover .bar{fill:#24539f}svg .row:hover text{font-weight:600}
svg .whisker{stroke:#1d2433;stroke-width:1.5;fill:none}svg .axis{stroke:#9aa3b5}
table{border-collapse:collapse;margin:.5em 0;width:100%}
th,td{border-bottom:1px solid #e3e7ee;padding:.25em .5em;text-align:left;vertical-align:top}
th{cursor:pointer;background:#eef1f6;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
tbody tr:hover{background:#f2f6fd}
"""
# Sorts a table by the clicked column: numbers as numbers (a cell's data-sort when it has one),
# the rest as text; a second click reverses.
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var column = th.cellIndex, table = th.closest("table"), body = table.tBodies[0];
    var up = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    var key = function (row) {
      var cell = row.cells[column], raw = cell.dataset.sort;
      var text = raw !== undefined ? raw : cell.textContent.trim();
      var number = parseFloat(text);
      return isNaN(number) || text === "" ? [1, text] : [0, number];
    };
    Array.from(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      var order = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
      return up ? order : -order;
    }).forEach(function (row) { body.appendChild(row); });
  });
});
"""
