"""``goldloop datasheet`` from files (no campaign): the sections it can fill equal their commands'
reports, the others say so in one line; bad input exits 2 before any work and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.formats.documents import read_documents
from goldloop.formats.gold import Document, Hit, write_gold
from tests.cli.plan_campaign import write_corpus, write_gold_and_system, write_surrogate
from tests.conftest import Cli, run_goldloop

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
TEXT = "IL-6 activates STAT3. TNF inhibits IkB. A binds B."
SPANS = [(5, 14, "PEL.000009", "forward"), (26, 34, "PEL.000018", "forward")]


def write(path: Path, spans: list[tuple[int, int, str, str]], n: int = 6) -> Path:
    documents = [
        Document(
            doc_id=f"pmid:{i}",
            text=TEXT,
            batch=0,
            role="primary",
            stratum="s" + str(i % 2),
            p_incl=0.5 if i % 2 else 0.25,
            ground_truth=[
                Hit(a=a, b=b, surface=TEXT[a:b], entity_id=e, direction=d)
                for a, b, e, d in spans[: 1 + i % 2]
            ],
        )
        for i in range(n)
    ]
    write_gold(path, documents)
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {"gold": write(tmp_path / "gold.json", SPANS), "system": write(
        tmp_path / "system.json", SPANS[:1])}  # fmt: skip


def test_a_datasheet_from_files_says_what_it_lacks(files: dict[str, Path], cli: Cli) -> None:
    gold, out = files["gold"], files["gold"].with_name("sheet.md")
    done = cli("datasheet", "--gold", gold, "--sample", SAMPLE, "--system",
               f"lexical={files['system']}", "--bootstrap", 50, "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    sheet = json.loads(out.with_suffix(".json").read_text())["sections"]
    stats = out.with_name("stats")
    assert cli("stats", "--gold", gold, "--sample", SAMPLE, "--report-dir", stats).returncode == 0
    expected = json.loads((stats / "dataset_stats.json").read_text())
    assert sheet["gold"]["report"] == expected
    assert {k: v for k, v in sheet["drawn"]["report"].items() if k != "sampling_reports"} == (
        expected
    )
    batch0 = json.loads((SAMPLE / "sampling_report.batch0.json").read_text())
    assert sheet["drawn"]["report"]["sampling_reports"][0] == batch0
    score = out.with_name("score")
    assert cli("score", "--gold", gold, "--system", f"lexical={files['system']}", "--bootstrap",
               50, "--report-dir", score).returncode == 0  # fmt: skip
    results = json.loads((score / "score_results.json").read_text())["results"]
    f1 = next(f for f in sheet["scores"]["figures"] if f["name"] == "lexical f1")
    assert f1["value"] == results[0]["detection"]["f1"] == pytest.approx(2 / 3 * 2 / (1 + 2 / 3))
    assert f1["interval"] == results[0]["intervals"]["f1"]
    # The gold carries p_incl: the corpus F1 is cited too, as the corpus's.
    corpus = next(f for f in sheet["scores"]["figures"] if f["name"] == "lexical corpus f1")
    assert corpus["estimates"] == "corpus" and corpus["value"] == results[0]["corpus"]["f1"]
    for key in ("annotation", "agreement", "quality", "effort", "effect"):
        assert sheet[key]["missing"] == "no campaign given: not described"
        assert sheet[key]["report"] is None
    markdown = out.read_text()
    assert markdown.count("Not available: no campaign given: not described.") == 5
    assert f"| lexical f1 | {f1['value']:.3f} |" in markdown
    assert "not available:" in done.out


def test_no_system_says_so(files: dict[str, Path], cli: Cli) -> None:
    out = files["gold"].with_name("sheet.md")
    assert cli("datasheet", "--gold", files["gold"], "-o", out).returncode == 0
    sheet = json.loads(out.with_suffix(".json").read_text())["sections"]
    assert sheet["scores"]["missing"] == "no system scored on the gold"
    assert sheet["drawn"]["missing"] == "no sample dir given: the draw is not described"
    assert "Not available: no system scored on the gold." in out.read_text()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "give --project NAME (a campaign), --gold GOLD, or both"),
        (("--gold", "{gold}", "-o", "{gold}"), "--out"),
        (("--gold", "{gold}", "-o", "{dir}/a.md", "--json", "{dir}/a.md"), "same file"),
        (("--gold", "{gold}", "-o", "{dir}"), "--out"),
        (("--project", "x", "--system", "a={gold}"), "--system: give the --gold"),
        (("--gold", "{dir}/broken.json", "-o", "{dir}/sheet.md"), "broken.json"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    files: dict[str, Path], cli: Cli, args: tuple[str, ...], says: str
) -> None:
    folder, gold = files["gold"].parent, files["gold"]
    (folder / "broken.json").write_text('[{"doc_id": "pmid:1"}]')
    # A good datasheet from before: a failed run leaves it as it was.
    (folder / "sheet.md").write_text("good")
    (folder / "sheet.json").write_text("{}")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    done = cli("datasheet", *(a.format(gold=gold, dir=folder) for a in args))
    assert done.returncode == 2, done.stdout
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_page_from_files_says_what_it_lacks(files: dict[str, Path], cli: Cli) -> None:
    out = files["gold"].with_name("page.html")
    done = cli("report", "--gold", files["gold"], "--system", f"lexical={files['system']}",
               "--bootstrap", 50, "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert page.count('class="chart empty"') == 4  # status, relations, effort, effect
    assert "Not available: no campaign given: not described." in page
    assert "<svg" in page and "http" not in page.split("<body>")[1]  # nothing to fetch


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--gold", "{gold}", "-o", "{gold}"), "--out"),
        (("--gold", "{gold}", "--watch", "-o", "{dir}/page.html"), "--watch: give --project"),
    ],
)
def test_the_page_refuses_bad_input_before_work(
    files: dict[str, Path], cli: Cli, args: tuple[str, ...], says: str
) -> None:
    folder, gold = files["gold"].parent, files["gold"]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    done = cli("report", *(a.format(gold=gold, dir=folder) for a in args))
    assert done.returncode == 2 and says in done.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_prediction_powered_figures_and_the_plan_are_the_commands(tmp_path: Path) -> None:
    """With a surrogate part and a plan: the ppi section cites score's ``corpus_ppi``, and the
    plan section where the plan's figure stands on the gold the plan was made on (the plan's own
    ``now``)."""
    corpus = write_corpus(tmp_path / "corpus.tsv")
    sample = tmp_path / "sample"
    drawn = run_goldloop(["sample", "--corpus", corpus, "--out", sample, "--n-primary", "40",
                          "--n-double", "0", "--n-reserve", "0", "--tail-top-k", "10", "--seed",
                          "3", "--surrogate", "60"])  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    gold, pre, part, system = (tmp_path / f"{n}.json" for n in ("gold", "pre", "part", "system"))
    documents = read_documents(sample)
    write_gold_and_system(documents, gold, tmp_path / "unused.json")
    write_surrogate(documents, read_documents(sample / "surrogate"), pre, part, system)
    surrogate = ["--surrogate", part, "--pre-annotations", pre]
    plan = tmp_path / "plan.json"
    made = run_goldloop(["plan", "--gold", gold, "--sample", sample, "--system", f"sys={system}",
                         *surrogate, "--half-width", "0.02", "--minutes-per-document", "2",
                         "--out", plan])  # fmt: skip
    assert made.returncode == 0, made.stderr
    scored = run_goldloop(["score", "--gold", gold, "--system", f"sys={system}", *surrogate,
                           "--bootstrap", 50, "--report-dir", tmp_path / "r"])  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    [result] = json.loads((tmp_path / "r" / "score_results.json").read_text())["results"]
    out = tmp_path / "sheet.md"
    done = run_goldloop(["datasheet", "--gold", gold, "--sample", sample, "--system",
                         f"sys={system}", *surrogate, "--plan", plan, "--bootstrap", 50,
                         "-o", out])  # fmt: skip
    assert done.returncode == 0, done.stderr
    sections = json.loads(out.with_suffix(".json").read_text())["sections"]
    ppi = {f["name"]: f for f in sections["ppi"]["figures"]}
    f1 = ppi["sys corpus f1 (prediction-powered)"]
    assert f1["value"] == result["corpus_ppi"]["f1"] is not None
    assert f1["interval"] == result["corpus_ppi"]["intervals"]["f1"]
    assert f1["estimates"] == "corpus"
    now = json.loads(plan.read_text())["now"]
    standing = sections["plan"]["report"]
    for key in ("value", "half_width", "anytime_half_width", "n_docs"):
        assert standing[key] == now[key], key
    assert standing["line"].startswith("plan: corpus f1 of sys") and not standing["reached"]
    assert standing["line"] in out.read_text()
