"""``goldloop score`` and ``goldloop baselines`` through the real CLI entry point."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from goldloop.scoring.bootstrap import f1, ratio
from goldloop.scoring.design import Design
from goldloop.scoring.ppi_corpus import ppi_corpus_figures
from goldloop.scoring.regimes import REGIMES
from goldloop.scoring.report import results_tables
from goldloop.scoring.score_files import ScoreOptions, score_files
from goldloop.settings import DEMO_CORPUS
from tests.conftest import LEGACY, Cli, shared_kb
from tests.scoring.conftest import TEXTS, hit, row, write_gold_file


@pytest.fixture
def gold_file(tmp_path: Path) -> Path:
    return write_gold_file(tmp_path / "gold.json")


def _legacy_rows(tmp_path: Path) -> Path:
    """Predictions on the legacy file: its first 30 spans by itext, plus malformed rows."""
    gold = json.loads(LEGACY.read_text(encoding="utf-8"))
    rows = [
        {"itext": 0, "a": h["a"], "b": h["b"], "entity_id_predicted": h["entity_id"]}
        for h in gold["ground_truth"][:30]
    ]
    rows += [{"itext": 0, "a": 5}, {"doc_id": "pmid:404", "a": 1, "b": 3}, "not an object"]
    path = tmp_path / "system.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_score_on_the_legacy_file(tmp_path: Path, cli: Cli) -> None:
    system = _legacy_rows(tmp_path)
    out = tmp_path / "report"
    done = cli(
        "score", "--gold", LEGACY, "--system", f"sys={system}",
        "--system", f"self={LEGACY}", "--regime", "both", "--bootstrap", "50", "--report-dir", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "sys: 3 rows not scored (bad_offsets 1, not_an_object 1, unknown_document 1)" in done.err
    results = json.loads((out / "score_results.json").read_text(encoding="utf-8"))["results"]
    assert [(r["system"], r["regime"]) for r in results] == [
        ("sys", "end-to-end"), ("sys", "linking-only"),
        ("self", "end-to-end"), ("self", "linking-only"),
    ]  # fmt: skip
    sys_e2e = results[0]
    assert sys_e2e["inputs"] == {
        "format": "jsonl", "rows": 33, "scored": 30,
        "malformed": {"bad_offsets": 1, "unknown_document": 1, "not_an_object": 1},
        "unmapped_by_id_bridge": None,
    }  # fmt: skip
    # Both sides are folded through the KB, so the two converse gold ids still agree.
    assert (
        sys_e2e["detection"]["n_matched"] == 30 and sys_e2e["detection"]["entity_accuracy"] == 1.0
    )
    assert results[2]["detection"]["f1"] == 1.0
    assert results[1]["linking"]["coverage"] == pytest.approx(30 / 41)
    with (out / "score_results.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [r["system"] for r in table] == ["sys", "sys", "self", "self"]
    assert float(table[0]["f1"]) == pytest.approx(sys_e2e["detection"]["f1"])
    assert (out / "score_results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_input_exits_2_with_one_line(tmp_path: Path, gold_file: Path, cli: Cli) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"doc_id": "pmid:1", "a": 0, "b": 4}\n{oops\n', encoding="utf-8")
    out = tmp_path / "out"
    done = cli("score", "--gold", gold_file, "--system", f"x={broken}", "--report-dir", out)
    assert done.returncode == 2
    assert f"error: {broken}: line 2: not valid JSON" in done.err
    assert not out.exists()
    missing = cli("score", "--gold", tmp_path / "missing.json", "--system", f"x={broken}")
    assert missing.returncode == 2
    report = tmp_path / "report"
    report.write_text("a file", encoding="utf-8")
    not_a_folder = cli("score", "--gold", gold_file, "--system", gold_file, "--report-dir", report)
    assert not_a_folder.returncode == 2
    assert f"--report-dir {report}: is a file, not a folder" in not_a_folder.err
    system = tmp_path / "runs" / "score_results.json"
    system.parent.mkdir()
    system.write_text("[]", encoding="utf-8")
    over = cli("score", "--gold", gold_file, "--system", system, "--report-dir", system.parent)
    assert over.returncode == 2 and "an input is never overwritten" in over.err
    assert system.read_text(encoding="utf-8") == "[]"
    same = cli(
        "score", "--gold", gold_file, "--system", f"x={broken}", "--system", f"x={gold_file}"
    )
    assert same.returncode == 2 and "--system: the name 'x' is given twice" in same.err


def test_baselines_lexical_on_the_legacy_file(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "baselines"
    done = cli("baselines", "--gold", LEGACY, "--systems", "lexical", "--report-dir", out)
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "baseline_results.json").read_text(encoding="utf-8"))["results"]
    assert [(r["system"], r["regime"]) for r in results] == [
        ("lexical", "end-to-end"),
        ("lexical", "linking-only"),
    ]
    e2e, linking = results
    assert e2e["baseline"]["mentions"] == e2e["detection"]["n_predicted"] > 0
    assert 0 < e2e["detection"]["n_matched"] <= 41
    assert linking["linking"]["n_answered"] <= e2e["detection"]["n_matched"]
    with (out / "baseline_results.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert all(float(r["wall_time_s"]) > 0 for r in rows)


def test_the_headline_matches_within_each_document(tmp_path: Path, cli: Cli) -> None:
    """Two documents with a mention at the same offsets both count; under ``--match exact`` the
    headline P/R equal the exact schema's, from the nervaluate package itself; the seed's
    cross-document figure is only a labelled line."""
    texts = ["IL-6 activates STAT3 and binds JAK1.", "IL-8 activates STAT5 and binds JAK2."]
    assert texts[0].index("activates") == texts[1].index("activates")
    gold = tmp_path / "gold.json"
    gold.write_text(
        json.dumps(
            [
                {
                    "doc_id": f"pmid:{k}",
                    "text": text,
                    "ground_truth": [
                        hit(text, "activates", "PEL.000000"),
                        hit(text, "binds", "PEL.000003"),
                    ],
                }
                for k, text in enumerate(texts)
            ]
        ),
        encoding="utf-8",
    )

    def rows_for(doc: int, surface: str, entity_id: str) -> dict[str, object]:
        a = texts[doc].index(surface)
        return {"itext": doc, "a": a, "b": a + len(surface), "entity_id_predicted": entity_id}

    system = tmp_path / "system.json"
    system.write_text(
        json.dumps(
            [
                rows_for(0, "activates", "PEL.000000"),
                rows_for(0, "binds", "PEL.000003"),
                rows_for(1, "activates", "PEL.000000"),
                rows_for(1, "binds JAK2", "PEL.000003"),  # overlaps, but not the same boundaries
                rows_for(1, "STAT5", "PEL.000000"),  # overlaps nothing
            ]
        ),
        encoding="utf-8",
    )
    results = {}
    for match in ("overlap", "exact"):
        out = tmp_path / match
        done = cli(
            "score", "--gold", gold, "--system", f"s={system}", "--match", match,
            "--engine", "nervaluate", "--report-dir", out,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        results[match] = json.loads((out / "score_results.json").read_text())["results"][0]
        if match == "exact":
            assert (
                "s: seed-compatible detection (not the headline): matched 2, P 0.400, R 0.500"
            ) in done.out
    overlap, exact = results["overlap"], results["exact"]
    assert overlap["detection"]["n_matched"] == 4
    assert overlap["detection_seed_compatible"]["n_matched"] == 2
    assert exact["detection"]["n_matched"] == 3
    assert exact["detection_seed_compatible"]["n_matched"] == 2
    schema = exact["schemas"]["overall"]["exact"]
    assert (schema["correct"], schema["incorrect"], schema["spurious"]) == (3, 1, 1)
    assert exact["detection"]["precision"] == schema["precision"] == 3 / 5
    assert exact["detection"]["recall"] == schema["recall"] == 3 / 4
    assert exact["slices"]["relation"]["PEL.000000"]["n_found"] == 2


def _design_gold(tmp_path: Path, p_incl: list[float | None]) -> Path:
    """Four documents (the two texts twice), two hits each, with the design fields given."""
    documents = []
    for k, p in enumerate(p_incl):
        text = TEXTS[k % 2]
        hits = (
            [hit(text, "directly regulates", "RO.0002578"), hit(text, "binds to", "PEL.000003")]
            if k % 2 == 0
            else [hit(text, "activates", "PEL.000000"), hit(text, "associates with", "PEL.000002")]
        )
        document = {"doc_id": f"pmid:{k + 1}", "text": text, "ground_truth": hits}
        if p is not None:
            document |= {"p_incl": p, "stratum": "ab"[k % 2], "batch": 0}
        documents.append(document)
    path = tmp_path / "design_gold.json"
    path.write_text(json.dumps(documents), encoding="utf-8")
    return path


def _design_system(tmp_path: Path) -> Path:
    rows = [
        row(0, "directly regulates", "RO.0002578"),
        row(1, "activates", "PEL.000000"),
        row(1, "kinase", "PEL.000000"),  # no gold span there: a false positive
        {**row(1, "activates", "PEL.000003"), "doc_id": "pmid:4"},  # matched, wrong id
    ]
    path = tmp_path / "system.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _every_column_explained(
    stdout: str,
    shown: str,
    gold: Path,
    system: Path,
    options: ScoreOptions,
    surrogate: tuple[Path, Path] | None = None,
) -> None:
    """Every column the tables of score's run on these files show (``shown`` among them) is
    explained in the legend under them, as ``name: ...`` or ``a / b: ...``; the legend is
    printed."""
    _, results = score_files(gold, [("s", system)], shared_kb(), options, surrogate=surrogate)
    for table in results_tables(results, "score"):
        assert shown in table.headers
        explained = {
            name for entry in table.legend.split("; ") for name in entry.split(":")[0].split(" / ")
        }
        assert set(table.headers[1:]) <= explained, table.headers
        assert table.legend in " ".join(stdout.split())


def test_score_reports_corpus_figures_beside_the_sample_figures(tmp_path: Path, cli: Cli) -> None:
    gold, system = _design_gold(tmp_path, [0.5, 0.25, 0.5, 0.25]), _design_system(tmp_path)
    out = tmp_path / "report"
    done = cli(
        "score", "--gold", gold, "--system", f"s={system}", "--regime", "both",
        "--bootstrap", "200", "--report-dir", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    e2e, linking = json.loads((out / "score_results.json").read_text(encoding="utf-8"))["results"]
    # Weights 1/p: 2, 4, 2, 4. Per document (gold, predicted, matched, id correct of comparable):
    # (2, 1, 1, 1/1), (2, 2, 1, 1/1), (2, 0, 0, -), (2, 1, 1, 0/1).
    gold_w, predicted_w, matched_w = 2 * 2 + 4 * 2 + 2 * 2 + 4 * 2, 2 + 4 * 2 + 4, 2 + 4 + 4
    corpus = e2e["corpus"]
    assert corpus["precision"] == pytest.approx(matched_w / predicted_w)  # 10/14
    assert corpus["recall"] == pytest.approx(matched_w / gold_w)  # 10/24
    precision, recall = matched_w / predicted_w, matched_w / gold_w
    assert corpus["f1"] == pytest.approx(2 * precision * recall / (precision + recall))
    assert corpus["entity_accuracy"] == pytest.approx((2 + 4) / (2 + 4 + 4))
    assert (corpus["n_docs"], corpus["n_strata"], corpus["population_docs"]) == (4, 2, 12.0)
    low, high = corpus["intervals"]["precision"]
    assert low <= corpus["precision"] <= high
    # The sample figures are unchanged: 3 of 4 predictions, 3 of 8 gold mentions.
    assert (e2e["detection"]["precision"], e2e["detection"]["recall"]) == (0.75, 0.375)
    # Linking-only: answered in documents 1, 2, 4 (weights 2 + 4 + 4), right in 1 and 2.
    assert linking["corpus"]["accuracy_overall"] == pytest.approx(6 / gold_w)
    assert linking["corpus"]["coverage"] == pytest.approx(10 / gold_w)
    assert "corpus F1" in done.stdout and "corpus acc" in done.stdout
    options = ScoreOptions(regimes=REGIMES, bootstrap=200)
    _every_column_explained(done.stdout, "corpus 95%", gold, system, options)
    with (out / "score_results.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert float(table[0]["corpus_f1"]) == pytest.approx(corpus["f1"])
    assert float(table[0]["population_docs"]) == 12.0


def test_score_without_a_design_says_why_and_refuses_a_mixed_one(tmp_path: Path, cli: Cli) -> None:
    system = _design_system(tmp_path)
    out = tmp_path / "none"
    done = cli("score", "--gold", _design_gold(tmp_path, [None] * 4), "--system", f"s={system}",
               "--report-dir", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no corpus figures: the gold carries no p_incl" in done.err
    result = json.loads((out / "score_results.json").read_text(encoding="utf-8"))["results"][0]
    assert result["corpus"] is None
    mixed = _design_gold(tmp_path, [0.5, None, 0.5, 0.25])
    refused = cli(
        "score", "--gold", mixed, "--system", f"s={system}", "--report-dir", tmp_path / "m"
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"error: --design: {mixed}: document 2 ('pmid:2') has no p_incl while document 1"
        " ('pmid:1') has one; 'ignore' scores with equal weights"
    ]
    assert not (tmp_path / "m").exists()
    ignored = tmp_path / "ignored"
    done = cli("score", "--gold", mixed, "--system", f"s={system}", "--design", "ignore",
               "--report-dir", ignored)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((ignored / "score_results.json").read_text(encoding="utf-8"))["results"][0]
    assert result["corpus"]["weights"] == "equal"
    for name in ("precision", "recall", "f1", "entity_accuracy"):
        assert result["corpus"][name] == pytest.approx(result["detection"][name])


def test_baselines_keep_the_kb_embeddings_under_the_home_the_command_read(
    tmp_path: Path, cli: Cli, encoder_dir: Path, gold_file: Path
) -> None:
    home = tmp_path / "home"
    args = ["baselines", "--gold", gold_file, "--systems", "encoder", "--encoder", encoder_dir]
    done = cli(*args, "--report-dir", tmp_path / "out", env={"GOLDLOOP_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    (cached,) = (home / "encoder").iterdir()  # one KB, one encoder: the door's folder
    assert cached.suffix == ".npy"


def _surrogate_files(tmp_path: Path, annotator: str = "llm:m") -> tuple[Path, Path, Path]:
    """The pre-annotation of ``_design_gold``'s four documents (one mention of each missed) and
    a surrogate part of six documents (the two texts again, strata a and b, weight 4), both by
    ``annotator``; and a system file holding predictions for both parts."""
    pre = json.loads(_design_gold(tmp_path, [0.5, 0.25, 0.5, 0.25]).read_text(encoding="utf-8"))
    for document in pre:
        document["ground_truth"] = [
            {**h, "annotator": "llm:m", "source": "llm"} for h in document["ground_truth"][:1]
        ]
    part = []
    for k in range(6):
        text = TEXTS[k % 2]
        found = [hit(text, "directly regulates", "RO.0002578")] if k % 2 == 0 else [
            hit(text, "activates", "PEL.000000"), hit(text, "associates with", "PEL.000002"),
        ]  # fmt: skip
        part.append({
            "doc_id": f"s{k}", "text": text, "role": "surrogate", "stratum": "ab"[k % 2],
            "batch": 0, "p_incl": 0.25,
            "ground_truth": [{**h, "annotator": annotator, "source": "llm"} for h in found],
        })  # fmt: skip
    rows = json.loads(_design_system(tmp_path).read_text(encoding="utf-8"))
    for k in range(6):
        rows.append({**row(k % 2, "activates" if k % 2 else "directly regulates",
                           "PEL.000000" if k % 2 else "RO.0002578"), "doc_id": f"s{k}"})  # fmt: skip
    paths = tmp_path / "pre.json", tmp_path / "surrogate.json", tmp_path / "both.json"
    for path, data in zip(paths, (pre, part, rows), strict=True):
        path.write_text(json.dumps(data), encoding="utf-8")
    return paths


def test_score_with_a_surrogate_part_adds_prediction_powered_figures(
    tmp_path: Path, cli: Cli
) -> None:
    """``corpus_ppi`` beside ``corpus``: the same figures, λ per stratum, the effective documents;
    its value is PPI's on the counts worked out here (gold, predicted, matched per document)."""
    gold = _design_gold(tmp_path, [0.5, 0.25, 0.5, 0.25])
    pre, part, system = _surrogate_files(tmp_path)
    out = tmp_path / "report"
    done = cli(
        "score", "--gold", gold, "--system", f"s={system}", "--regime", "both",
        "--surrogate", part, "--pre-annotations", pre, "--report-dir", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    e2e, linking = json.loads((out / "score_results.json").read_text(encoding="utf-8"))["results"]
    ppi = e2e["corpus_ppi"]
    assert list(ppi)[: len(e2e["corpus"])] == list(e2e["corpus"])
    assert set(ppi["lambda"]["f1"]) == {"a", "b"} and ppi["surrogate_docs"] == 6
    assert "corpus_ppi" in linking and linking["corpus_ppi"]["n_docs"] == 4
    # The human documents' predictions only: the sample figures are as without a surrogate.
    assert (e2e["detection"]["precision"], e2e["detection"]["recall"]) == (0.75, 0.375)
    # (gold, predicted, matched) against the gold, against the pre-annotation, on the surrogate.
    y = np.array([[2, 1, 1], [2, 2, 1], [2, 0, 0], [2, 1, 1]])
    f = np.array([[1, 1, 1], [1, 2, 1], [1, 0, 0], [1, 1, 1]])
    s = np.array([[1, 1, 1], [2, 1, 1]] * 3)
    strata = np.array(["a", "b", "a", "b"])
    design = Design(np.array([2.0, 4, 2, 4]), np.array([0, 1, 0, 1]), 2, "1/p_incl", strata)
    labels = np.array(["a", "b"] * 3)
    part_design = Design(np.full(6, 4.0), np.array([0, 1] * 3), 2, "1/p_incl", labels)

    def detection(t: np.ndarray) -> dict[str, np.ndarray]:
        precision, recall = ratio(t[:, 2], t[:, 1]), ratio(t[:, 2], t[:, 0])
        return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}

    expected = ppi_corpus_figures(y, f, s, detection, design, part_design)
    for name in ("precision", "recall", "f1"):
        assert ppi[name] == pytest.approx(expected.values[name])
        assert ppi["intervals"][name] == pytest.approx(expected.intervals[name])
    assert "PPI 95%" in done.stdout and "corpus 95%" in done.stdout
    options = ScoreOptions(regimes=REGIMES)
    _every_column_explained(done.stdout, "PPI 95%", gold, system, options, (part, pre))


def test_score_refuses_a_surrogate_that_cannot_stand_with_the_gold(
    tmp_path: Path, cli: Cli
) -> None:
    """One line, exit 2, no report: each error names the file (and document) or the option."""
    gold = _design_gold(tmp_path, [0.5, 0.25, 0.5, 0.25])
    pre, part, system = _surrogate_files(tmp_path)
    (tmp_path / "o").mkdir()
    _, other, _ = _surrogate_files(tmp_path / "o", annotator="llm:other")
    no_p = tmp_path / "no_p.json"
    no_p.write_text(json.dumps([{k: v for k, v in d.items() if k != "p_incl"} for d in
                                json.loads(part.read_text(encoding="utf-8"))]), encoding="utf-8")  # fmt: skip
    plain = _design_gold(tmp_path / "o", [None] * 4)
    cases = [
        (["--surrogate", part], "error: --surrogate needs --pre-annotations"),
        (["--surrogate", pre, "--pre-annotations", pre],
         f"error: {pre}: document 1 ('pmid:1') is not of a surrogate part (role None"),
        (["--surrogate", part, "--pre-annotations", part],
         f"error: {part}: document 1 ('s0') is not among the gold's"),
        (["--surrogate", other, "--pre-annotations", pre],
         f"error: {pre} and {other} were pre-annotated by different annotators (llm:m against"
         " llm:other)"),
        (["--surrogate", no_p, "--pre-annotations", pre],
         f"error: {no_p}: document 1 ('s0') has no p_incl"),
    ]  # fmt: skip
    for extra, message in cases:
        out = tmp_path / "never"
        done = cli("score", "--gold", gold, "--system", f"s={system}", *extra, "--report-dir", out)
        assert done.returncode == 2, (extra, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and " ".join(lines[0].split()).startswith(message), lines
        assert not out.exists()
    done = cli("score", "--gold", plain, "--system", f"s={system}", "--surrogate", part,
               "--pre-annotations", pre, "--report-dir", tmp_path / "never")  # fmt: skip
    assert done.returncode == 2
    assert f"error: {plain}: no document carries p_incl" in done.err
    assert not (tmp_path / "never").exists()


def test_the_loop_with_a_surrogate_part_from_sample_to_score(tmp_path: Path, cli: Cli) -> None:
    """``sample --surrogate``, ``annotate`` (lexical) of both parts, then ``score --surrogate``:
    the files the commands write stand together (roles, p_incl, strata, one annotator). The
    people's gold here is the lexical pre-annotation with each document's last hit removed, and
    the system is the pre-annotation itself, so the gold's recall of it is below 1."""
    sample = tmp_path / "sample"
    done = cli("sample", "--corpus", DEMO_CORPUS, "--out", sample, "--n-primary", "8",
               "--n-double", "0", "--n-reserve", "0", "--surrogate", "14", "--seed", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"surrogate part: 14 documents in {sample / 'surrogate'}" in done.out
    for part, out in ((sample, tmp_path / "pre.json"), (sample / "surrogate", tmp_path / "s.json")):
        done = cli("annotate", "--sample", part, "--out", out, "--provider", "lexical")
        assert done.returncode == 0, done.stderr
    pre = json.loads((tmp_path / "pre.json").read_text(encoding="utf-8"))
    assert {d["role"] for d in json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))} == {
        "surrogate"
    }
    gold = tmp_path / "gold.json"
    gold.write_text(
        json.dumps([{**d, "ground_truth": d["ground_truth"][:-1]} for d in pre]), encoding="utf-8"
    )
    # A system's file holds each document once: a document in both parts (the surrogate part
    # is drawn independently of the people's) appears once.
    both = {d["doc_id"]: d for d in json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))}
    both.update((d["doc_id"], d) for d in pre)
    system = tmp_path / "system.json"
    system.write_text(json.dumps(list(both.values())), encoding="utf-8")
    out = tmp_path / "report"
    done = cli("score", "--gold", gold, "--system", f"lex={system}", "--surrogate",
               tmp_path / "s.json", "--pre-annotations", tmp_path / "pre.json",
               "--report-dir", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "score_results.json").read_text(encoding="utf-8"))["results"][0]
    ppi = result["corpus_ppi"]
    assert ppi["surrogate_docs"] == 14 and ppi["n_docs"] == 8
    assert set(ppi["lambda"]["f1"]) <= {d["stratum"] for d in pre}
    assert ppi["recall"] is not None and 0 <= ppi["recall"] <= 1
    low, high = ppi["intervals"]["precision"]
    assert low is not None and high is not None and low <= ppi["precision"] <= high
