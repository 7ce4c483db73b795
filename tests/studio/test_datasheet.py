"""``goldloop datasheet`` over a campaign in a real Label Studio (double, blind and curated
documents, a system scored): every section holds what its command reports, and every figure it
cites is that command's number, printed in the Markdown."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.datasheet import fmt, fmt_interval, lookup
from goldloop.studio.push import push
from tests.conftest import run_goldloop
from tests.studio.published_data import Published

pytestmark = pytest.mark.studio

BOOTSTRAP = ("--bootstrap", 200, "--seed", 3)
# Seconds a run took: the one thing two runs of a command need not share.
TIMINGS = ("scoring_time_s", "wall_time_s")


def _run(env: dict[str, str], *args: Any) -> None:
    done = run_goldloop(args, env)
    assert done.returncode == 0, done.stderr


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _untimed(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMINGS} for r in results]


@pytest.fixture(scope="module")
def commands(published: Published, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The datasheet, and each command's own report of the same campaign."""
    out = tmp_path_factory.mktemp("commands")
    env, name, gold = published.env, published.name, published.gold
    _run(env, "status", "--project", name, "-o", out / "status.json")
    _run(env, "agree", "--studio-project", name, "-o", out / "agree.json", *BOOTSTRAP)
    _run(env, "effort", "--project", name, "-o", out / "effort.json", "--png", out / "e.png")
    _run(env, "effect", "--project", name, "--json", out / "effect.json", "--png",
         out / "effect.png", *BOOTSTRAP)  # fmt: skip
    _run(env, "score", "--gold", gold, "--system", f"lexical={published.system}",
         "--report-dir", out / "score", *BOOTSTRAP)  # fmt: skip
    _run(env, "stats", "--gold", gold, "--report-dir", out / "stats")
    _run(env, "datasheet", "--project", name, "--gold", gold, "--system",
         f"lexical={published.system}", "-o", out / "sheet.md", *BOOTSTRAP)  # fmt: skip
    return {
        "sheet": _read(out / "sheet.json"),  # beside --out: NAME.datasheet.json is the default
        "markdown": (out / "sheet.md").read_text(encoding="utf-8"),
        "status": _read(out / "status.json"),
        "agree": _read(out / "agree.json"),
        "effort": _read(out / "effort.json"),
        "effect": _read(out / "effect.json"),
        "score": {"results": _untimed(_read(out / "score" / "score_results.json")["results"])},
        "stats": _read(out / "stats" / "dataset_stats.json"),
    }


# datasheet section -> the command whose report it holds
SECTIONS = {
    "gold": "stats",
    "annotation": "status",
    "agreement": "agree",
    "quality": "status",
    "effort": "effort",
    "effect": "effect",
    "scores": "score",
}


@pytest.mark.parametrize("section", SECTIONS)
def test_each_section_is_its_commands_report(commands: dict, section: str) -> None:
    held = commands["sheet"]["sections"][section]
    assert held["missing"] is None
    report = held["report"]
    if section == "scores":
        report = {"results": _untimed(report["results"])}
    assert report == commands[SECTIONS[section]]
    assert held["figures"], "a section with its inputs cites its figures"
    for figure in held["figures"]:
        expected = lookup(commands[SECTIONS[section]], figure["path"])
        assert figure["value"] == expected, figure["name"]
        assert figure["estimates"] in ("sample", "corpus", "count")
        row = f"| {figure['name']} | {fmt(expected)} | {fmt_interval(figure['interval'])} |"
        assert row in commands["markdown"]


def test_the_headline_figures_carry_intervals_and_say_what_they_describe(commands: dict) -> None:
    figures = {f["name"]: f for s in commands["sheet"]["sections"].values() for f in s["figures"]}
    agree = commands["agree"]
    lenient = figures["span F1 lenient"]
    assert lenient["value"] == agree["span_f1"]["lenient"]["f1"] is not None
    assert lenient["interval"] == agree["span_f1"]["lenient"]["interval"]
    assert lenient["estimates"] == "sample"
    # The tasks carry p_incl: the corpus figures are there, with the agree command's intervals.
    corpus = figures["corpus kappa_entity_id_folded"]
    assert corpus["estimates"] == "corpus"
    assert corpus["interval"] == agree["corpus"]["intervals"]["kappa_entity_id_folded"]
    assert (
        figures["recall_both"]["interval"] == commands["status"]["completeness"]["recall_both_ci"]
    )
    saving = figures["time_saving"]
    assert saving["value"] == commands["effect"]["figures"]["time_saving"]["value"] is not None
    assert saving["interval"] is not None and saving["estimates"] == "corpus"
    f1 = figures["lexical f1"]
    assert 0 < f1["value"] < 1 and f1["interval"][0] <= f1["value"] <= f1["interval"][1]
    # Curated, agreed and single documents, three annotators and the pre-annotator's tag.
    decided = commands["status"]["decided"]
    assert decided["curated"] > 0 and decided["agreed"] > 0 and decided["single"] > 0
    assert "gpt-test@low" in commands["markdown"]


def test_sections_without_inputs_say_so_in_one_line(commands: dict) -> None:
    sections = commands["sheet"]["sections"]
    assert sections["drawn"]["missing"].startswith("no sample dir given")
    assert sections["ppi"]["missing"].startswith("no surrogate part given")
    assert sections["plan"]["missing"] == "no plan given"
    for section in sections.values():
        if section["missing"]:
            assert "\n" not in section["missing"]
            assert f"Not available: {section['missing']}." in commands["markdown"]


def test_a_campaign_without_double_blind_or_system_says_so(
    label_studio: Any, kb: KB, tmp_path: Path
) -> None:
    name = f"plain-{uuid.uuid4().hex[:6]}"
    text = "IL-6 activates STAT3."
    docs = [Document(doc_id="pmid:1", text=text, role="primary")]
    push(label_studio.studio, docs, name, kb)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    _run(env, "datasheet", "--project", name, "-o", tmp_path / "sheet.md", "--bootstrap", 50)
    sections = _read(tmp_path / "sheet.json")["sections"]
    assert sections["agreement"]["missing"] == "no double documents: agreement cannot be measured"
    assert sections["effect"]["missing"].startswith("no blind documents in the campaign")
    assert sections["scores"]["missing"] == "no system scored on the gold"
    assert sections["effort"]["missing"] == "no completed annotation yet"
    # What there is, is described: one primary task, none annotated yet.
    assert sections["annotation"]["report"]["roles"]["primary"]["tasks"] == 1
    markdown = (tmp_path / "sheet.md").read_text()
    assert "Not available: no double documents: agreement cannot be measured." in markdown
