"""Agreement and pooling speed, against scikit-learn's κ measured in the same run.

Builds two annotators over synthetic documents (bundled KB ids), then times:
- ``cohen_kappa`` against ``sklearn.metrics.cohen_kappa_score`` on the same label pairs;
- the whole ``agreement`` (span pairing, raw and folded κ, direction κ, confusion) against
  scikit-learn's κ alone on its raw pairs (the floor any implementation pays);
- ``relative_recall`` over three runs with a 1,000-draw document bootstrap;
- ``estimate_completeness`` (capture–recapture) on the two annotators, 1,000 draws, against the
  agreement run;
- ``alpha_u`` on 1,000 documents of 1,500 characters with 20 spans a side against the tests'
  independent implementation (``tests/scoring/test_alpha_u.py``: character by character), same
  value asserted; target: at most its time;
- the whole agreement report (κ, span F1 with intervals, α_u) on a 200-document double set
  against the report main produced when #30 was filed (commit ``738df9a``: pairing, raw + folded
  + direction κ, confusion; no intervals), that commit's own ``agreement`` read with ``git show``
  at run time; the two timed alternately, best of ``--repeat``; target: under 2x.

    .venv/bin/python benchmarks/agreement.py [--docs 5000] [--alpha-docs 1000] [--double-docs 200]
                                             [--repeat 7]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.scoring

from tests.scoring.test_alpha_u import reference_alpha

from goldloop.formats.gold import Document, Hit
from goldloop.kb import load_kb
from goldloop.scoring.agreement import NONE, agreement, cohen_kappa, pair_spans
from goldloop.scoring.alpha_u import Unit, alpha_u
from goldloop.scoring.completeness import estimate_completeness
from goldloop.scoring.inputs import Prediction, SystemPredictions
from goldloop.scoring.pooled import relative_recall

ROOT = Path(__file__).resolve().parents[1]


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def annotators(n_docs: int, ids: list[str], seed: int = 0) -> tuple[list[Document], list[Document]]:
    rng = random.Random(seed)
    docs_a, docs_b = [], []
    for d in range(n_docs):
        text = "x" * 1200
        hits_a, hits_b = [], []
        for k in range(10):
            a = 100 * k + rng.randrange(10)
            entity_id = rng.choice(ids)
            direction = rng.choice(["forward", "inverse"])
            if rng.random() < 0.9:
                hits_a.append(
                    Hit(
                        a=a,
                        b=a + 8,
                        surface=text[a : a + 8],
                        entity_id=entity_id,
                        direction=direction,
                    )
                )
            if rng.random() < 0.85:
                other = entity_id if rng.random() < 0.7 else rng.choice(ids)
                b = a + rng.randrange(-3, 4)
                hits_b.append(
                    Hit(
                        a=max(0, b),
                        b=max(0, b) + 8,
                        surface=text[max(0, b) : max(0, b) + 8],
                        entity_id=other,
                        direction=direction,
                    )
                )
        docs_a.append(Document(doc_id=f"d{d}", text=text, ground_truth=hits_a))
        docs_b.append(Document(doc_id=f"d{d}", text=text, ground_truth=hits_b))
    return docs_a, docs_b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--alpha-docs", type=int, default=1000)
    parser.add_argument("--double-docs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    kb = load_kb()
    ids = [r.entity_id for r in kb][:300]
    docs_a, docs_b = annotators(args.docs, ids)
    pairs, *_ = pair_spans(docs_a, docs_b)
    raw = [(p.a.entity_id if p.a else NONE, p.b.entity_id if p.b else NONE) for p in pairs]
    left, right = [a for a, _ in raw], [b for _, b in raw]

    ours_s, ours = timed(lambda: cohen_kappa(raw))
    sk_s, sk = timed(lambda: cohen_kappa_score(left, right))
    assert abs(ours - sk) < 1e-9, (ours, sk)
    print(
        f"kappa over {len(raw):,} pairs: goldloop {ours_s:.3f} s, scikit-learn {sk_s:.3f} s, "
        f"ratio {sk_s / ours_s:.1f}x (same value {ours:.4f})"
    )

    full_s, report = timed(lambda: agreement(docs_a, docs_b, kb))
    print(
        f"agreement on {args.docs:,} documents (pairing, kappa, confusion, span F1 and alpha_u "
        f"with 1,000-draw intervals): "
        f"{full_s:.3f} s = {full_s / sk_s:.1f}x scikit-learn's kappa alone; "
        f"kappa {report.kappa_entity_id:.4f}, folded {report.kappa_entity_id_folded:.4f}"
    )

    runs = []
    for seed in range(3):
        rng = random.Random(seed)
        rows = [
            Prediction(p.doc_id, h.a, h.b, h.entity_id)
            for p in pairs
            for h in (p.a, p.b)
            if h and rng.random() < 0.7
        ]
        runs.append(SystemPredictions(f"run{seed}", None, "rows", rows, len(rows)))
    pool_s, pooled = timed(lambda: relative_recall(docs_a, runs, kb, n_bootstrap=1000), repeat=1)
    print(
        f"pool of 3 runs over {pooled.n_documents:,} documents ({pooled.n_pool:,} items, 1,000 bootstrap draws): "
        f"{pool_s:.3f} s = {pool_s / full_s:.1f}x the agreement run"
    )

    spans = [
        ([(h.a, h.b) for h in a.ground_truth], [(h.a, h.b) for h in b.ground_truth])
        for a, b in zip(docs_a, docs_b, strict=True)
    ]
    completeness_s, completeness = timed(lambda: estimate_completeness(spans), repeat=1)
    # The same m as agreement's span pairing: both use one matcher.
    assert completeness.m == report.n_span_matched, (completeness.m, report.n_span_matched)
    print(
        f"completeness over {len(spans):,} double documents (1,000 bootstrap draws): "
        f"{completeness_s:.3f} s = {completeness_s / full_s:.1f}x the agreement run; "
        f"N^ {completeness.n_hat:.0f}, recall together {completeness.recall_both:.3f}"
    )

    documents = alpha_documents(args.alpha_docs)
    ours_s, ours_alpha = timed(lambda: alpha_u(documents, n_boot=0).value)
    ref_s, ref_alpha = timed(lambda: reference_alpha(documents), repeat=1)
    assert ours_alpha is not None and ref_alpha is not None
    assert abs(ours_alpha - ref_alpha) < 1e-9, (ours_alpha, ref_alpha)
    print(
        f"alpha_u on {len(documents):,} documents of 1,500 characters, 20 spans a side: "
        f"goldloop {ours_s:.3f} s, independent implementation {ref_s:.3f} s, "
        f"ratio {ours_s / ref_s:.3f}x its time (target <= 1x; same value {ours_alpha:.4f})"
    )

    double_a, double_b = annotators(args.double_docs, ids, seed=1)
    baseline = agreement_when_filed()
    base_s, whole_s = float("inf"), float("inf")
    for _ in range(args.repeat):  # alternately, so both see the same load
        base_s = min(base_s, timed(lambda: baseline(double_a, double_b, kb), repeat=1)[0])
        whole_s = min(whole_s, timed(lambda: agreement(double_a, double_b, kb), repeat=1)[0])
    before, whole = baseline(double_a, double_b, kb), agreement(double_a, double_b, kb)
    # The same κ report inside the whole one: the baseline did the same pairing and κ work
    # (its report's method was still named to_json then).
    for key, value in before.to_json().items():
        assert whole.to_dict()[key] == value, key
    assert whole.spans is not None
    print(
        f"whole agreement report on {args.double_docs:,} double documents (kappa, span F1 "
        f"strict/lenient/labelled/per relation and alpha_u, 1,000-draw intervals): "
        f"{whole_s:.3f} s = {whole_s / base_s:.2f}x the report when #30 was filed "
        f"({BASELINE_COMMIT}: {base_s:.3f} s; best of {args.repeat}, alternately; target < 2x); "
        f"lenient F1 {whole.spans.span_f1['lenient'].f1:.3f}"
    )


def alpha_documents(n_docs: int, seed: int = 2) -> list[tuple[int, list[Unit], list[Unit]]]:
    """Two annotators over 1,500-character documents, 20 spans each, many moved or relabelled."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_docs):
        units_a: list[Unit] = []
        units_b: list[Unit] = []
        for k in range(20):
            a = 75 * k + rng.randrange(30)
            b = a + rng.randint(3, 40)
            category = rng.choice("ABCDE")
            units_a.append((a, b, category))
            shift = rng.randint(-5, 5) if rng.random() < 0.4 else 0
            other = category if rng.random() < 0.8 else rng.choice("ABCDE")
            units_b.append((max(0, a + shift), min(1500, b + shift), other))
        out.append((1500, units_a, units_b))
    return out


# main when #30 was filed: its agree report was κ only (pairing, raw + folded + direction κ,
# confusion), with no intervals.
BASELINE_COMMIT = "738df9a"
# The modules that commit's agreement used and that have not changed since (checked at run time);
# its other imports: the KB (fold, fold_id and get unchanged; only load_kb changed) and gold's
# Document and Hit, which only annotate (the module moved to formats/).
UNCHANGED = ("src/goldloop/scoring/folding.py", "src/goldloop/scoring/matching.py")


def agreement_when_filed() -> Callable[..., Any]:
    """``agreement`` as it was at ``BASELINE_COMMIT``, its source read from git."""

    def at_commit(path: str) -> str:
        return subprocess.run(
            ["git", "show", f"{BASELINE_COMMIT}:{path}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    for path in UNCHANGED:
        if at_commit(path) != (ROOT / path).read_text(encoding="utf-8"):
            sys.exit(
                f"{path} changed since {BASELINE_COMMIT}: the baseline would not be that report"
            )
    source = at_commit("src/goldloop/scoring/agreement.py").replace(
        "from goldloop.gold import", "from goldloop.formats.gold import"
    )
    module = types.ModuleType("agreement_when_filed")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{BASELINE_COMMIT}:agreement.py", "exec"), module.__dict__)
    return module.agreement


if __name__ == "__main__":
    main()
