"""Benchmark: human documents saved by prediction-powered corpus figures, and their time (#45).

    .venv/bin/python benchmarks/ppi.py                 # the issue's size: a 10,000-document pool
    .venv/bin/python benchmarks/ppi.py --docs 2000 --seeds 50

1. **Human documents for the same F1 width.** A generated pool of ``--docs`` abstracts
   (``campaign.py``'s generator: planted relation mentions, the truth a person would find). The
   system scored is campaign's LLM "A" (it reports 88% of the planted mentions). Two
   pre-annotators stand in for gold on the surrogate part (the whole pool, ``p_incl`` 1): the
   lexical pre-annotator (``goldloop annotate --provider lexical`` over the pool, real spaCy)
   and a simulated good LLM (each planted mention found with probability 0.95, 3% of them with
   another relation, a spurious mention in one document of 10). Per seed, a human part of
   ``--human`` documents stratified by year tercile; per pre-annotator the mean width of the F1
   interval, classical (λ = 0: the design estimate alone) against PPI, and how many human
   documents the classical interval needs for PPI's width (``n · (w_classical / w_ppi)²``).
2. **Time.** ``goldloop score`` of the system with ``--surrogate`` (the pool's lexical
   pre-annotation, ``--docs`` documents) and ``--pre-annotations`` on a gold of ``--human``
   documents, against ``goldloop score`` of the same system on the pool as a gold of ``--docs``
   documents (what scoring those documents costs); both through the CLI in this process, in
   turn, best of 3. Target: ≤ 2×.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from campaign import VERBS, Generated, generate
from tests.conftest import run_goldloop

from goldloop.formats.gold import Document, read_gold
from goldloop.kb import KB, load_kb
from goldloop.scoring.bootstrap import f1, ratio
from goldloop.scoring.design import Design
from goldloop.scoring.inputs import rows_to_predictions
from goldloop.scoring.ppi_corpus import ppi_corpus_figures
from goldloop.scoring.regimes import end_to_end_counts


def detection(s: np.ndarray) -> dict[str, np.ndarray]:
    precision, recall = ratio(s[:, 2], s[:, 1]), ratio(s[:, 2], s[:, 0])
    return {"f1": f1(precision, recall)}


def truth_documents(pool: Generated, years: dict[str, int], kb: KB) -> list[Document]:
    """Every planted mention, as the gold a person would make; stratum: the year tercile."""
    cuts = np.quantile(list(years.values()), [1 / 3, 2 / 3])
    documents = []
    for doc_id, text in pool.eligible.items():
        hits = [_hit(text, p.a, p.b, p.label, p.direction, kb) for p in pool.planted[doc_id]]
        stratum = f"y{int(np.searchsorted(cuts, years[doc_id], side='left'))}"
        documents.append(
            Document.model_validate(
                {"doc_id": doc_id, "text": text, "stratum": stratum, "ground_truth": hits}
            )
        )
    return documents


def _hit(text: str, a: int, b: int, label: str, direction: str, kb: KB) -> dict[str, Any]:
    relation = kb.lookup(label)
    assert relation is not None, label
    return {
        "a": a, "b": b, "surface": text[a:b], "entity_id": relation.entity_id,
        "label": label, "direction": direction,
    }  # fmt: skip


def system_rows(pool: Generated, kb: KB) -> list[dict[str, Any]]:
    """LLM "A": the planted mentions it reports, with their relation."""
    return [
        {
            "doc_id": doc_id, "a": p.a, "b": p.b,
            "entity_id_predicted": _hit("", 0, 0, p.label, p.direction, kb)["entity_id"],
            "direction_predicted": p.direction,
        }
        for doc_id, planted in pool.planted.items()
        for p in planted
        if "A" in p.seen_by
    ]  # fmt: skip


def good_llm(truth: list[Document], kb: KB, seed: int) -> list[Document]:
    """Each true mention found with probability 0.95 (3% of them with another relation), and a
    spurious mention (a random word, a random relation) in one document of 10."""
    rng = random.Random(seed)
    out = []
    for document in truth:
        text, hits = document.text, []
        for hit in document.ground_truth:
            if rng.random() < 0.95:
                label = rng.choice(VERBS) if rng.random() < 0.03 else hit.label or hit.surface
                hits.append(_hit(text, hit.a, hit.b, label, hit.direction or "na", kb))
        if rng.random() < 0.1:
            spaces = [i for i, c in enumerate(text) if c == " "]
            k = rng.randrange(len(spaces) - 1)
            hits.append(_hit(text, spaces[k] + 1, spaces[k + 1], rng.choice(VERBS), "forward", kb))
        for hit_ in hits:
            hit_["annotator"] = "simulated-llm"
        out.append(Document.model_validate({**document.to_json(), "ground_truth": hits}))
    return out


def widths(
    truth: list[Document],
    pre: dict[str, list[Document]],
    rows: list[dict[str, Any]],
    kb: KB,
    human: int,
    seeds: int,
) -> None:
    system = rows_to_predictions("A", None, "rows", rows, truth)
    y = end_to_end_counts(truth, system, kb)[:, :3]
    strata = np.array([d.stratum for d in truth])
    labels = sorted(set(strata.tolist()))
    sizes = {s: int((strata == s).sum()) for s in labels}
    part = Design(
        np.ones(len(truth)),
        np.searchsorted(labels, strata),
        len(labels),
        "1/p_incl",
        strata,
    )
    print(
        f"pool {len(truth)} documents, human part {human} (stratified by year tercile), "
        f"surrogate part: the whole pool; {seeds} seeds; F1 of system A, 95% intervals"
    )
    print(
        f"{'pre-annotator':16} {'corr':>5} {'classical w':>11} {'PPI w':>7} {'ratio':>6} "
        f"{'classical docs for PPI width':>28}"
    )
    for name, documents in pre.items():
        f = end_to_end_counts(documents, system, kb)[:, :3]
        correlation = float(np.corrcoef(y[:, 0], f[:, 0])[0, 1])
        w_ppi: list[float] = []
        w_classical: list[float] = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            per = human // len(labels)
            rows_h = np.concatenate(
                [rng.choice(np.flatnonzero(strata == s), per, replace=False) for s in labels]
            )
            weights = np.array([sizes[s] / per for s in strata[rows_h]])
            design = Design(
                weights, np.searchsorted(labels, strata[rows_h]), len(labels), "1/p_incl",
                strata[rows_h],
            )  # fmt: skip
            args = (y[rows_h], f[rows_h], f, detection, design, part)
            for out, lam in ((w_ppi, None), (w_classical, 0.0)):
                low, high = ppi_corpus_figures(*args, lam=lam).intervals["f1"]
                assert low is not None and high is not None
                out.append(high - low)
        ppi_w, classical_w = float(np.mean(w_ppi)), float(np.mean(w_classical))
        needed = human * (classical_w / ppi_w) ** 2
        print(
            f"{name:16} {correlation:5.2f} {classical_w:11.4f} {ppi_w:7.4f} "
            f"{ppi_w / classical_w:6.3f} {needed:28.0f}"
        )


def write_files(
    work: Path,
    truth: list[Document],
    lexical: list[Document],
    rows: list[dict[str, Any]],
    human: int,
) -> dict[str, Path]:
    """The gold of ``human`` documents (stratified, with p_incl), their lexical pre-annotation,
    the surrogate part (the whole pool, lexical), the pool as a gold, and the system's rows."""
    rng = random.Random(0)
    by_stratum: dict[str, list[int]] = {}
    for i, d in enumerate(truth):
        by_stratum.setdefault(d.stratum or "", []).append(i)
    per = human // len(by_stratum)
    chosen = {i: len(members) for members in by_stratum.values() for i in rng.sample(members, per)}
    meta = {i: {"p_incl": per / n, "batch": 0, "role": "primary"} for i, n in chosen.items()}
    paths = {name: work / f"{name}.json" for name in ("gold", "pre", "surrogate", "pool", "system")}
    data = {
        "gold": [truth[i].to_json() | meta[i] for i in chosen],
        "pre": [lexical[i].to_json() | meta[i] for i in chosen],
        "surrogate": [
            d.to_json() | {"p_incl": 1.0, "batch": 0, "role": "surrogate"} for d in lexical
        ],
        "pool": [d.to_json() for d in truth],
        "system": rows,
    }
    for name, path in paths.items():
        path.write_text(json.dumps(data[name]), encoding="utf-8")
    return paths


def timing(paths: dict[str, Path], work: Path) -> None:
    """``score --surrogate`` against ``score`` of the pool as a gold, in turn, best of 3."""
    system = f"A={paths['system']}"
    runs: dict[str, list[float]] = {"score on the pool": [], "score --surrogate": []}
    for k in range(3):
        for name, extra in (
            ("score on the pool", ["--gold", paths["pool"]]),
            ("score --surrogate", ["--gold", paths["gold"], "--surrogate", paths["surrogate"],
                                   "--pre-annotations", paths["pre"]]),
        ):  # fmt: skip
            start = time.perf_counter()
            done = run_goldloop(
                ["score", *extra, "--system", system, "--report-dir", work / f"r{k}{len(extra)}"]
            )
            runs[name].append(time.perf_counter() - start)
            assert done.returncode == 0, done.stderr
    base, ppi = min(runs["score on the pool"]), min(runs["score --surrogate"])
    print(
        f"score on the pool ({_count(paths['pool'])} documents): {base:.2f} s; score"
        f" --surrogate ({_count(paths['surrogate'])} surrogate, {_count(paths['gold'])} gold):"
        f" {ppi:.2f} s; ratio {ppi / base:.2f}× (target ≤ 2×)"
    )


def _count(path: Path) -> int:
    return len(json.loads(path.read_text(encoding="utf-8")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000, help="pool documents")
    parser.add_argument("--human", type=int, default=300, help="human documents per seed")
    parser.add_argument("--seeds", type=int, default=100)
    args = parser.parse_args()
    kb = load_kb(None)
    pool = generate(args.docs, seed=7)
    years = {f"pmid:{r['pmid']}": int(r["year"]) for r in pool.rows}
    truth = truth_documents(pool, years, kb)
    rows = system_rows(pool, kb)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        texts = work / "pool.jsonl"
        texts.write_text(
            "".join(json.dumps({"doc_id": d.doc_id, "text": d.text}) + "\n" for d in truth),
            encoding="utf-8",
        )
        start = time.perf_counter()
        done = run_goldloop(
            ["annotate", "--documents", texts, "--out", work / "lexical.json",
             "--provider", "lexical"]
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        print(
            f"lexical pre-annotation of {len(truth)} documents: {time.perf_counter() - start:.0f} s"
        )
        by_id = {d.doc_id: d for d in read_gold(work / "lexical.json", kb).documents}
        lexical = [by_id[d.doc_id].model_copy(update={"stratum": d.stratum}) for d in truth]
        pre = {"lexical": lexical, "simulated LLM": good_llm(truth, kb, seed=3)}
        widths(truth, pre, rows, kb, args.human, args.seeds)
        timing(write_files(work, truth, lexical, rows, args.human), work)


if __name__ == "__main__":
    main()
