"""Benchmark ``annotate`` against the fake provider server with per-request latency.

Measures, in one run: the request phase at concurrency 16 vs 1 (target ≥ 10×), annotate end to
end (requests + spaCy post-checks + decoding) at 16 vs 1 (target ≥ 6×), a fully cached re-run vs
the first run, and decoding throughput in mentions per second on real-length abstracts. Those run
without the parse cache; the last section switches it on: a re-run with both the answers and the
parses cached vs the first run on fresh caches (target ≥ 20×, the model's load time beside).

    .venv/bin/python benchmarks/annotate.py            # short default run
    .venv/bin/python benchmarks/annotate.py --docs 200 --rerun-docs 2000 # the issues' sizes
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from urllib.request import urlopen

import spacy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fakes

from tests.fakes.llm_server import FakeLLMServer

from goldloop.formats.gold import Document
from goldloop.kb import load_kb
from goldloop.llm import RetryPolicy, SQLiteCache, make_provider
from goldloop.llm.annotate import annotate_documents
from goldloop.llm.base import Provider
from goldloop.llm.decode import check_candidates, read_candidates
from goldloop.llm.prompt import parse_mentions
from goldloop.llm.tasks.preannotate import PreannotationTask
from goldloop.settings import Settings
from goldloop.text import parse_cache
from goldloop.text.nlp import load_nlp
from goldloop.text.parsing import Parsing

GENES = [
    "TNF",
    "IL-6",
    "STAT3",
    "SOCS3",
    "TP53",
    "MYC",
    "EGFR",
    "KRAS",
    "BRCA1",
    "VEGF",
    "NF-κB",
    "mTOR",
]
SENTENCES = [
    ("{x} activates {y} in primary macrophages", "activates", "forward", "activates"),
    ("{y} is activated by {x} after stimulation", "activated by", "forward", "activated by"),
    ("{x} inhibits {y} in a dose-dependent manner", "inhibits", "forward", "inhibits"),
    ("{x} binds to {y} with high affinity", "binds to", "symmetric", "binds to"),
    ("{x} increases the expression of {y}", "increases", "forward", "increases"),
    ("loss of {x} leads to the accumulation of {y}", "causes", "forward", "leads to"),
    ("the activation of {x} by {y} was measured", "activates", "inverse", "activation"),
]
FILLER = (
    "These findings were replicated in two independent cohorts and remained significant after "
    "adjustment for age, sex and treatment"
)


def make_documents(n: int, seed: int = 7) -> tuple[list[Document], dict[str, str]]:
    """Abstracts of ~1,200 characters, and the scripted model answer for each."""
    rng = random.Random(seed)
    documents, answers = [], {}
    for k in range(n):
        parts: list[str] = []
        items: list[dict[str, object]] = []
        while sum(len(p) for p in parts) < 1100:
            template, label, direction, surface = rng.choice(SENTENCES)
            x, y = rng.sample(GENES, 2)
            parts.append(template.format(x=x, y=y).capitalize() + ".")
            items.append(
                {
                    "surface": surface,
                    "occurrence": 1 + sum(int(surface in p) for p in parts[:-1]),
                    "label": label,
                    "direction": direction,
                    "subject_text": x,
                    "object_text": y,
                }
            )
            if rng.random() < 0.3:
                parts.append(FILLER + f" (n = {rng.randint(20, 900)}).")
        text = f"Study {k}. " + " ".join(parts)
        documents.append(Document(doc_id=f"bench:{k}", text=text))
        answers[text] = json.dumps({"mentions": items})
    return documents, answers


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _serve(conn: Connection, answers: dict[str, str], latency: float, batch_polls: int) -> None:
    server = FakeLLMServer(
        lambda request: answers[request.user.split("\n", 1)[1]], latency_s=latency
    )
    server.batch_polls = batch_polls
    with server:
        conn.send(server.url)
        conn.recv()  # until the benchmark is done


@contextmanager
def fake_server_process(
    answers: dict[str, str], latency: float, batch_polls: int = 0
) -> Iterator[str]:
    """The fake provider in its own process: a real provider's CPU is not the client's. A fresh
    one has empty prompt caches; its batch jobs end after ``batch_polls`` status reads."""
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(
        target=_serve, args=(child, answers, latency, batch_polls), daemon=True
    )
    process.start()
    try:
        yield parent.recv()
    finally:
        parent.send("stop")
        process.join(10)


def request_count(url: str) -> int:
    with urlopen(f"{url}/_fake/stats") as response:
        return int(json.load(response)["request_count"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=64, help="documents (the issue's size is 200)")
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds per request at the fake server"
    )
    parser.add_argument("--provider", default="openai", choices=["openai", "anthropic", "gemini"])
    parser.add_argument(
        "--rerun-docs", type=int, default=200, help="documents of the parse-cache re-run (2000)"
    )
    args = parser.parse_args()
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        os.environ[name] = "benchmark-key"
    read = Settings.from_env()  # this benchmark is a door: it reads the environment
    # These sections measure parsing: no parse cache; the last one has it.
    parsing = Parsing.from_settings(read).without_cache()

    kb = load_kb()
    nlp = load_nlp(parsing.models)
    documents, answers = make_documents(args.docs)
    task = PreannotationTask(kb)
    requests = [task.request(d.text) for d in documents]
    nlp("warm up the pipeline.")
    parse_s = timed(lambda: list(nlp.pipe(d.text for d in documents)))  # as annotate

    with fake_server_process(answers, args.latency) as url, tempfile.TemporaryDirectory() as tmp:
        base_url = f"{url}/v1" if args.provider == "openai" else url

        def provider(cache: SQLiteCache | None) -> Provider:
            retry = RetryPolicy(attempts=3, initial_s=0.05, max_s=0.2, timeout_s=30)
            return make_provider(
                args.provider,
                "bench-model",
                base_url=base_url,
                cache=cache,
                retry=retry,
                settings=Settings.from_env(),
            )

        def request_phase(concurrency: int) -> float:
            client = provider(None)
            with ThreadPoolExecutor(concurrency) as pool:
                return timed(lambda: list(pool.map(client.complete, requests)))

        def end_to_end(concurrency: int, cache: SQLiteCache | None) -> float:
            client = provider(cache)
            return timed(
                lambda: annotate_documents(
                    documents, client, kb, concurrency=concurrency, parsing=parsing
                )
            )

        request_phase(4)  # warm up the SDK and connections
        print(
            f"{args.docs} documents, {args.latency * 1000:.0f} ms latency, provider {args.provider}"
        )
        print(
            f"spaCy parse alone (as annotate runs it): {parse_s:.2f} s = {1000 * parse_s / args.docs:.0f} ms per abstract"
        )
        r1, r16 = request_phase(1), request_phase(16)
        print(
            f"request phase   c=1 {r1:6.2f} s   c=16 {r16:6.2f} s   ratio {r1 / r16:5.1f}x  (target >= 10x)"
        )
        e1, e16 = end_to_end(1, None), end_to_end(16, None)
        print(
            f"end to end      c=1 {e1:6.2f} s   c=16 {e16:6.2f} s   ratio {e1 / e16:5.1f}x  (target >= 6x)"
        )
        floor = max(r16, parse_s)
        print(
            f"  (c=16 cannot beat max(request phase, parse) = {floor:.2f} s: best possible {e1 / floor:.1f}x here)"
        )
        cache = SQLiteCache(Path(tmp) / "cache.sqlite")
        first = end_to_end(16, cache)
        before = request_count(url)
        cached = end_to_end(16, cache)
        assert request_count(url) == before, "the cached re-run sent requests"
        print(
            f"cached re-run   first {first:6.2f} s   cached {cached:6.2f} s   ratio {first / cached:5.1f}x  (0 requests)"
        )

    parsed = list(nlp.pipe(d.text for d in documents))
    items = [parse_mentions(answers[d.text]) for d in documents]
    mentions = sum(len(i) for i in items)

    def decode_all() -> None:
        for document, doc, doc_items in zip(documents, parsed, items, strict=True):
            candidates, _ = read_candidates(document.text, doc_items, kb)
            check_candidates(candidates, doc, True)

    seconds = timed(decode_all)
    print(
        f"decoding        {mentions} mentions in {seconds:.3f} s = {mentions / seconds:,.0f} mentions/s (parse excluded)"
    )

    fully_cached_rerun(args.rerun_docs, args.latency, args.provider, parsing.models)


RERUNS = 3


def fully_cached_rerun(n: int, latency: float, provider_name: str, models: tuple[str, ...]) -> None:
    """annotate on fresh answer and parse caches, then again with both warm (issue 18), with
    the first of the spaCy pipelines ``models`` that loads."""
    kb = load_kb()
    nlp = load_nlp(models)
    model_load_s = timed(lambda: spacy.load(nlp.meta["lang"] + "_" + nlp.meta["name"]))
    documents, answers = make_documents(n, seed=18)
    with fake_server_process(answers, latency) as url, tempfile.TemporaryDirectory() as tmp:
        base_url = f"{url}/v1" if provider_name == "openai" else url
        os.environ[parse_cache.ENV_PATH] = str(Path(tmp) / "parse-cache.sqlite")
        parsing = Parsing.from_settings(Settings.from_env())  # a door: how annotate parses
        answers_cache = SQLiteCache(Path(tmp) / "cache.sqlite")
        retry = RetryPolicy(attempts=3, initial_s=0.05, max_s=0.2, timeout_s=30)
        client = make_provider(
            provider_name,
            "bench-model",
            base_url=base_url,
            cache=answers_cache,
            retry=retry,
            settings=Settings.from_env(),
        )

        def run() -> tuple[float, float]:
            wall, cpu = time.perf_counter(), time.process_time()
            annotate_documents(documents, client, kb, concurrency=16, parsing=parsing)
            return time.perf_counter() - wall, time.process_time() - cpu

        first = run()
        before = request_count(url)
        # A re-run lasts seconds, so a noisy neighbour moves it by a quarter (1.9-3.1 s in six
        # runs on one host); the first run lasts a minute and averages that out. Median of three.
        reruns = [run() for _ in range(RERUNS)]
        cached = sorted(reruns)[RERUNS // 2]
        assert request_count(url) == before, "the cached re-run sent requests"
        stored = parse_cache.open_cache(parsing)
        assert stored is not None and len(stored) == n, "annotate did not use the parse cache"
    ratio = first[0] / cached[0]
    verdict = "OK" if ratio >= 20 else "MISSED"
    print(
        f"fully cached re-run ({n} documents, answers and parses cached): first {first[0]:6.2f} s"
        f"   re-run {cached[0]:6.2f} s   ratio {ratio:5.1f}x  (target >= 20x) {verdict}"
    )
    each = ", ".join(f"{wall:.2f}" for wall, _ in reruns)
    print(f"  re-run: the median of {RERUNS} ({each} s)")
    print(
        f"  CPU time: first {first[1]:.2f} s, re-run {cached[1]:.2f} s, ratio "
        f"{first[1] / cached[1]:.1f}x; spaCy model load {model_load_s:.2f} s, not in either run "
        f"({1000 * cached[0] / n:.2f} ms per document on the re-run)"
    )


if __name__ == "__main__":
    main()
