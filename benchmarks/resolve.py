"""Benchmark: offset resolution and the spaCy post-checks, in mentions per second.

Builds real-length abstracts (~1,200 characters, seeded) from biomedical sentences, takes the
mentions the lexical detector finds in them as the items an annotator would quote (surface +
occurrence), and times, in one run:

- ``baseline``: a plain ``str.find`` loop to the n-th occurrence (no word boundaries, no claims);
- ``resolve``: :func:`goldloop.text.resolve.resolve_occurrence` with claims accumulating per document;
- ``post-checks``: ``span_has_verb`` + ``surface_anchored`` on the already-parsed documents;
- ``detect_mentions``: the lexical detector on the parsed documents (documents per second);
- ``parse``: the spaCy parse each document needs once (for scale: it dominates).

Run: ``.venv/bin/python benchmarks/resolve.py [--docs N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from goldloop.kb import load_kb
from goldloop.settings import Settings
from goldloop.text.detector import detect_mentions
from goldloop.text.nlp import (
    load_nlp,
    parse_many,
    span_has_verb,
    surface_anchored,
)
from goldloop.text.parsing import Parsing
from goldloop.text.resolve import find_occurrences, resolve_occurrence

SENTENCES = (
    "Interleukin-6 (IL-6) is a pleiotropic cytokine that activates STAT3 in hepatocytes.",
    "STAT3 phosphorylation was inhibited by AG490 in a dose-dependent manner.",
    "TNF-α induces apoptosis in sensitive cells and is regulated by NF-κB.",
    "The transporter is expressed in renal proximal tubules and binds to albumin.",
    "We found that SOCS3 negatively regulates JAK2 and reduces IL-6 signalling.",
    "Caspase-3 is activated by caspase-8 during the extrinsic pathway of apoptosis.",
    "Loss of p53 increases genomic instability and promotes tumour growth in mice.",
    "Smoking causes chronic inflammation, and smoking-induced damage was reduced by vitamin C.",
    "The receptor is located in the plasma membrane and interacts with beta-arrestin.",
    "Mutations in BRCA1 are associated with early-onset breast and ovarian cancer.",
    "Aspirin is an agonist of the receptor in platelets, whereas the complex has a part in repair.",
    "In this cohort, serum IL-6 was positively correlated with disease activity (p < 0.01).",
    "Autophagy degrades damaged mitochondria and is suppressed by mTORC1 under nutrient excess.",
    "Metformin enhances insulin sensitivity and inhibits hepatic gluconeogenesis.",
    "Expression of the gene is upregulated by hypoxia and downregulated by glucocorticoids.",
    "The virus is transmitted by mosquitoes and replicates in salivary glands.",
    "Our results suggest that the kinase stimulates glucose uptake in skeletal muscle.",
    "Fifty-two patients were enrolled between 2015 and 2019 at three centres.",
    "Knockdown of the lncRNA triggers cell-cycle arrest and limits proliferation.",
    "These data indicate that 𝛼-synuclein aggregates are degraded by the proteasome.",
)


def make_abstracts(n: int, seed: int, length: int = 1200) -> list[str]:
    rng = random.Random(seed)
    abstracts = []
    for _ in range(n):
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < length:
            parts.append(rng.choice(SENTENCES))
        abstracts.append(" ".join(parts))
    return abstracts


def occurrence_of(text: str, surface: str, a: int) -> int:
    return [start for start, _ in find_occurrences(text, surface)].index(a) + 1


def find_nth(text: str, surface: str, occurrence: int) -> tuple[int, int]:
    """The baseline: the n-th raw ``str.find`` hit, no boundaries, no claims."""
    start = -1
    for _ in range(occurrence):
        start = text.find(surface, start + 1)
    return start, start + len(surface)


def timed(repeat: int, work: Callable[[], int]) -> tuple[float, int]:
    """Best wall time of ``repeat`` runs and the number of items one run handles."""
    best = float("inf")
    items = 0
    for _ in range(repeat):
        began = time.perf_counter()
        items = work()
        best = min(best, time.perf_counter() - began)
    return best, items


def main() -> None:
    # This benchmark is a door: it reads the environment.
    parsing = Parsing.from_settings(Settings.from_env())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    kb = load_kb()
    load_nlp(parsing.models)
    texts = make_abstracts(args.docs, args.seed)
    began = time.perf_counter()
    docs = list(parse_many(texts, parsing))
    parse_seconds = time.perf_counter() - began
    detected = [detect_mentions(doc, kb) for doc in docs]
    # Items as an annotator quotes them: surface + 1-based occurrence (word-bounded matches).
    items = [
        [(m.surface, occurrence_of(text, m.surface, m.a), m) for m in mentions]
        for text, mentions in zip(texts, detected, strict=True)
    ]
    n_items = sum(len(x) for x in items)

    # String work takes milliseconds per pass: several passes per timing keep noise down.
    rounds = 20

    def baseline() -> int:
        for _ in range(rounds):
            for text, quoted in zip(texts, items, strict=True):
                for surface, occurrence, _ in quoted:
                    find_nth(text, surface, occurrence)
        return n_items * rounds

    def resolve() -> int:
        for _ in range(rounds):
            for text, quoted in zip(texts, items, strict=True):
                claimed: set[tuple[int, int]] = set()
                for surface, occurrence, mention in quoted:
                    got = resolve_occurrence(text, surface, occurrence, claimed)
                    assert (got.a, got.b) == (mention.a, mention.b)
                    claimed.add((got.a, got.b))
        return n_items * rounds

    relations = {r.entity_id: r for r in kb}

    def post_checks() -> int:
        for doc, mentions in zip(docs, detected, strict=True):
            for m in mentions:
                span_has_verb(doc, m.a, m.b)
                surface_anchored(doc, m.a, m.b, relations[m.entity_id])
        return n_items

    def detection() -> int:
        for doc in docs:
            detect_mentions(doc, kb)
        return len(docs)

    post_checks()  # label forms are analysed once per label; time the steady state
    rows = [
        ("baseline: str.find n-th hit", *timed(args.repeat, baseline)),
        ("resolve_occurrence", *timed(args.repeat, resolve)),
        ("post-checks (verb + anchored)", *timed(args.repeat, post_checks)),
        ("detect_mentions (per document)", *timed(args.repeat, detection)),
        ("spaCy parse (per document)", parse_seconds, len(texts)),
    ]
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"{len(texts)} abstracts, mean {mean_chars:.0f} chars, {n_items} mentions")
    print(f"{'step':32} {'seconds':>9} {'items/s':>12}")
    for name, seconds, count in rows:
        print(f"{name:32} {seconds:9.4f} {count / seconds:12,.0f}")
    base = rows[0][1] / rounds
    resolve_s, post_s = rows[1][1] / rounds, rows[2][1]
    print(f"resolve vs baseline: {resolve_s / base:.2f}x the time of a plain str.find loop")
    print(
        f"resolve + post-checks: {n_items / (resolve_s + post_s):,.0f} mentions/s; "
        f"parse per abstract {parse_seconds / len(texts) * 1000:.1f} ms; resolve + post-checks "
        f"take {(resolve_s + post_s) / parse_seconds:.3f}x of the parse time"
    )


if __name__ == "__main__":
    main()
