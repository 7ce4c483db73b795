"""Labelling sheets for the precision sample: markdown to tick in any editor, read back as labels.

One sheet per sitting (``per_sheet`` items, ``sheet-01.md``, ...), items ``G-0001``, ... in the
sample's order. Each item holds its mention key (a code span, so markdown leaves it alone), the
claim as a line (the mention, the relation's label, the direction), the sentence with the mention
in bold and every other character that markdown could read as markup escaped, three boxes
(``supported``, ``contradicted``, ``not found``) and ``note:``.

Reading back: exactly one ticked box (``[x]``) is the item's label; none leaves it unlabelled
(counted by ``precision report`` as Label Studio's unlabelled tasks are); two ticks, a heading
that is not an item, a box holding anything but ``x`` (or ``X``), one space or nothing (``[xx]``
and ``[ x ]`` too), or a box with an unknown label is an error naming the file and line, every
problem listed, nothing returned. A sheet with no item at all (empty or truncated) is refused
likewise: goldloop never writes one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.precision.mentions import LABELS, Label
from goldloop.text.parsing import Parsing

SHEET_GLOB = "sheet-*.md"
BOXES = {label: label.replace("_", " ") for label in LABELS}
ITEM = re.compile(r"^##\s+(G-\d{4,})\s*$")
HEADING = re.compile(r"^#{2,}\s")
# Anything between the brackets, so that a mark such as ``xx`` or `` x `` is read (and refused)
# rather than leaving the line unread as no box at all.
BOX = re.compile(r"^\s*[-*]\s*\[([^\]]*)\]\s*(.*?)\s*$")
KEY = re.compile(r"^key:\s*`([^`]+)`\s*$")
NOTE = "note:"
# Characters markdown may read as markup (CommonMark's escapable punctuation).
_ESCAPE = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


class SheetError(GoldloopError):
    """A labelling sheet cannot be read; the message names the file and every problem's line."""


def escape(text: str) -> str:
    """``text`` as markdown shows it verbatim, on one line."""
    return _ESCAPE.sub(r"\\\1", re.sub(r"\s+", " ", text))


def item_id(index: int) -> str:
    return f"G-{index:04d}"


def row_sentences(
    rows: Sequence[dict[str, Any]], texts: dict[str, str], parsing: Parsing = Parsing()
) -> list[tuple[int, int, str]]:
    """Each row's sentence (:func:`goldloop.text.nlp.sentence_of`) and the mention's offsets in it."""
    from goldloop.text.nlp import parse_many, sentence_of  # spaCy loads only to write sheets

    distinct = list(dict.fromkeys(texts[row["doc_id"]] for row in rows))
    parsed = dict(zip(distinct, parse_many(distinct, parsing), strict=True))
    out = []
    for row in rows:
        a, b = int(row["a"]), int(row["b"])
        sent = sentence_of(parsed[texts[row["doc_id"]]], a, b)
        out.append((a - sent.start_char, b - sent.start_char, sent.text))
    return out


def sheet_files(
    rows: Sequence[dict[str, Any]], sentences: Sequence[tuple[int, int, str]], per_sheet: int
) -> dict[str, bytes]:
    """The sheets of ``rows`` (``precision sample``'s rows to label) by file name.

    ``sentences[i]`` is row i's sentence and the mention's offsets within it.
    """
    if per_sheet < 1:
        raise GoldloopError("per_sheet must be at least 1")
    files: dict[str, bytes] = {}
    count = (len(rows) + per_sheet - 1) // per_sheet
    width = max(2, len(str(count)))
    for sheet in range(count):
        first = sheet * per_sheet
        chunk = range(first, min(first + per_sheet, len(rows)))
        lines = [
            f"# Precision labelling sheet {sheet + 1} of {count} "
            f"({item_id(chunk[0] + 1)} to {item_id(chunk[-1] + 1)})",
            "",
            "Does the sentence state the claim about the mention in bold? Tick exactly one box "
            "per item (`[x]`); leave all three empty to skip an item. Write any note after "
            "`note:`. Do not edit the headings or the keys.",
            "",
        ]
        for index in chunk:
            lines += _item(index + 1, rows[index], *sentences[index])
        files[f"sheet-{sheet + 1:0{width}d}.md"] = "\n".join(lines).encode("utf-8")
    return files


def _item(number: int, row: dict[str, Any], a: int, b: int, sentence: str) -> list[str]:
    direction = f" · {row['direction']}" if row.get("direction") else ""
    marked = f"{escape(sentence[:a])}**{escape(sentence[a:b])}**{escape(sentence[b:])}"
    return [
        f"## {item_id(number)}",
        "",
        f"key: `{row['key']}`",
        "",
        f"claim: **{escape(row['surface'])}** → {escape(str(row['relation']))}{escape(direction)}",
        "",
        f"sentence: {marked}",
        "",
        *(f"- [ ] {box}" for box in BOXES.values()),
        "",
        NOTE,
        "",
    ]


def read_sheets(paths: Sequence[Path]) -> tuple[list[Label], dict[str, str]]:
    """Every item's label (None when no box is ticked) and the notes written, by key."""
    labels: list[Label] = []
    notes: dict[str, str] = {}
    problems: list[str] = []
    seen: dict[str, str] = {}
    by_box = {box: label for label, box in BOXES.items()}
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise SheetError(f"{path}: cannot read: {exc}") from None
        item: dict[str, Any] | None = None
        if not any(ITEM.match(line) for line in lines):
            # goldloop writes no sheet without items: an empty one is a truncated or foreign file.
            problems.append(f"{path}: no items (## G-0001 ...): not a labelling sheet")
        for number, line in enumerate(lines, start=1):
            where = f"{path}: line {number}"
            heading = ITEM.match(line)
            if heading:
                _close(item, labels, notes, problems, seen)
                item = {"id": heading.group(1), "where": where, "key": None, "ticks": []}
                continue
            if HEADING.match(line):
                problems.append(f"{where}: unknown heading {line.strip()!r}")
                continue
            if item is None:
                continue
            key, box = KEY.match(line), BOX.match(line)
            if key:
                item["key"] = key.group(1)
            elif box:
                mark, name = box.group(1), box.group(2)
                if name not in by_box:
                    problems.append(
                        f"{where}: unknown box {name!r} (known: {', '.join(BOXES.values())})"
                    )
                elif mark in ("x", "X"):
                    item["ticks"].append((by_box[name], where))
                elif mark not in (" ", ""):
                    problems.append(f"{where}: mark {mark!r} in a box: tick with x alone")
            elif line.startswith(NOTE) and line[len(NOTE) :].strip():
                item["note"] = line[len(NOTE) :].strip()
        _close(item, labels, notes, problems, seen)
    if problems:
        raise SheetError(f"{len(problems)} problem(s): " + "; ".join(problems))
    return labels, notes


def _close(
    item: dict[str, Any] | None,
    labels: list[Label],
    notes: dict[str, str],
    problems: list[str],
    seen: dict[str, str],
) -> None:
    """Finish one item: its label, or the problems that keep it from having one."""
    if item is None:
        return
    where, key, ticks = item["where"], item["key"], item["ticks"]
    if key is None:
        problems.append(f"{where}: item {item['id']} has no key line")
        return
    if key in seen:
        problems.append(f"{where}: item {item['id']} repeats the key of {seen[key]}")
        return
    seen[key] = item["id"]
    if len(ticks) > 1:
        problems.append(
            f"{ticks[1][1]}: item {item['id']} has {len(ticks)} ticks "
            f"({', '.join(BOXES[t] for t, _ in ticks)}): tick one"
        )
        return
    labels.append(Label(key, ticks[0][0] if ticks else None))
    if "note" in item:
        notes[key] = item["note"]
