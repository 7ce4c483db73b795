"""Agreement and pooling speed, against scikit-learn's κ measured in the same run.

Builds two annotators over synthetic documents (bundled KB ids), then times:
- ``cohen_kappa`` against ``sklearn.metrics.cohen_kappa_score`` on the same label pairs;
- the whole ``agreement`` (span pairing, raw and folded κ, direction κ, confusion) against
  scikit-learn's κ alone on its raw pairs (the floor any implementation pays);
- ``relative_recall`` over three runs with a 1,000-draw document bootstrap;
- ``estimate_completeness`` (capture–recapture) on the two annotators, 1,000 draws, against the
  agreement run.

    .venv/bin/python benchmarks/agreement.py [--docs 5000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from sklearn.metrics import cohen_kappa_score

from goldloop.formats.gold import Document, Hit
from goldloop.kb import load_kb
from goldloop.scoring.agreement import NONE, agreement, cohen_kappa, pair_spans
from goldloop.scoring.completeness import estimate_completeness
from goldloop.scoring.inputs import Prediction, SystemPredictions
from goldloop.scoring.pooled import relative_recall


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
        f"agreement on {args.docs:,} documents (pairing, raw + folded + direction kappa, confusion): "
        f"{full_s:.3f} s = {full_s / sk_s:.1f}x scikit-learn's kappa alone; "
        f"kappa {report.kappa_entity_id:.4f}, folded {report.kappa_entity_id_folded:.4f}"
    )

    position = {doc.doc_id: k for k, doc in enumerate(docs_a)}
    runs = []
    for seed in range(3):
        rng = random.Random(seed)
        rows = [
            Prediction(position[p.doc_id], h.a, h.b, h.entity_id)
            for p in pairs
            for h in (p.a, p.b)
            if h and rng.random() < 0.7
        ]
        runs.append(SystemPredictions(f"run{seed}", None, "rows", rows, len(rows)))
    pool_s, pooled = timed(
        lambda: relative_recall(len(docs_a), runs, kb, n_bootstrap=1000), repeat=1
    )
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


if __name__ == "__main__":
    main()
