"""``goldloop agree`` end to end: files in, table out, JSON written, bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.formats.gold import Document, Hit, write_gold
from tests.conftest import Cli

TEXT = "IL-6 regulates TNF. A inhibits B."


def write(path: Path, *hits: tuple[int, int, str, str]) -> Path:
    ground_truth = [
        Hit(a=a, b=b, surface=TEXT[a:b], entity_id=entity_id, direction=direction)
        for a, b, entity_id, direction in hits
    ]
    write_gold(path, [Document(doc_id="pmid:1", text=TEXT, ground_truth=ground_truth)])
    return path


def test_agree_writes_the_report_and_prints_a_table(tmp_path: Path, cli: Cli) -> None:
    a = write(
        tmp_path / "a.json", (5, 14, "RO.0002211", "forward"), (22, 30, "PEL.000018", "forward")
    )
    b = write(
        tmp_path / "b.json", (5, 14, "RO.0002334", "inverse"), (22, 30, "PEL.000000", "forward")
    )
    result = cli("agree", "--gold", a, "--other", b, "-o", tmp_path / "k.json")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "k.json").read_text())
    # B named "regulated by" (the converse): raw κ sees two different ids, folded κ one.
    assert report["n_span_matched"] == 2
    assert report["kappa_entity_id"] == 0.0
    assert report["kappa_entity_id_folded"] == pytest.approx(1 / 3)
    assert report["confusion"]["PEL.000018"] == {"PEL.000000": 1}
    assert "kappa_entity_id_folded" in result.out
    assert "inhibits (PEL.000018)" in result.out
    # Span agreement: both spans at the same offsets; only 5-14 also agrees on relation.
    assert report["span_f1"]["strict"]["f1"] == 1.0
    assert report["span_f1_labelled"]["strict"]["f1"] == 0.5
    assert report["incomplete"] == {"only_a": 0, "only_b": 0}
    assert [row["entity_id"] for row in report["per_relation"]] == [
        "RO.0002211",
        "PEL.000000",
        "PEL.000018",
    ]  # fmt: skip  (B's converse folds onto A's RO.0002211: two spans a side)
    assert "labelled F1 strict" in result.out and "α_u spans" in result.out
    chart = tmp_path / "k.png"
    assert chart.read_bytes().startswith(b"\x89PNG")


def test_agree_default_report_path(tmp_path: Path, cli: Cli) -> None:
    a = write(tmp_path / "a.json", (5, 14, "RO.0002211", "forward"))
    result = cli("agree", "--gold", a, "--other", a)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "a.json.agreement.json").read_text())["n_pairs"] == 1
    assert (tmp_path / "a.json.agreement.png").exists()


def test_agree_bad_input_exits_2_and_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    a = write(tmp_path / "a.json", (5, 14, "RO.0002211", "forward"))
    broken = tmp_path / "b.json"
    broken.write_text('[{"doc_id": "pmid:1"}]')
    result = cli("agree", "--gold", a, "--other", broken, "-o", tmp_path / "k.json")
    assert result.returncode == 2
    assert "b.json" in result.stderr and "text" in result.stderr
    assert not (tmp_path / "k.json").exists()
    assert not (tmp_path / "k.png").exists()
    assert cli("agree", "--gold", a).returncode == 2


def test_agree_never_writes_over_an_input(tmp_path: Path, cli: Cli) -> None:
    a = write(tmp_path / "a.json", (5, 14, "RO.0002211", "forward"))
    before = a.read_bytes()
    result = cli("agree", "--gold", a, "--other", a, "-o", a)
    assert result.returncode == 2
    assert "--out" in result.err and "an input is never overwritten" in result.err
    assert a.read_bytes() == before
    result = cli("agree", "--gold", a, "--other", a, "--png", a)
    assert result.returncode == 2 and "--png" in result.err
    assert a.read_bytes() == before


def test_agree_reports_the_corpus_kappa_from_the_design(tmp_path: Path, cli: Cli) -> None:
    # Document 1 (p 0.5, weight 2): both say RO.0002211. Document 2 (p 0.25, weight 4): A says
    # PEL.000018, B PEL.000000. Pairs weighted by their document: observed 2/6; chance from the
    # weighted margins, A (RO 2, PEL18 4), B (RO 2, PEL00 4): (2·2) / 6² = 1/9.
    def gold(path: Path, second: str, design: bool) -> Path:
        documents = [
            Document(
                doc_id=f"pmid:{k}",
                text=TEXT,
                ground_truth=[Hit(a=a, b=b, surface=TEXT[a:b], entity_id=entity_id)],
                **({"p_incl": p, "stratum": "s", "batch": 0} if design else {}),
            )
            for k, (a, b, entity_id, p) in enumerate(
                [(5, 14, "RO.0002211", 0.5), (22, 30, second, 0.25)], start=1
            )
        ]
        write_gold(path, documents)
        return path

    a = gold(tmp_path / "a.json", "PEL.000018", True)
    b = gold(tmp_path / "b.json", "PEL.000000", True)
    done = cli("agree", "--gold", a, "--other", b, "-o", tmp_path / "k.json", "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    corpus = json.loads((tmp_path / "k.json").read_text())["corpus"]
    observed, chance = 2 / 6, 4 / 36
    assert corpus["observed_agreement"] == pytest.approx(observed)
    assert corpus["chance_agreement"] == pytest.approx(chance)
    assert corpus["kappa_entity_id_folded"] == pytest.approx((observed - chance) / (1 - chance))
    assert (corpus["n_docs"], corpus["population_docs"]) == (2, 6.0)
    assert "kappa_entity_id_folded" in corpus["intervals"]
    # Span F1 weighted the same way: both spans of each document match (1.0); the labelled
    # pairs are document 1's only: 2·(2·1) / (6 + 6) = 1/3 (the sample's: 2·1 / (2 + 2) = 1/2).
    assert corpus["span_f1_strict"] == corpus["span_f1_lenient"] == pytest.approx(1.0)
    assert corpus["span_f1_labelled_strict"] == pytest.approx(1 / 3)
    report = json.loads((tmp_path / "k.json").read_text())
    assert report["span_f1_labelled"]["strict"]["f1"] == pytest.approx(1 / 2)
    assert "span_f1_labelled_lenient" in corpus["intervals"]
    assert "corpus (2 documents standing for 6)" in done.out
    plain_a = gold(tmp_path / "c.json", "PEL.000018", False)
    plain_b = gold(tmp_path / "d.json", "PEL.000000", False)
    done = cli("agree", "--gold", plain_a, "--other", plain_b, "-o", tmp_path / "n.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "n.json").read_text())["corpus"] is None
    assert "no corpus figures: the gold carries no p_incl" in done.err


def test_agree_with_relation_ids_spelled_like_directions(tmp_path: Path, cli: Cli) -> None:
    # Ids outside the KB pass unfolded; one spelled "forward" beside the direction "forward"
    # (and "none" beside a missing direction) keeps its own per relation row.
    a = write(tmp_path / "a.json", (5, 14, "forward", "forward"), (22, 30, "none", "forward"))
    b = write(tmp_path / "b.json", (5, 14, "forward", "inverse"), (22, 30, "forward", "forward"))
    result = cli("agree", "--gold", a, "--other", b, "-o", tmp_path / "k.json")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "k.json").read_text())
    rows = {row["entity_id"]: (row["n_a"], row["n_b"]) for row in report["per_relation"]}
    assert rows == {"forward": (1, 2), "none": (1, 0)}
    directions = {row["direction"]: (row["n_a"], row["n_b"]) for row in report["per_direction"]}
    assert directions == {"forward": (2, 1), "inverse": (0, 1)}
