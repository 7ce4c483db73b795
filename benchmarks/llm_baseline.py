"""Benchmark the llm linking baseline against the fake provider server with per-request latency.

Measures, in one run, the baseline over the same gold spans at concurrency 8 vs 1 (the request
runner against one request at a time; target >= 5x) and a fully cached re-run vs the first run.

    .venv/bin/python benchmarks/llm_baseline.py              # short default run
    .venv/bin/python benchmarks/llm_baseline.py --spans 400  # a larger gold
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fakes

from tests.fakes.llm_server import FakeLLMServer, FakeRequest

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB, load_kb
from goldloop.llm import RetryPolicy, SQLiteCache
from goldloop.scoring.baselines import llm_baseline

SENTENCE = "TNF activates IL-{k} in macrophages and inhibits STAT{k}. "


def make_gold(spans: int, kb: KB) -> list[Document]:
    """Documents of ten sentences, each with its two verbs as gold spans."""
    documents = []
    for d in range(max(1, spans // 20)):
        text = f"Study {d}. " + "".join(SENTENCE.format(k=k) for k in range(10))
        hits = []
        for match in re.finditer(r"activates|inhibits", text):
            relation = kb.lookup(match.group())
            assert relation is not None
            hits.append(
                Hit(
                    a=match.start(), b=match.end(), surface=match.group(),
                    entity_id=relation.entity_id, label=relation.label,
                )
            )  # fmt: skip
        documents.append(Document(doc_id=f"bench:{d}", text=text, ground_truth=hits))
    return documents


def answer(request: FakeRequest) -> str:
    marked = re.search(r"\[\[(.+?)\]\]", request.user)
    return json.dumps({"label": marked.group(1) if marked else "NONE"})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spans", type=int, default=80, help="gold spans (a multiple of 20)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per request")
    args = parser.parse_args()
    kb = load_kb()
    documents = make_gold(args.spans, kb)
    n = sum(len(d.ground_truth) for d in documents)
    retry = RetryPolicy(attempts=3, initial_s=0.05, max_s=0.2, timeout_s=30)
    with (
        FakeLLMServer(answer, latency_s=args.latency) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        timings = {}
        for concurrency in (1, 8):
            provider = server.provider("openai", "bench", cache=None, retry=retry)
            started = time.perf_counter()
            run = llm_baseline(documents, kb, provider, concurrency=concurrency)
            timings[concurrency] = time.perf_counter() - started
            outcomes = run.report.to_dict()["outcomes"]
            assert outcomes.get("answered") == n, outcomes
        cached = server.provider("openai", "bench", cache=SQLiteCache(Path(tmp) / "c.sqlite"))
        first = time.perf_counter()
        llm_baseline(documents, kb, cached, concurrency=8)
        first_s = time.perf_counter() - first
        server.reset()
        again = time.perf_counter()
        llm_baseline(documents, kb, cached, concurrency=8)
        again_s = time.perf_counter() - again
        assert server.request_count == 0
    ratio = timings[1] / timings[8]
    print(f"{n} spans, {args.latency * 1000:.0f} ms latency")
    print(
        f"llm baseline    c=1 {timings[1]:6.2f} s   c=8 {timings[8]:6.2f} s   "
        f"ratio {ratio:5.1f}x  (target >= 5x)"
    )
    print(
        f"cached re-run   first {first_s:5.2f} s   cached {again_s:5.2f} s   "
        f"ratio {first_s / again_s:5.1f}x  (0 requests)"
    )


if __name__ == "__main__":
    main()
