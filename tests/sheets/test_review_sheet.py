"""The review sheet: export, fill, import; and the same decisions made in a real Label Studio.

The both-roads test pushes two annotators' candidates, makes every decision through Label
Studio's API and pulls; it makes the same decisions on the exported sheet and imports it. The
verified gold files must be equal, and so must the sidecars but for what only Label Studio
records: ``projects`` and ``effort`` (the time people spent).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.files.csvfile import read_csv, table_text
from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.sheets.review_sheet import COLUMNS, SheetError, read_sheet
from tests.conftest import Cli, CliResult, run_goldloop
from tests.studio.loop_data import (
    ACTIVATES,
    BINDS,
    DOCS,
    HITS_A,
    HITS_B,
    INDUCES,
    SUPPRESSES,
    TAG_A,
    TAG_B,
    _gold,
    _region,
    _review,
    _set,
    _without,
    project_titled,
    tasks_of,
)  # fmt: skip

ADMIN = "admin@goldloop.local"
# B proposes one span A missed in pmid:3 and never saw pmid:5 to pmid:8.
B_COVERS = ("pmid:1", "pmid:2", "pmid:3", "pmid:4")
HITS_B_HERE = [*HITS_B, ("pmid:3", "lipids", BINDS, "symmetric", False)]


def _inputs(directory: Path) -> tuple[Path, Path, Path]:
    """documents.jsonl (every document primary), gold.a.json and gold.b.json (B: 4 documents)."""
    directory.mkdir(parents=True, exist_ok=True)
    docs = [{**d, "role": "primary"} for d in DOCS]
    documents = directory / "documents.jsonl"
    documents.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), "utf-8")
    gold_a, gold_b = directory / "gold.a.json", directory / "gold.b.json"
    a_docs = [{**d, "role": "primary"} for d in _gold(HITS_A, TAG_A)]
    b_docs = [d for d in _gold(HITS_B_HERE, TAG_B) if d["doc_id"] in B_COVERS]
    gold_a.write_text(json.dumps(a_docs, ensure_ascii=False), "utf-8")
    gold_b.write_text(json.dumps(b_docs, ensure_ascii=False), "utf-8")
    return documents, gold_a, gold_b


# (doc_id, surface) → (verdict, fix_entity_id, fix_direction, note); the decisions of both roads.
VERDICTS = {
    ("pmid:1", "activates"): ("accept", "", "", ""),
    ("pmid:2", "inhibits"): ("fix", SUPPRESSES, "", ""),
    ("pmid:2", "regulates"): ("fix", "", "inverse", ""),
    ("pmid:3", "binds to"): ("accept", "", "", "lipid binding"),
    ("pmid:3", "activates"): ("reject", "", "", ""),
    ("pmid:3", "lipids"): ("reject", "", "", ""),
    ("pmid:4", "activates"): ("accept", "", "", ""),
    ("pmid:4", "inhibited by"): ("accept", "", "", ""),
    ("pmid:5", "stimulates"): ("accept", "", "", ""),
    ("pmid:6", "reduces"): ("accept", "", "", ""),
    ("pmid:7", "phosphorylates"): ("fix", "", "inverse", ""),
    ("pmid:8", "suppresses"): ("reject", "", "", ""),
}
ADDED = {"doc_id": "pmid:6", "surface": "induces", "occurrence": "1", "entity_id": INDUCES,
         "direction": "forward", "origin": "added", "verdict": "accept"}  # fmt: skip


def fill(sheet: Path, verdicts: dict[tuple[str, str], tuple[str, str, str, str]],
         added: list[dict[str, str]]) -> None:  # fmt: skip
    """What a reviewer does in a spreadsheet: a verdict per row, rows added at the end."""
    table = read_csv(sheet)
    rows = []
    for _, row in table.rows:
        verdict, fix_id, fix_direction, note = verdicts[(row["doc_id"], row["surface"])]
        rows.append({**row, "verdict": verdict, "fix_entity_id": fix_id,
                     "fix_direction": fix_direction, "note": note})  # fmt: skip
    rows += [{column: row.get(column, "") for column in COLUMNS} for row in added]
    sheet.write_text(table_text(table.columns, rows, delimiter="\t"), "utf-8")


def _ok(result: CliResult) -> CliResult:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


def _annotate_in_studio(client: Any, name: str) -> None:
    """The decisions of VERDICTS and ADDED, made on the stored review prediction of each task."""
    tasks = tasks_of(client, project_titled(client, name).id)
    work = {doc_id: _review(task) for doc_id, task in tasks.items()}
    for (doc_id, surface), (verdict, fix_id, fix_direction, note) in VERDICTS.items():
        if verdict == "reject":
            work[doc_id] = _without(work[doc_id], surface, doc_id)
        if fix_id:
            _set(work[doc_id], surface, doc_id, "relation", {"taxonomy": [["suppresses"]]})
        if fix_direction:
            _set(work[doc_id], surface, doc_id, "direction", {"choices": [fix_direction]})
        if note:
            span = next(i for i in work[doc_id] if i["from_name"] == "mention"
                        and i["value"]["text"] == surface)  # fmt: skip
            work[doc_id].append({"id": span["id"], "from_name": "note", "to_name": "text",
                                 "type": "textarea", "value": {**span["value"], "text": [note]}})  # fmt: skip
    work["pmid:6"] += _region("pmid:6", "induces", INDUCES, "forward")
    for doc_id, task in tasks.items():
        client.annotations.create(id=task.id, result=work[doc_id])


def test_sheet_and_label_studio_give_the_same_verified_gold(
    label_studio, tmp_path, cli: Cli
) -> None:
    documents, gold_a, gold_b = _inputs(tmp_path)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    name = f"sheet-{uuid.uuid4().hex[:6]}"
    _ok(run_goldloop(["push", "--sample", documents, "--project", name, "--candidates", gold_a,
                      "--other", gold_b], env))  # fmt: skip
    _annotate_in_studio(label_studio.studio.sdk, name)
    _ok(run_goldloop(["pull", "--project", name, "--out", tmp_path / "studio.json"], env))

    sheet = tmp_path / "review.tsv"
    _ok(cli("sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", sheet))
    fill(sheet, VERDICTS, [ADDED])
    _ok(cli("sheet", "import", "--sheet", sheet, "--gold", gold_a, "--other", gold_b,
            "--verified-by", ADMIN, "--output", tmp_path / "sheet.json"))  # fmt: skip

    from_studio = json.loads((tmp_path / "studio.json").read_text())
    from_sheet = json.loads((tmp_path / "sheet.json").read_text())
    assert from_sheet == from_studio
    kept = {(d["doc_id"], h["surface"], h["entity_id"], h["direction"], h["verdict"])
            for d in from_sheet for h in d["ground_truth"]}  # fmt: skip
    assert ("pmid:2", "inhibits", SUPPRESSES, "forward", "fix") in kept
    assert ("pmid:4", "inhibited by", "PEL.000018", "inverse", "accept") in kept
    assert ("pmid:6", "induces", INDUCES, "forward", "added") in kept
    studio_side = json.loads((tmp_path / "studio.json.verification.json").read_text())
    sheet_side = json.loads((tmp_path / "sheet.json.verification.json").read_text())
    assert studio_side.pop("projects") == [name] and sheet_side.pop("projects") == []
    assert studio_side.pop("effort")["by_annotator"][ADMIN]["annotations"] == 8
    assert sheet_side == studio_side
    # Counted by hand from VERDICTS and ADDED.
    assert {k: sheet_side[k] for k in ("candidates", "accept", "fix", "reject", "added")} == {
        "candidates": 12, "accept": 6, "fix": 3, "reject": 3, "added": 1,
    }  # fmt: skip
    assert sheet_side["correction_rate"] == pytest.approx(6 / 12)
    assert sheet_side["adopted_from_second_annotator"] == 1
    assert {h["annotator"] for d in from_sheet for h in d["ground_truth"]} == {ADMIN}


def test_export_columns_not_covered_and_same_bytes(tmp_path, cli: Cli) -> None:
    _, gold_a, gold_b = _inputs(tmp_path)
    first, second = tmp_path / "one.tsv", tmp_path / "two.tsv"
    _ok(cli("sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", first))
    _ok(cli("sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", second))
    assert first.read_bytes() == second.read_bytes()
    table = read_csv(first)
    assert tuple(table.columns) == COLUMNS
    rows = {(r["doc_id"], r["surface"]): r for _, r in table.rows}
    assert len(rows) == len(VERDICTS)
    pick = ("origin", "other_entity_id", "other_direction", "agrees", "agrees_direction")
    view = {key: tuple(rows[key][c] for c in pick) for key in rows}
    assert view[("pmid:1", "activates")] == ("gold", ACTIVATES, "forward", "True", "True")
    # Same relation, other direction: a pure direction dispute.
    assert view[("pmid:2", "inhibits")] == ("gold", "PEL.000018", "inverse", "True", "False")
    assert view[("pmid:2", "regulates")] == ("gold", "", "", "False", "")
    assert view[("pmid:3", "lipids")] == ("other", "", "", "False", "")
    assert view[("pmid:8", "suppresses")] == ("gold", *["not-covered"] * 4)
    assert rows[("pmid:3", "binds to")]["context"] == (
        "𝛼-synuclein [[binds to]] lipids and activates microglia 🧬."
    )
    assert all(r["verdict"] == "" for r in rows.values())


def test_a_symmetric_relation_agrees_in_any_direction(tmp_path, cli: Cli, kb) -> None:
    _, gold_a, _ = _inputs(tmp_path)
    other = tmp_path / "other.json"
    docs = _gold([("pmid:3", "binds to", BINDS, "symmetric", True)], TAG_B)
    other.write_text(json.dumps([d for d in docs if d["doc_id"] == "pmid:3"]), "utf-8")
    assert kb.get(BINDS).is_symmetric
    sheet = tmp_path / "review.tsv"
    _ok(cli("sheet", "export", "--gold", gold_a, "--other", other, "--output", sheet))
    row = next(r for _, r in read_csv(sheet).rows if r["surface"] == "binds to")
    assert (row["agrees"], row["agrees_direction"]) == ("True", "True")


def test_every_problem_is_listed_and_nothing_is_written(tmp_path, cli: Cli) -> None:
    _, gold_a, gold_b = _inputs(tmp_path)
    sheet = tmp_path / "review.tsv"
    _ok(cli("sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", sheet))
    bad = dict(VERDICTS)
    bad[("pmid:1", "activates")] = ("", "", "", "")  # no verdict
    bad[("pmid:2", "inhibits")] = ("maybe", "", "", "")  # not a verdict
    bad[("pmid:2", "regulates")] = ("fix", "", "", "")  # a fix of nothing
    bad[("pmid:3", "binds to")] = ("fix", "PEL.999999", "", "")  # an unknown id
    added = [
        {**ADDED, "surface": "absent words"},  # not in the text
        {**ADDED, "surface": "induces", "occurrence": "", "a": "0", "b": "3"},  # wrong span
    ]
    fill(sheet, bad, added)
    out = tmp_path / "gold.verified.json"
    result = cli("sheet", "import", "--sheet", sheet, "--gold", gold_a, "--other", gold_b,
                 "--verified-by", ADMIN, "--output", out)  # fmt: skip
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "6 problem(s)" in result.err and str(sheet) in result.err
    for line, words in ((2, "verdict must be"), (3, "'maybe'"), (4, "fix needs fix_entity_id"),
                        (5, "'PEL.999999' is not in the KB"), (14, "surface_not_found"),
                        (15, "no longer matches")):  # fmt: skip
        assert f"line {line}: " in result.err and words in result.err
    assert not out.exists() and not Path(f"{out}.verification.json").exists()
    # Exporting again over a sheet with verdicts would lose them: refused, the sheet unchanged.
    before = sheet.read_bytes()
    again = cli("sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", sheet)
    assert again.returncode == 2 and "holds verdicts already" in again.err
    assert sheet.read_bytes() == before


def test_an_accepted_other_row_needs_the_other_file(tmp_path, cli: Cli) -> None:
    _, gold_a, gold_b = _inputs(tmp_path)
    sheet = tmp_path / "review.tsv"
    _ok(cli("sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", sheet))
    fill(sheet, VERDICTS, [])
    out = tmp_path / "gold.verified.json"
    result = cli("sheet", "import", "--sheet", sheet, "--gold", gold_a, "--verified-by", ADMIN,
                 "--output", out)  # fmt: skip
    assert result.returncode == 2
    assert "line 9: an other row with verdict accept needs the other annotator's gold" in result.err
    assert not out.exists()
    # Rejected, the B-only row needs no file: its candidate is on the sheet.
    fill(sheet, {**VERDICTS, ("pmid:4", "inhibited by"): ("reject", "", "", "")}, [])
    _ok(cli("sheet", "import", "--sheet", sheet, "--gold", gold_a, "--verified-by", ADMIN,
            "--output", out))  # fmt: skip
    sidecar = json.loads(Path(f"{out}.verification.json").read_text())
    assert (sidecar["reject"], sidecar["adopted_from_second_annotator"]) == (4, 0)
    rejected = {(r["doc_id"], r["surface"], r["origin"]) for r in sidecar["rejected"]}
    assert ("pmid:4", "inhibited by", "B") in rejected and ("pmid:3", "lipids", "B") in rejected


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            ["d\t20\t20\t\tRO.0002211\tforward\tadded\taccept"],
            r"line 3: the span \[20, 20\) is empty",
        ),
        (
            ["d\t5\t14\tregulates\tRO.0002211\tforward\tadded\taccept"],
            r"line 3: the span \[5, 14\) is kept",
        ),
    ],
)
def test_an_added_row_is_a_span_no_other_row_keeps(
    tmp_path: Path, kb: KB, rows: list[str], message: str
) -> None:
    """Issue 44, item 3: an empty span is no hit; a span kept twice would be two."""
    text = "IL-6 regulates TNF. A inhibits B."
    hit = Hit(a=5, b=14, surface="regulates", entity_id="RO.0002211", direction="forward")
    gold = [Document(doc_id="d", text=text, ground_truth=[hit])]
    sheet = tmp_path / "s.tsv"
    head = "doc_id\ta\tb\tsurface\tentity_id\tdirection\torigin\tverdict"
    accepted = "d\t5\t14\tregulates\tRO.0002211\tforward\tgold\taccept"
    sheet.write_text("\n".join([head, accepted, *rows]) + "\n")
    with pytest.raises(SheetError, match=message):
        read_sheet(sheet, gold, None, kb, "r@x.org")
