"""Benchmark: the sampler against raw spaCy, and ``--extend`` with a warm pool cache.

Generates ``--docs`` abstract-length documents (seeded; ~1,000–1,400 characters) whose sentences
use KB relations in the active and the passive voice, mixed with sentences that hold none, and
writes them as a ``.tsv.gz`` corpus. Then, in one run and one process (model loaded and the KB's
label index built before any timing, so both sides start warm):

- ``raw spaCy``: ``nlp.pipe`` over the same texts (the goldloop pipeline, same batch size);
- ``sample``: ``run_sample`` on the corpus — reading, gate, parse, mention detection, strata,
  draw, and writing the sample dir and pool cache;
- ``extend``: ``run_sample(..., extend=True)`` with the pool cache warm.

Targets: sampler ≥ 0.85× raw spaCy's documents per second; extend ≥ 20× faster than the first run.
Run: ``.venv/bin/python benchmarks/sample.py [--docs N] [--workers W]``. The default of 1,000
documents keeps the run near a minute and a half on a free core; the issue's figure is taken
with ``--docs 2000``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from goldloop.kb import KB, load_kb
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.run import run_sample
from goldloop.settings import Settings
from goldloop.text import parse_cache
from goldloop.text.detector import detect_mentions
from goldloop.text.nlp import load_nlp
from goldloop.text.parsing import Parsing

AGENTS = (
    "TNF-alpha", "interleukin-6", "SOCS3", "the kinase inhibitor", "metformin", "hypoxia", "AMPK",
    "mTORC1", "the transcription factor", "oxidative stress", "p53", "insulin",
)  # fmt: skip
TARGETS = (
    "STAT3 phosphorylation", "apoptosis", "glucose uptake", "the expression of VEGF",
    "cell proliferation", "autophagy", "NF-kB activity", "lipid accumulation",
    "the immune response", "tumour growth", "collagen synthesis", "mitochondrial fission",
)  # fmt: skip
FILLERS = (
    "Samples were collected from {n} patients at three centres between 2010 and 2015.",
    "Measurements were repeated in {n} independent experiments with similar results.",
    "The cohort included {n} adults with a median follow-up of four years.",
    "Statistical analysis used mixed models adjusted for age and sex.",
    "These findings are discussed in the context of previous work on {target}.",
    "Further studies in larger populations are needed to confirm the observation.",
)
T = TypeVar("T")
OPENERS = ("In this study, ", "We show that ", "Our data indicate that ", "Moreover, ", "")


def verb_pairs(kb: KB) -> list[tuple[str, str]]:
    """(active, passive) labels of converse pairs whose passive reads "<participle> by"."""
    pairs = []
    for relation in kb:
        if not relation.is_canonical and relation.label.endswith(" by"):
            canonical = kb.get(relation.canonical_entity_id)
            if canonical is not None and " " not in canonical.label:
                pairs.append((canonical.label, relation.label))
    return sorted(pairs)


def make_documents(n: int, kb: KB, seed: int = 0) -> list[dict[str, str]]:
    return list(iter_documents(n, kb, seed))


def iter_documents(n: int, kb: KB, seed: int = 0) -> Iterator[dict[str, str]]:
    """``n`` generated abstracts, one at a time (seeded: the same rows on every run)."""
    rng = random.Random(seed)
    pairs = verb_pairs(kb)
    for i in range(n):
        sentences: list[str] = []
        relations = rng.choice((0, 1, 2, 3, 4, 6)) if i % 10 else 0  # a tenth are negative controls
        while sum(map(len, sentences)) < rng.randint(1000, 1400):
            target, agent = rng.choice(TARGETS), rng.choice(AGENTS)
            if relations and rng.random() < 0.6:
                active, passive = rng.choice(pairs)
                relations -= 1
                if rng.random() < 0.5:
                    sentence = f"{rng.choice(OPENERS)}{agent} {active} {target} in cultured cells."
                else:
                    sentence = f"{target.capitalize()} was {passive} {agent} in the treated group."
            else:
                sentence = rng.choice(FILLERS).format(n=rng.randint(12, 900), target=target)
            sentences.append(sentence[0].upper() + sentence[1:])
        yield {"pmid": str(90_000_000 + i), "publication_year": str(rng.randint(1995, 2024)),
               "abstract": " ".join(sentences)}  # fmt: skip


def write_corpus(path: Path, rows: list[dict[str, str]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["pmid", "publication_year", "abstract"], delimiter="\t"
        )
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--docs", type=int, default=1000, help="documents to generate (default 1000)"
    )
    parser.add_argument("--workers", type=int, default=1, help="spaCy processes for both sides")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    # The parse itself is measured: no parse cache, here nor in Dask's worker processes (they
    # are handed this parsing). benchmarks/annotate.py and campaign.py measure the cache.
    os.environ[parse_cache.ENV_PATH] = parse_cache.OFF
    # This benchmark is a door: it reads the environment.
    parsing = Parsing.from_settings(Settings.from_env())

    kb = load_kb()
    nlp = load_nlp(parsing.models)
    detect_mentions(nlp("Warm-up: IL-6 activates STAT3."), kb)  # builds the KB label index
    rows = make_documents(args.docs, kb)
    texts = [row["abstract"] for row in rows]
    # a batch of a twentieth of the corpus, in the default role proportions
    settings = SampleSettings(n_primary=max(1, args.docs // 20), n_double=args.docs // 100,
                              n_reserve=args.docs // 70, workers=args.workers,
                              batch_size=args.batch_size)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        corpus, out = Path(tmp) / "corpus.tsv.gz", Path(tmp) / "sample"
        write_corpus(corpus, rows)
        mean_chars = sum(map(len, texts)) / len(texts)
        print(f"{len(texts)} documents, mean {mean_chars:.0f} characters, workers={args.workers}")

        raw = timed(
            lambda: list(nlp.pipe(texts, batch_size=args.batch_size, n_process=args.workers))
        )
        first, sampled = timed(lambda: run_sample(corpus, out, kb, settings, parsing=parsing))
        extended, extend = timed(
            lambda: run_sample(corpus, out, kb, settings, extend=True, parsing=parsing)
        )

    assert extended.report.pool_cache.hit, "the extend run parsed again"
    # With one process all work is this process's CPU time, which other jobs on a shared machine
    # do not inflate; with workers the children's CPU is not counted, so wall time decides.
    clock = 0 if args.workers > 1 else 1
    print(f"{'':20} {'wall s':>8} {'cpu s':>8} {'docs/s':>8}")
    for name, (wall, cpu) in (("raw spaCy nlp.pipe", raw[1]), ("goldloop sample", sampled),
                              ("sample --extend", extend)):  # fmt: skip
        print(f"{name:20} {wall:8.2f} {cpu:8.2f} {len(texts) / (wall, cpu)[clock]:8.1f}")
    r, e = first.report, extended.report
    print(f"eligible {r.eligible}, drawn {r.draw.drawn}, then {e.draw.drawn} more by --extend")
    basis = "wall" if clock == 0 else "cpu"
    speed = raw[1][clock] / sampled[clock]
    verdict = "OK" if speed >= 0.85 else "MISSED"
    print(f"sampler speed vs raw spaCy ({basis}): {speed:.2f}x  (target >= 0.85x) {verdict}")
    gain = sampled[0] / extend[0]
    verdict = "OK" if gain >= 20 else "MISSED"
    print(f"extend speed-up vs first run (wall): {gain:.1f}x  (target >= 20x) {verdict}")


def timed(work: Callable[[], T]) -> tuple[T, tuple[float, float]]:
    """Result, wall seconds and this process's CPU seconds of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, (time.perf_counter() - wall, time.process_time() - cpu)


if __name__ == "__main__":
    main()
