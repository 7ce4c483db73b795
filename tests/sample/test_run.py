"""``run_sample`` end to end on real spaCy: report accounting, strata and p_incl, roles,
``--extend`` with the pool cache, fingerprint invalidation, exclusion, refusals."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.kb import KB
from goldloop.sample import read_documents, read_manifest
from goldloop.sample.batch_record import SampleSettings, StrataBoundaries, StratumDraw
from goldloop.sample.gate import GateSettings
from goldloop.sample.pool import POOL_FILE
from goldloop.sample.run import run_sample
from goldloop.settings import DEMO_CORPUS
from tests.sample.conftest import forbid_parsing

SETTINGS = SampleSettings(n_primary=8, n_double=4, n_reserve=4, tail_top_k=10, seed=3)
SMALL = replace(SETTINGS, n_primary=3, n_double=1, n_reserve=1)


def test_blind_role_is_drawn_within_the_batch_and_reported_only_when_asked(
    tmp_path: Path, kb: KB
) -> None:
    plain = run_sample(DEMO_CORPUS, tmp_path / "plain", kb, SETTINGS).report.to_dict()
    assert "blind" not in plain["roles"] and "n_blind" not in plain["settings"]
    blind = replace(SETTINGS, n_reserve=2, n_blind=2)
    result = run_sample(DEMO_CORPUS, tmp_path / "blind", kb, blind)
    r = result.report.to_dict()
    assert r["roles"] == {"primary": 8, "double": 4, "reserve": 2, "blind": 2}
    assert r["settings"]["n_blind"] == 2
    rows = read_manifest(tmp_path / "blind")
    # The same seed and batch size: the same documents and inclusion probabilities; only the
    # last two of the shuffled draw changed role.
    before = read_manifest(tmp_path / "plain")
    assert [(x.doc_id, x.p_incl) for x in rows] == [(x.doc_id, x.p_incl) for x in before]
    assert sorted(x.role for x in rows).count("blind") == 2
    assert {x.role for x in read_documents(tmp_path / "blind")} == {
        "primary", "double", "reserve", "blind",
    }  # fmt: skip


def test_first_batch_accounts_for_every_row(tmp_path: Path, kb: KB) -> None:
    result = run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS)
    r = result.report.to_dict()
    assert r["rows_read"] == 31 == r["eligible"] + r["dropped_total"]
    assert {k: v for k, v in r["dropped"].items() if v} == {
        "no_identifier": 1, "year_before_min": 1, "too_short": 1, "not_english": 1,
        "duplicate_text": 1,
    }  # fmt: skip
    assert r["pool_cache"]["hit"] is False
    assert r["roles"] == {"primary": 8, "double": 4, "reserve": 4} and r["drawn"] == 16
    rows = read_manifest(tmp_path)
    assert len(rows) == 16 and len({row.doc_id for row in rows}) == 16
    assert sum(s["pool"] for s in r["strata"].values()) == r["eligible"]
    for name, s in r["strata"].items():
        in_stratum = [row for row in rows if row.stratum == name]
        assert len(in_stratum) == s["drawn"] <= s["remaining"]
        assert all(row.p_incl == pytest.approx(s["drawn"] / s["remaining"]) for row in in_stratum)
    for row in rows:
        assert row.stratum.endswith("-none") == (row.n_verb_mentions == 0)
        assert bool(row.labels_detected) == (row.n_mentions > 0)
    documents = read_documents(tmp_path)
    for row, doc in zip(rows, documents, strict=True):
        assert hashlib.sha1(doc.text.encode()).hexdigest() == row.text_sha1
        assert (doc.role, doc.batch, doc.stratum, doc.p_incl) == (
            row.role,
            0,
            row.stratum,
            row.p_incl,
        )
        assert doc.doc_id == f"pmid:{row.ids['pmid']}"
    assert json.loads(result.report_path.read_text())["drawn"] == 16


def test_same_seed_same_sample(tmp_path: Path, kb: KB) -> None:
    run_sample(DEMO_CORPUS, tmp_path / "a", kb, SETTINGS)
    run_sample(DEMO_CORPUS, tmp_path / "b", kb, SETTINGS)
    assert (tmp_path / "a/manifest.csv").read_text() == (tmp_path / "b/manifest.csv").read_text()
    run_sample(DEMO_CORPUS, tmp_path / "c", kb, replace(SETTINGS, seed=4))
    assert (tmp_path / "a/manifest.csv").read_text() != (tmp_path / "c/manifest.csv").read_text()


def test_extend_twice_appends_without_parsing(
    tmp_path: Path, kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS)
    manifest_before = (tmp_path / "manifest.csv").read_bytes()
    texts_before = (tmp_path / "texts.jsonl").read_bytes()
    forbid_parsing(monkeypatch)
    first = run_sample(DEMO_CORPUS, tmp_path, kb, SMALL, extend=True)
    second = run_sample(DEMO_CORPUS, tmp_path, kb, SMALL, extend=True)
    assert (first.batch, second.batch) == (1, 2)
    assert (
        first.report.to_dict()["pool_cache"]["hit"] and second.report.to_dict()["pool_cache"]["hit"]
    )
    assert (tmp_path / "manifest.csv").read_bytes().startswith(manifest_before)
    assert (tmp_path / "texts.jsonl").read_bytes().startswith(texts_before)
    rows = read_manifest(tmp_path)
    assert Counter(row.batch for row in rows) == {0: 16, 1: 5, 2: 5}
    assert len({row.doc_id for row in rows}) == 26
    assert Counter(row.role for row in rows if row.batch == 2) == {
        "primary": 3,
        "double": 1,
        "reserve": 1,
    }
    # p_incl of a later batch is over what the earlier batches left in the stratum; 5 draws
    # over more non-empty strata merge the smallest into one, so every document keeps a chance
    earlier = Counter(row.stratum for row in rows if row.batch < 2)
    strata = second.report.to_dict()["strata"]
    assert sum(s["remaining"] for s in strata.values()) == 26 - 21
    for name, s in strata.items():
        if name != "merged" and "merged" not in earlier:
            assert s["remaining"] == s["pool"] - earlier[name]
        assert s["drawn"] >= (s["remaining"] > 0)
        assert s["p_incl"] == pytest.approx(s["drawn"] / s["remaining"] if s["remaining"] else 0)
    assert second.report.to_dict()["already_drawn"] == 21
    assert [d.doc_id for d in read_documents(tmp_path)] == [row.doc_id for row in rows]
    with pytest.raises(GoldloopError, match="pool is exhausted"):
        run_sample(DEMO_CORPUS, tmp_path, kb, SETTINGS, extend=True)


def test_excluded_corpus_and_refusals(tmp_path: Path, kb: KB) -> None:
    fit = tmp_path / "fit.tsv"
    fit.write_text("pmid\tabstract\n99000001\tanything\n99000002\tother\n")
    result = run_sample(DEMO_CORPUS, tmp_path / "s", kb, SETTINGS, exclude=[fit])
    # 99000001 and its duplicate 99000030 (the same text, met later) are both out now
    assert result.report.to_dict()["dropped"]["in_excluded_corpus"] == 2
    assert result.report.to_dict()["dropped"]["duplicate_text"] == 0
    assert not {"pmid:99000001", "pmid:99000002"} & {
        r.doc_id for r in read_manifest(tmp_path / "s")
    }
    with pytest.raises(GoldloopError, match=r"^out: .* already holds a sample: choose another"):
        run_sample(DEMO_CORPUS, tmp_path / "s", kb, SETTINGS)
    with pytest.raises(GoldloopError, match=r"^extend: .* holds no sample to extend"):
        run_sample(DEMO_CORPUS, tmp_path / "new", kb, SETTINGS, extend=True)
    with pytest.raises(
        GoldloopError,
        match=r"no eligible document \(31 rows read; dropped: no_identifier 1, year_before_min 1,"
        r" too_short 1, too_long 28\)",
    ):
        run_sample(
            DEMO_CORPUS, tmp_path / "y", kb, replace(SETTINGS, gate=GateSettings(max_chars=300))
        )
    with pytest.raises(GoldloopError, match=r"^none_fraction: must lie in \[0, 1\]"):
        run_sample(DEMO_CORPUS, tmp_path / "x", kb, replace(SETTINGS, none_fraction=1.5))


def test_two_workers_give_the_same_pool_and_sample(tmp_path: Path, kb: KB) -> None:
    run_sample(DEMO_CORPUS, tmp_path / "one", kb, SETTINGS)
    run_sample(DEMO_CORPUS, tmp_path / "two", kb, replace(SETTINGS, workers=2, batch_size=4))
    for name in ("manifest.csv", "texts.jsonl", POOL_FILE):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_sampling_onto_an_existing_sample_words_the_users_situation(tmp_path: Path, cli) -> None:
    out = tmp_path / "s"
    args = ["sample", "--corpus", DEMO_CORPUS, "--out", out, "--n-primary", 4, "--n-double", 0,
            "--n-reserve", 0]  # fmt: skip
    assert cli(*args).returncode == 0
    manifest = (out / "manifest.csv").read_bytes()
    again = cli(*args)
    assert again.returncode == 2
    assert again.err == (
        f"error: --out {out} already holds a sample: choose another --out, or add --extend to "
        "append a batch to it"
    )
    assert (out / "manifest.csv").read_bytes() == manifest
    assert cli(*args, "--extend").returncode == 0


def test_the_sample_command_draws_blind_documents(tmp_path: Path, cli) -> None:
    out = tmp_path / "s"
    done = cli("sample", "--corpus", DEMO_CORPUS, "--out", out, "--n-primary", 4, "--n-double", 0,
               "--n-reserve", 0, "--n-blind", 2, "--workers", 1)  # fmt: skip
    assert done.returncode == 0, done.err
    assert Counter(row.role for row in read_manifest(out)) == {"primary": 4, "blind": 2}
    assert "role: blind" in done.out
    bad = cli("sample", "--corpus", DEMO_CORPUS, "--out", tmp_path / "t", "--n-blind", -1)
    assert bad.returncode == 2 and "--n-blind" in bad.err


def test_the_report_keeps_its_json_keys_in_order(tmp_path: Path, kb: KB) -> None:
    """The typed report writes the keys the report file has always had, in the same order."""
    result = run_sample(DEMO_CORPUS, tmp_path / "keys", kb, SETTINGS)
    written = json.loads(result.report_path.read_text(encoding="utf-8"))
    assert written == result.report.to_dict()
    assert list(written) == [
        "batch", "created", "corpus", "exclude_corpora", "settings", "kb", "pool_cache",
        "rows_read", "eligible", "dropped", "dropped_total", "phase1", "boundaries", "strata",
        "already_drawn", "requested", "drawn", "shortfall", "negative_controls", "roles",
    ]  # fmt: skip
    assert written["shortfall"] == written["requested"] - written["drawn"]
    assert written["dropped_total"] == sum(written["dropped"].values())
    assert list(written["kb"]) == ["path", "sha256"]
    assert list(written["boundaries"]) == [
        "year_cuts", "verb_density_median", "tail_top_k", "common_labels",
    ]  # fmt: skip
    # A later batch reads batch 0's cut points back from what was written.
    assert StrataBoundaries.cuts_of(written["boundaries"]) == result.report.boundaries.cuts
    for stratum in written["strata"].values():
        assert [k for k in stratum if k != "strata"] == ["pool", "remaining", "drawn", "p_incl"]
    # A merged stratum names its strata between what remains and what was drawn.
    merged = StratumDraw(pool=5, remaining=4, drawn=2, p_incl=0.5, strata=["a", "b"]).to_dict()
    assert list(merged) == ["pool", "remaining", "strata", "drawn", "p_incl"]


def test_the_settings_keep_their_keys_in_order_and_an_optional_role_only_when_asked() -> None:
    """A batch report's ``settings`` in the fields' order; ``n_blind`` only when asked for."""
    fields = [
        "columns", "gate", "n_primary", "n_double", "n_reserve", "n_blind", "tail_top_k",
        "tail_weight", "none_fraction", "seed", "workers", "batch_size", "phase1", "dask",
    ]  # fmt: skip
    assert list(replace(SETTINGS, n_blind=2).to_dict()) == fields
    plain = SETTINGS.to_dict()
    assert list(plain) == [name for name in fields if name != "n_blind"]
    assert plain["gate"] == SETTINGS.gate.to_dict() == {
        "min_year": 1990, "min_chars": 300, "max_chars": 5000, "min_sentences": 3,
        "min_english_share": 0.2,
    }  # fmt: skip


def test_a_blind_part_the_batch_cannot_draw_whole_is_refused(tmp_path: Path, kb: KB) -> None:
    """Issue 44, item 12: a short pool shrinks the other roles, never the blind part."""
    from goldloop.errors import SettingError

    blind = replace(SETTINGS, n_primary=2, n_double=0, n_reserve=0, n_blind=100)
    with pytest.raises(SettingError) as refused:
        run_sample(DEMO_CORPUS, tmp_path / "s", kb, blind)
    assert refused.value.setting == "n_blind"
    assert refused.value.message.startswith("100 blind documents asked for, ")
    assert not (tmp_path / "s" / "manifest.csv").exists()
    # A pool that holds the blind part but not the batch: the blind part whole, the rest shrunk.
    fits = replace(SETTINGS, n_primary=100, n_double=0, n_reserve=0, n_blind=2)
    rows = run_sample(DEMO_CORPUS, tmp_path / "t", kb, fits).rows
    assert Counter(r.role for r in rows) == {"blind": 2, "primary": len(rows) - 2}
    assert 2 < len(rows) < 102
