"""Benchmark batch mode and prompt caching against the fake provider in its own process.

Measures, in one run and per provider format: the goldloop process's own CPU time to submit and
collect the requests through the batch API vs sending them online (target ≤ 1.2×), the share of
input tokens the provider's prompt cache served on documents 2..N, as the fake computes it by each
provider's documented rule (target ≥ 85% for Anthropic's and OpenAI's formats), and the run's cost
online without caching, online with caching and in batch mode with caching, from the usage the
provider returned and the shipped price table.

    .venv/bin/python benchmarks/batch.py               # short default run
    .venv/bin/python benchmarks/batch.py --docs 1000   # the issue's size
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fakes and benchmarks

from benchmarks.annotate import fake_server_process, make_documents

from goldloop.kb import load_kb
from goldloop.llm import (
    DEFAULT_MODELS,
    LLMRequest,
    LLMResponse,
    RetryPolicy,
    SQLiteCache,
    make_provider,
)
from goldloop.llm.batch import BatchPolicy, collect_batch
from goldloop.llm.pricing import load_prices, usage_cost
from goldloop.llm.runner import Answer, run_requests
from goldloop.llm.tasks.preannotate import PreannotationTask
from goldloop.llm.tasks.task import cache_check
from goldloop.llm.usage import add_usage
from goldloop.settings import Settings

FORMATS = (("openai", "chat"), ("openai", "responses"), ("anthropic", None), ("gemini", None))


def usages(answers: list[Answer]) -> list[dict[str, int]]:
    bad = [a for a in answers if not isinstance(a, LLMResponse)]
    assert not bad, f"{len(bad)} request(s) failed: {bad[0]}"
    return [a.usage for a in answers if isinstance(a, LLMResponse)]


def run(
    name: str, api: str | None, mode: str, requests: list[LLMRequest], answers: dict[str, str]
) -> tuple[float, list[dict[str, int]]]:
    """CPU seconds of this process and each request's usage, online or in batch mode."""
    parsable = cache_check(PreannotationTask(load_kb()))
    with (
        fake_server_process(answers, 0.0, batch_polls=2) as url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        provider = make_provider(
            name, DEFAULT_MODELS[name], base_url=f"{url}/v1" if name == "openai" else url,
            cache=SQLiteCache(Path(tmp) / "cache.sqlite"), api=api,
            retry=RetryPolicy(attempts=3, initial_s=0.05, max_s=0.2, timeout_s=60),
        settings=Settings.from_env())  # fmt: skip
        started = time.process_time()
        if mode == "online":
            got = run_requests(provider, requests, concurrency=16, usable=parsable)
        else:
            policy = BatchPolicy(poll_initial_s=0.05, poll_max_s=0.2)
            got_by_index: dict[int, Answer] = {}
            for pairs in collect_batch(
                provider, requests, state_path=Path(tmp) / "state.json", policy=policy,
                usable=parsable,
            ):  # fmt: skip
                got_by_index.update(pairs)
            got = [got_by_index[i] for i in range(len(requests))]
        return time.process_time() - started, usages(got)


def cached_share(per_request: list[dict[str, int]]) -> float:
    later = per_request[1:]  # documents 2..N
    return sum(u.get("cached_input_tokens", 0) for u in later) / sum(
        u["input_tokens"] for u in later
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=200, help="documents (the issue's size: 1000)")
    args = parser.parse_args()
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        os.environ[variable] = "benchmark-key"
    kb = load_kb()
    documents, answers = make_documents(args.docs)
    task = PreannotationTask(kb)
    requests = [task.request(d.text) for d in documents]
    system = task.system
    # This benchmark is a door: it reads the environment, here and in run(), after the keys.
    prices = load_prices(env=Settings.from_env().environ)
    print(
        f"{args.docs} documents, KB catalog of {len(system):,} characters; "
        f"prices: {prices.path.name} of {prices.date}"
    )
    print(
        f"{'format':20} {'CPU online':>10} {'CPU batch':>10} {'ratio':>6} {'cached 2..N':>12} "
        f"{'(batch)':>8} "
        f"{'$ online':>10} {'$ +caching':>10} {'$ batch+caching':>16}"
    )
    for name, api in FORMATS:
        online_s, online = run(name, api, "online", requests, answers)
        batch_s, batch = run(name, api, "batch", requests, answers)
        price = prices.price(name, DEFAULT_MODELS[name])
        assert price is not None, f"{name} {DEFAULT_MODELS[name]} is not in the shipped table"
        total = add_usage(online)
        uncached = {**total, "cached_input_tokens": 0, "cache_write_input_tokens": 0}
        label = f"{name}{'/' + api if api else ''}"
        print(
            f"{label:20} {online_s:9.2f}s {batch_s:9.2f}s {batch_s / online_s:5.2f}x "
            f"{cached_share(online):11.1%} {cached_share(batch):8.1%} "
            f"{usage_cost(uncached, price):10.4f} "
            f"{usage_cost(total, price):10.4f} {usage_cost(add_usage(batch), price, batch=True):16.4f}"
        )
    print("targets: CPU ratio <= 1.2x; cached 2..N >= 85% for the OpenAI and Anthropic formats")


if __name__ == "__main__":
    main()
