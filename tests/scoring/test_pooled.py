"""Pooled relative recall: items, folding, found-alone, bootstrap, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.scoring.inputs import Prediction, SystemPredictions
from goldloop.scoring.pooled import CAVEAT, pool_items, relative_recall
from tests.conftest import Cli


def run(name: str, *mentions: tuple[int, int, int, str | None]) -> SystemPredictions:
    """A run's predictions, each in document ``d<k>`` for its first number k."""
    predictions = [Prediction(f"d{k}", a, b, entity_id) for k, a, b, entity_id in mentions]
    return SystemPredictions(name, None, "rows", predictions, len(predictions))


def blank_documents(n: int) -> list[Document]:
    return [Document(doc_id=f"d{k}", text="") for k in range(n)]


def test_overlapping_mentions_of_one_folded_relation_are_one_item(kb: KB) -> None:
    items = pool_items(
        [
            [Prediction("d0", 0, 9, "RO.0002211"), Prediction("d0", 20, 28, "PEL.000018")],
            # "regulated by" folds onto "regulates"; its span overlaps run 0's.
            [Prediction("d0", 5, 14, "RO.0002334"), Prediction("d0", 20, 28, "PEL.000000")],
            [Prediction("d0", 13, 16, "RO.0002211"), Prediction("d0", 40, 45, "PEL.000018")],
        ],
        kb,
    )
    # One chained "regulates" item found by all three; inhibits at 20 (run 0) and at 40 (run 2)
    # are two items; activates at 20 is another relation, so its own item.
    assert sorted(sorted(i) for i in items) == [[0], [0, 1, 2], [1], [2]]


def test_relative_recall_counts_and_found_alone(kb: KB) -> None:
    a = run("a", (0, 0, 5, "PEL.000018"), (0, 10, 15, "PEL.000000"), (1, 0, 5, "PEL.000004"))
    b = run("b", (0, 2, 6, "PEL.000018"), (1, 0, 5, "PEL.000016"), (1, 7, 9, None))
    report = relative_recall(blank_documents(3), [a, b], kb, n_bootstrap=500, seed=1)
    assert (report.n_documents, report.n_pool) == (3, 4)
    run_a, run_b = report.runs
    assert (run_a.n_found, run_a.found_alone, run_b.n_found, run_b.found_alone) == (3, 2, 2, 1)
    assert run_b.n_abstained == 1
    assert run_a.relative_recall is not None and run_a.relative_recall.value == 0.75
    assert run_b.relative_recall is not None and run_b.relative_recall.value == 0.5
    for result in report.runs:
        recall = result.relative_recall
        assert recall is not None and recall.low is not None and recall.high is not None
        assert 0 <= recall.low <= recall.value <= recall.high <= 1
    assert report.to_dict()["caveat"] == CAVEAT


def test_bootstrap_interval_narrows_with_more_documents_and_is_seeded(kb: KB) -> None:
    rng = np.random.default_rng(7)

    def runs(n_docs: int) -> list[SystemPredictions]:
        first, second = [], []
        for d in range(n_docs):
            for k in range(4):
                mention = (d, 10 * k, 10 * k + 5, "PEL.000018")
                first.append(mention)
                if rng.random() < 0.6:
                    second.append(mention)
        return [run("first", *first), run("second", *second)]

    small = (
        relative_recall(blank_documents(20), runs(20), kb, n_bootstrap=400, seed=3)
        .runs[1]
        .relative_recall
    )
    large_runs = runs(400)
    large = (
        relative_recall(blank_documents(400), large_runs, kb, n_bootstrap=400, seed=3)
        .runs[1]
        .relative_recall
    )
    again = (
        relative_recall(blank_documents(400), large_runs, kb, n_bootstrap=400, seed=3)
        .runs[1]
        .relative_recall
    )
    assert small and large and small.low is not None and small.high is not None
    assert large.low is not None and large.high is not None
    assert large.high - large.low < (small.high - small.low) / 2
    assert large == again
    assert large.low < 0.6 < large.high


def test_pool_cli(tmp_path: Path, cli: Cli) -> None:
    documents = tmp_path / "docs.jsonl"
    documents.write_text(
        "".join(
            json.dumps({"doc_id": d, "text": "A inhibits B; C activates D."}) + "\n"
            for d in ("d1", "d2")
        )
    )
    first = tmp_path / "first.jsonl"
    second = tmp_path / "second.json"
    first.write_text(
        '{"doc_id": "d1", "a": 2, "b": 10, "entity_id_predicted": "PEL.000018"}\n'
        '{"doc_id": "d2", "a": 16, "b": 25, "entity_id_predicted": "PEL.000000"}\n'
        '{"doc_id": "d9", "a": 0, "b": 5, "entity_id_predicted": "PEL.000000"}\n'
    )
    second.write_text(
        json.dumps([{"doc_id": "d1", "a": 4, "b": 8, "entity_id_predicted": "PEL.000018"}])
    )
    result = cli(
        "pool", f"A={first}", second, "--documents", documents, "-o", tmp_path / "pool.json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "pool.json").read_text())
    assert [(r["name"], r["n_found"], r["n_malformed"]) for r in report["runs"]] == [
        ("A", 2, 1),
        ("second", 1, 0),
    ]
    assert report["runs"][1]["relative_recall"]["value"] == 0.5
    assert "overstates true recall" in result.out
    assert "A: rows left out: unknown_document 1" in result.out
    missing = cli("pool", first, tmp_path / "nope.json", "--documents", documents)
    assert missing.returncode == 2 and "nope.json" in missing.err
    before = second.read_bytes()
    over = cli("pool", f"A={first}", second, "--documents", documents, "-o", second)
    assert over.returncode == 2 and "an input is never overwritten" in over.err
    assert second.read_bytes() == before


def test_pool_reports_corpus_relative_recall_with_the_documents_design(
    tmp_path: Path, cli: Cli
) -> None:
    # d1 (p 0.5, weight 2) holds the item both runs found, d2 (p 0.25, weight 4) the one only A
    # found: "second" has 1 of 2 items in the sample, (2·1) / (2·1 + 4·1) = 1/3 on the corpus.
    documents = tmp_path / "docs.jsonl"
    documents.write_text(
        "".join(
            json.dumps(
                {"doc_id": d, "text": "A inhibits B; C activates D.", "p_incl": p, "batch": 0}
            )
            + "\n"
            for d, p in (("d1", 0.5), ("d2", 0.25))
        )
    )
    first = tmp_path / "first.jsonl"
    first.write_text(
        '{"doc_id": "d1", "a": 2, "b": 10, "entity_id_predicted": "PEL.000018"}\n'
        '{"doc_id": "d2", "a": 16, "b": 25, "entity_id_predicted": "PEL.000000"}\n'
    )
    second = tmp_path / "second.jsonl"
    second.write_text('{"doc_id": "d1", "a": 4, "b": 8, "entity_id_predicted": "PEL.000018"}\n')
    out = tmp_path / "pool.json"
    done = cli("pool", f"A={first}", second, "--documents", documents, "-o", out)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["runs"][1]["relative_recall"]["value"] == 0.5
    corpus = report["corpus"]
    assert corpus["relative_recall"] == {"A": 1.0, "second": pytest.approx(1 / 3)}
    assert (corpus["n_docs"], corpus["population_docs"]) == (2, 6.0)
    assert set(corpus["intervals"]) == {"A", "second"}
    assert list(corpus) == [
        "relative_recall", "intervals", "n_docs", "n_strata", "population_docs", "weights",
    ]  # fmt: skip
    assert "corpus (95%)" in done.stdout
    ignored = cli("pool", f"A={first}", second, "--documents", documents, "-o", out,
                  "--design", "ignore")  # fmt: skip
    assert ignored.returncode == 0, ignored.stderr
    assert json.loads(out.read_text())["corpus"]["relative_recall"]["second"] == 0.5
