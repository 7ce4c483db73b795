"""Labelling sheets for the precision sample: written, ticked by a script, read back; the report
from them equals the report from the same labels given in a real Label Studio."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from goldloop.precision.mentions import JudgedMention, write_verdicts
from goldloop.sheets.labelling import escape
from goldloop.studio.precision_project import push_sample
from tests.conftest import Cli

# Astral characters and markdown's own characters around the mentions.
TEXT = "𝛼-synuclein_2 *inhibits* B. C activates D [1]. E regulates F. G binds H."
SPANS = [("inhibits", "PEL.000018", "supported"), ("activates", "PEL.000000", "contradicted"),
         ("regulates", "RO.0002211", "supported"), ("binds", "PEL.000003", "supported")]  # fmt: skip
# What the person decides for each mention: the label, or None (left unticked).
DECISIONS = {"inhibits": "supported", "activates": "not_found", "regulates": None,
             "binds": "contradicted"}  # fmt: skip


def _inputs(directory: Path) -> tuple[Path, Path]:
    judged = []
    for surface, entity_id, verdict in SPANS:
        a = TEXT.index(surface)
        judged.append(JudgedMention("pmid:9", a, a + len(surface), entity_id, surface, surface,
                                    "forward", verdict))  # fmt: skip
    verdicts, documents = directory / "verdicts.jsonl", directory / "documents.jsonl"
    write_verdicts(verdicts, judged)
    documents.write_text(json.dumps({"doc_id": "pmid:9", "text": TEXT}, ensure_ascii=False) + "\n")
    return verdicts, documents


def tick(sheet: Path, choices: dict[str, list[str]], mark: str = "x") -> None:
    """Tick the boxes of each item, found by the mention in its claim line."""
    out, surface = [], None
    for line in sheet.read_text(encoding="utf-8").splitlines():
        claim = re.match(r"claim: \*\*(.+?)\*\*", line)
        if claim:
            surface = claim.group(1)
        box = re.match(r"- \[ \] (.+)$", line)
        if box and surface is not None and box.group(1) in choices.get(surface, []):
            line = f"- [{mark}] {box.group(1)}"
        out.append(line)
    sheet.write_text("\n".join(out) + "\n", encoding="utf-8")


def _first_claim(sheet: Path) -> str:
    found = re.search(r"^claim: \*\*(.+?)\*\*", sheet.read_text(encoding="utf-8"), re.M)
    assert found is not None
    return found.group(1)


def _ok(result: Any) -> Any:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


def _sample(cli: Cli, tmp_path: Path, per_sheet: int = 50) -> tuple[Path, Path, Path]:
    verdicts, documents = _inputs(tmp_path)
    rows, sheets = tmp_path / "rows.jsonl", tmp_path / "sheets"
    _ok(cli("precision", "sample", "--verdicts", verdicts, "--documents", documents, "--out", rows,
            "--n", 4, "--sheets", sheets, "--per-sheet", per_sheet))  # fmt: skip
    return verdicts, rows, sheets


def test_a_sheet_item_shows_the_claim_and_the_escaped_sentence(cli: Cli, tmp_path: Path) -> None:
    _, rows, sheets = _sample(cli, tmp_path, per_sheet=3)
    assert sorted(p.name for p in sheets.iterdir()) == ["sheet-01.md", "sheet-02.md"]
    first = (sheets / "sheet-01.md").read_text(encoding="utf-8")
    assert [h for h in first.splitlines() if h.startswith("## ")] == [
        "## G-0001",
        "## G-0002",
        "## G-0003",
    ]
    assert "## G-0004" in (sheets / "sheet-02.md").read_text(encoding="utf-8")
    keys = [json.loads(line)["key"] for line in rows.read_text().splitlines()]
    assert f"key: `{keys[0]}`" in first
    item = first.split("## G-0001")[1].split("## G-0002")[0]
    surface = json.loads(rows.read_text().splitlines()[0])["surface"]
    (line,) = [x for x in item.splitlines() if x.startswith("sentence: ")]
    assert f"**{surface}**" in line
    shown = re.sub(
        r"\\(.)", r"\1", line.removeprefix("sentence: ").replace(f"**{surface}**", surface)
    )
    assert surface in shown and shown in TEXT  # the sentence, every character shown as written
    assert "- [ ] supported\n- [ ] contradicted\n- [ ] not found" in item and "\nnote:" in item
    assert escape("𝛼-synuclein_2 *inhibits* [1].") == r"𝛼\-synuclein\_2 \*inhibits\* \[1\]\."


def test_sheets_and_label_studio_give_the_same_precision_report(
    cli: Cli, tmp_path: Path, label_studio: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdicts, rows_file, sheets = _sample(cli, tmp_path)
    for sheet in sheets.iterdir():
        tick(sheet, {s: [d.replace("_", " ")] for s, d in DECISIONS.items() if d})
    labels = tmp_path / "labels.jsonl"
    out = _ok(cli("precision", "labels", "--sheets", sheets, "--out", labels)).out
    assert "3 of 4 items labelled (1 unlabelled)" in out
    _ok(
        cli(
            "precision",
            "report",
            "--verdicts",
            verdicts,
            "--labels",
            labels,
            "-o",
            tmp_path / "sheet.json",
        )
    )

    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    title = f"precision-sheets-{tmp_path.name}"
    studio = label_studio.studio
    pushed = push_sample(studio, title, rows, {"pmid:9": TEXT})
    tasks = {
        t.data["key"]: t for t in studio.sdk.tasks.list(project=pushed.project_id, fields="all")
    }
    for row in rows:
        decision = DECISIONS[row["surface"]]
        if decision is not None:
            studio.sdk.annotations.create(id=tasks[row["key"]].id, result=[
                {"id": "v", "from_name": "verdict", "to_name": "text", "type": "choices",
                 "value": {"choices": [decision.replace("_", " ")]}}])  # fmt: skip
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    _ok(cli("precision", "report", "--verdicts", verdicts, "--studio-project", title,
            "--url", label_studio.url, "-o", tmp_path / "studio.json"))  # fmt: skip

    from_sheets = json.loads((tmp_path / "sheet.json").read_text())
    from_studio = json.loads((tmp_path / "studio.json").read_text())
    assert from_studio.pop("label_studio")["tasks"] == 4
    assert from_sheets == from_studio
    assert from_sheets["n_labelled"] == 3 and from_sheets["left_out"]["unlabelled"] == 1
    # The judge said supported on "binds"; the person, contradicted: one false support.
    assert from_sheets["judge_on_sample"]["false_support"] == 1


def test_malformed_sheets_list_every_problem_and_write_nothing(cli: Cli, tmp_path: Path) -> None:
    _, _, sheets = _sample(cli, tmp_path, per_sheet=2)
    first, second = sorted(sheets.iterdir())
    tick(first, {_first_claim(first): ["supported", "contradicted"]})  # two ticks
    tick(second, {_first_claim(second): ["not found"]}, mark="v")  # another mark
    text = second.read_text(encoding="utf-8").replace("## G-0004", "## Item four")
    second.write_text(text, encoding="utf-8")  # an unknown heading
    labels = tmp_path / "labels.jsonl"
    result = cli("precision", "labels", "--sheets", sheets, "--out", labels)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "3 problem(s)" in result.err
    assert f"{first}: line" in result.err and "has 2 ticks (supported, contradicted)" in result.err
    assert f"{second}: line" in result.err and "mark 'v' in a box" in result.err
    assert "unknown heading '## Item four'" in result.err
    assert not labels.exists()
    # Sampling again into the same folder would lose the ticks: refused.
    again = cli("precision", "sample", "--verdicts", tmp_path / "verdicts.jsonl", "--documents",
                tmp_path / "documents.jsonl", "--out", tmp_path / "again.jsonl", "--sheets", sheets)  # fmt: skip
    assert again.returncode == 2 and "holds labelling sheets already" in again.err
    assert not (tmp_path / "again.jsonl").exists()
