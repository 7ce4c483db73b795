"""``goldloop plan`` and ``sample --extend --plan`` offline: a pilot drawn from a real corpus, the
plan, the planned batch drawn (its documents per stratum, its p_incl recorded), and the error
promise (another sample, a stale plan, a target already reached, a budget below one document, no
effort record: one line, exit 2 or a plain statement, nothing written or drawn)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from goldloop.formats.documents import read_documents
from goldloop.sample import read_manifest
from tests.cli.plan_campaign import write_corpus, write_gold_and_system, write_surrogate
from tests.conftest import run_goldloop

PILOT = ["--n-primary", "40", "--n-double", "0", "--n-reserve", "0", "--tail-top-k", "10"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plan")
    corpus = write_corpus(root / "corpus.tsv")
    sample = root / "sample"
    drawn = run_goldloop(["sample", "--corpus", corpus, "--out", sample, *PILOT, "--seed", "3"])
    assert drawn.returncode == 0, drawn.stderr
    other = root / "other"
    drawn = run_goldloop(["sample", "--corpus", corpus, "--out", other, *PILOT, "--seed", "4"])
    assert drawn.returncode == 0, drawn.stderr
    write_gold_and_system(read_documents(sample), root / "gold.json", root / "system.json")
    return {"root": root, "corpus": corpus, "sample": sample, "other": other,
            "gold": root / "gold.json", "system": root / "system.json"}  # fmt: skip


def plan_args(c: dict[str, Path], out: Path, *extra: object) -> list[object]:
    return ["plan", "--gold", c["gold"], "--sample", c["sample"], "--system",
            f"sys={c['system']}", "--out", out, *extra]  # fmt: skip


def test_plan_then_the_planned_batch(campaign, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    made = run_goldloop(plan_args(campaign, out, "--half-width", "0.08",
                                  "--minutes-per-document", "2", "--usd-per-document", "0.001"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    plan = json.loads(out.read_text())
    assert "anytime-valid 95% half-width" in made.stdout
    assert plan["sample"]["batches"] == 1 and plan["metric"] == "f1"
    assert plan["now"]["n_docs"] == 40 and not plan["reached"]
    assert plan["now"]["anytime_half_width"] > plan["now"]["half_width"]
    batch = plan["next_batch"]
    assert batch["expected_anytime_half_width"] <= 0.08
    assert batch["minutes"] == pytest.approx(2 * batch["documents"])
    assert batch["llm_usd"] == pytest.approx(0.001 * batch["documents"], abs=1e-6)
    assert {s["minutes_from"] for s in plan["strata"]} == {"stated"}
    # The sample grows by exactly the plan's batch, its p_incl the plan's counts over what was left.
    sample = campaign["root"] / "grown"
    _copy(campaign["sample"], sample)
    plan["sample"]["dir"] = str(sample)
    out.write_text(json.dumps(plan))
    drawn = run_goldloop(["sample", "--corpus", campaign["corpus"], "--out", sample,
                          "--extend", "--plan", out, "--tail-top-k", "10"])  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    rows = [r for r in read_manifest(sample) if r.batch == 1]
    assert len(rows) == batch["documents"]
    assert Counter(r.stratum for r in rows) == {k: v for k, v in batch["by_stratum"].items() if v}
    left = {s["name"]: s["remaining"] for s in plan["strata"]}
    for row in rows:
        assert row.p_incl == pytest.approx(batch["by_stratum"][row.stratum] / left[row.stratum])
    assert {r.role for r in rows} == {"primary"}
    report = json.loads((sample / "sampling_report.batch1.json").read_text())
    assert report["settings"]["planned"] == batch["by_stratum"]
    # The same plan again: the sample has grown since; refused, nothing drawn.
    again = run_goldloop(["sample", "--corpus", campaign["corpus"], "--out", sample,
                          "--extend", "--plan", out, "--tail-top-k", "10"])  # fmt: skip
    assert again.returncode == 2
    assert again.stderr.strip().startswith("error:") and "plan again" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert len(read_manifest(sample)) == 40 + batch["documents"]


def test_a_plan_for_another_sample_is_refused(campaign, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    assert run_goldloop(plan_args(campaign, out, "--budget-minutes", "200",
                                  "--minutes-per-document", "2")).returncode == 0  # fmt: skip
    before = (campaign["other"] / "manifest.csv").read_bytes()
    refused = run_goldloop(["sample", "--corpus", campaign["corpus"], "--out", campaign["other"],
                            "--extend", "--plan", out])  # fmt: skip
    assert refused.returncode == 2
    assert "the plan is for another sample" in refused.stderr
    assert (campaign["other"] / "manifest.csv").read_bytes() == before
    # The gold of one sample planned against another: refused naming a document.
    crossed = run_goldloop(["plan", "--gold", campaign["gold"], "--sample", campaign["other"],
                            "--system", f"sys={campaign['system']}", "--out", tmp_path / "x.json",
                            "--half-width", "0.05", "--minutes-per-document", "2"])  # fmt: skip
    assert crossed.returncode == 2 and "different campaigns" in crossed.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--budget-minutes", "0.5", "--minutes-per-document", "2"], "below one document"),
        (["--budget-minutes", "5", "--minutes-per-document", "2"], "one each"),
        (["--half-width", "0.05"], "no effort record"),
        (["--half-width", "0.05", "--budget-minutes", "10"], "give one target"),
        (["--half-width", "0.05", "--metric", "accuracy"], "--metric"),
    ],
)
def test_refusals_write_nothing(campaign, tmp_path: Path, extra, message) -> None:
    out = tmp_path / "plan.json"
    refused = run_goldloop(plan_args(campaign, out, *extra))
    assert refused.returncode == 2, refused.stdout
    assert message in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stderr
    assert not out.exists()


def test_a_target_already_reached_is_a_plain_statement(campaign, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    reached = run_goldloop(plan_args(campaign, out, "--half-width", "0.9",
                                     "--minutes-per-document", "2"))  # fmt: skip
    assert reached.returncode == 0
    assert "target reached: stop here" in reached.stdout
    assert not out.exists()


def _copy(source: Path, target: Path) -> None:
    import shutil

    shutil.copytree(source, target)


def test_with_a_surrogate_part_the_figure_is_score_s_prediction_powered_one(
    tmp_path: Path,
) -> None:
    """The plan reads a surrogate part as ``score --surrogate`` does: its figure and fixed-size
    interval are score's ``corpus_ppi`` F1 (#45's estimator), and the plan records the part so
    that ``status --plan`` reads it again."""
    corpus = write_corpus(tmp_path / "corpus.tsv")
    sample = tmp_path / "sample"
    drawn = run_goldloop(["sample", "--corpus", corpus, "--out", sample, *PILOT, "--seed", "3",
                          "--surrogate", "60"])  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    gold, pre, part, system = (tmp_path / f"{n}.json" for n in ("gold", "pre", "part", "system"))
    documents = read_documents(sample)
    write_gold_and_system(documents, gold, tmp_path / "unused.json")
    write_surrogate(documents, read_documents(sample / "surrogate"), pre, part, system)
    out = tmp_path / "plan.json"
    made = run_goldloop(["plan", "--gold", gold, "--sample", sample, "--system", f"sys={system}",
                         "--surrogate", part, "--pre-annotations", pre, "--half-width", "0.02",
                         "--minutes-per-document", "2", "--out", out])  # fmt: skip
    assert made.returncode == 0, made.stderr
    plan = json.loads(out.read_text())
    assert plan["surrogate"] == {"part": str(part), "pre_annotations": str(pre)}
    assert 0 <= plan["now"]["surrogate_lambda"] <= 1
    scored = run_goldloop(["score", "--gold", gold, "--system", f"sys={system}", "--surrogate",
                           part, "--pre-annotations", pre, "--report-dir", tmp_path / "r"])  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    [result] = json.loads((tmp_path / "r" / "score_results.json").read_text())["results"]
    ppi = result["corpus_ppi"]
    assert plan["now"]["value"] == pytest.approx(ppi["f1"], abs=1e-6)
    low, high = ppi["intervals"]["f1"]
    assert plan["now"]["half_width"] == pytest.approx((high - low) / 2, abs=1e-4)
    # Only one of the two files: refused as score refuses it, nothing written.
    alone = run_goldloop(["plan", "--gold", gold, "--sample", sample, "--system",
                          f"sys={system}", "--surrogate", part, "--half-width", "0.02",
                          "--minutes-per-document", "2", "--out", tmp_path / "p2.json"])  # fmt: skip
    assert alone.returncode == 2 and "--surrogate needs --pre-annotations" in alone.stderr
    assert not (tmp_path / "p2.json").exists()


def test_status_refuses_a_file_that_is_no_plan(campaign, tmp_path: Path) -> None:
    from goldloop.cli.plan import plan_line
    from goldloop.errors import GoldloopError

    bad = tmp_path / "plan.json"
    bad.write_text('{"system": {}}')
    with pytest.raises(GoldloopError, match=r"^--plan .*: not a plan written by goldloop plan"):
        plan_line(bad, read_documents(campaign["gold"]), None)
