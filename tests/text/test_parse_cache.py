"""The parse cache behind ``parse_many``: exact round trips, which entry serves which request,
the size bound, two processes writing at once, and the switches that bypass it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc

from goldloop.settings import BUNDLED_KB, DEMO_CORPUS, SPACY_MODELS, Settings
from goldloop.text import parse_cache
from goldloop.text.nlp import parse_many
from goldloop.text.parse_cache import ParseCache, open_cache, parse_cached
from goldloop.text.parsing import Parsing
from tests.conftest import Cli

EDGE_TEXTS = [
    "",
    "   ",
    "Café naïve résumé: 10 µM TNF-α increased IL-6 (p < 0.05).\n\nA second paragraph  here.",
    "It binds to BAX, which is regulated by TP53 🙂.",
]


def corpus_texts(n: int) -> list[str]:
    """The first ``n`` distinct texts of the bundled demo corpus (abstract-like, invented)."""
    rows = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()[1:]
    texts = list(dict.fromkeys(row.split("\t")[-1] for row in rows))[:n]
    assert len(texts) == n
    return texts


def tokens(doc: Doc) -> list[tuple[Any, ...]]:
    """What a parse without NER sets on a token that goldloop (or a user) may read."""
    return [
        (
            t.text,
            t.whitespace_,
            t.tag_,
            t.pos_,
            str(t.morph),
            t.dep_,
            t.head.i,
            t.lemma_,
            t.norm_,
            t.is_sent_start,
        )
        for t in doc
    ]


def entities(doc: Doc) -> list[tuple[Any, ...]]:
    return [(t.ent_iob_, t.ent_type_) for t in doc]


def same(a: list[Doc], b: list[Doc], *, ents: bool = True) -> bool:
    return len(a) == len(b) and all(
        x.text == y.text
        and tokens(x) == tokens(y)
        and (not ents or entities(x) == entities(y))
        and (not x.has_annotation("DEP") or [s.text for s in x.sents] == [s.text for s in y.sents])
        for x, y in zip(a, b, strict=True)
    )


def stored_sizes(path: Path) -> tuple[int, int]:
    """Entries and their bytes counted from the file itself, not from the cache's own tally."""
    with sqlite3.connect(path) as conn:
        count, size = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(doc)), 0) FROM docs"
        ).fetchone()
    return int(count), int(size)


@pytest.fixture
def cache(tmp_path: Path) -> ParseCache:
    return ParseCache(tmp_path / "parse.sqlite")


@pytest.fixture(scope="module")
def nlp_with_ner() -> Language:
    """The same pipeline with NER kept: one more pipe, after all of load_nlp's."""
    for name in SPACY_MODELS:
        try:
            return spacy.load(name)
        except OSError:
            continue
    pytest.skip("no spaCy English pipeline installed")


def test_a_round_trip_gives_what_a_fresh_parse_gives(nlp: Language, cache: ParseCache) -> None:
    texts = EDGE_TEXTS + corpus_texts(12)
    fresh = list(nlp.pipe(texts))
    first = list(parse_cached(cache, nlp, texts))
    assert len(cache) == len(set(texts))
    again = list(parse_cached(cache, nlp, texts))
    assert len(cache) == len(set(texts))  # served, nothing stored again
    assert same(fresh, first) and same(fresh, again)
    assert all(doc.vocab is nlp.vocab for doc in again)
    assert all(doc.has_annotation("DEP") for doc in again if len(doc))
    # Served docs are fresh objects: changing one changes neither the cache nor the others.
    again[4][0].lemma_ = "changed"
    assert same(fresh, list(parse_cached(cache, nlp, texts)))


def test_repeated_texts_in_one_call_get_their_own_docs(nlp: Language, cache: ParseCache) -> None:
    text = corpus_texts(1)[0]
    list(parse_cached(cache, nlp, [text]))
    docs = list(parse_cached(cache, nlp, [text, text, "Other text.", text]))
    assert len({id(doc) for doc in docs}) == 4
    assert same(docs, list(nlp.pipe([text, text, "Other text.", text])))


def test_an_entry_serves_requests_for_a_prefix_of_its_pipes(
    nlp: Language, nlp_with_ner: Language, cache: ParseCache
) -> None:
    texts = corpus_texts(6)
    list(parse_cached(cache, nlp_with_ner, texts))
    assert len(cache) == 6
    without_ner = list(parse_cached(cache, nlp_with_ner, texts, disable=["ner"]))
    assert len(cache) == 6  # fewer pipes at the end: served by the entry with NER
    fresh = list(nlp_with_ner.pipe(texts, disable=["ner"]))
    assert same(without_ner, fresh, ents=False)
    assert any(doc.ents for doc in without_ner)  # the entry's extra annotations come along
    # More pipes than any entry has: a miss, parsed and stored.
    list(parse_cached(cache, nlp_with_ner, texts, disable=["parser", "ner"]))
    assert len(cache) == 12
    list(parse_cached(cache, nlp_with_ner, texts, disable=["ner"]))
    assert len(cache) == 12


def test_a_pipe_skipped_in_the_middle_is_never_served_from_the_full_parse(
    nlp: Language, cache: ParseCache
) -> None:
    """attribute_ruler reads the parser's labels: the full parse's POS are not the light one's."""
    texts = corpus_texts(20)
    light = list(parse_cached(cache, nlp, texts, disable=["parser"]))
    full = list(parse_cached(cache, nlp, texts))
    assert len(cache) == 40  # the full request needs the parser: a miss
    # The reason, checked on this data: the two parses disagree somewhere on POS or morphology.
    assert any(
        [(t.pos_, str(t.morph)) for t in a] != [(t.pos_, str(t.morph)) for t in b]
        for a, b in zip(light, full, strict=True)
    )
    assert same(light, list(parse_cached(cache, nlp, texts, disable=["parser"])))
    assert same(full, list(parse_cached(cache, nlp, texts)))
    assert len(cache) == 40


def test_another_model_version_misses(nlp_with_ner: Language, tmp_path: Path) -> None:
    cache = ParseCache(tmp_path / "parse.sqlite")
    texts = corpus_texts(3)
    list(parse_cached(cache, nlp_with_ner, texts))
    other = spacy.load(nlp_with_ner.path) if nlp_with_ner.path else None
    if other is None:
        pytest.skip("the pipeline has no path to load a second copy from")
    other.meta["version"] = "0.0.1-test"
    list(parse_cached(cache, other, texts))
    assert len(cache) == 6
    list(parse_cached(cache, other, texts))
    assert len(cache) == 6


def test_the_size_bound_evicts_the_least_recently_used(nlp: Language, tmp_path: Path) -> None:
    texts = corpus_texts(24)
    first, second, third = texts[:8], texts[8:16], texts[16:]
    probe = ParseCache(tmp_path / "probe.sqlite")
    list(parse_cached(probe, nlp, texts))
    per_text = probe.stored_bytes() / len(texts)
    path = tmp_path / "parse.sqlite"
    bound = int(per_text * 18)  # room for two of the three groups, not all three
    cache = ParseCache(path, max_bytes=bound, touch_after_s=0)
    list(parse_cached(cache, nlp, first))
    list(parse_cached(cache, nlp, second))
    list(parse_cached(cache, nlp, first))  # first is now used more recently
    assert len(cache) == 16
    list(parse_cached(cache, nlp, third))
    count, size = stored_sizes(path)
    assert size <= bound and size == cache.stored_bytes()
    kept = set(
        cache.get_many(parse_cache.pipeline_id(nlp), [parse_cache.text_key(t) for t in texts])
    )
    keys = {parse_cache.text_key(t) for t in first + third}
    assert kept == keys and count == len(keys)


def test_answers_are_stored_by_kind_beside_the_docs(cache: ParseCache) -> None:
    keys = [parse_cache.text_key(t) for t in ("one", "two")]
    cache.put_answers("pipe-a", "kind-1", [(keys[0], b"first"), (keys[1], b"second")])
    cache.put_answers("pipe-a", "kind-1", [(keys[0], b"not stored twice")])
    cache.put_answers("pipe-a", "kind-2", [(keys[0], b"other kind")])
    assert cache.get_answers("pipe-a", "kind-1", keys) == {keys[0]: b"first", keys[1]: b"second"}
    assert cache.get_answers("pipe-a", "kind-2", keys) == {keys[0]: b"other kind"}
    assert cache.get_answers("pipe-b", "kind-1", keys) == {}
    assert len(cache) == 0  # answers are not docs
    assert cache.stored_bytes() == len(b"first" + b"second" + b"other kind")


def test_docs_and_answers_share_the_bound_least_recently_used_first(
    nlp: Language, tmp_path: Path
) -> None:
    texts = corpus_texts(8)
    probe = ParseCache(tmp_path / "probe.sqlite")
    list(parse_cached(probe, nlp, texts))
    docs = probe.stored_bytes()
    answer = docs // 8  # eight answers weigh what the eight docs weigh
    # Docs and one group of answers fit; a second group passes the bound, and it takes the
    # whole older group (seven are not enough) to come under the low-water mark (0.9 bound).
    bound = int(docs * 2.29)
    path = tmp_path / "parse.sqlite"
    cache = ParseCache(path, max_bytes=bound, touch_after_s=0)
    pipeline = parse_cache.pipeline_id(nlp)
    keys = [parse_cache.text_key(f"answer {k}") for k in range(16)]
    older, newer = keys[:8], keys[8:]
    list(parse_cached(cache, nlp, texts))  # the docs, first
    cache.put_answers(pipeline, "k", [(key, b"x" * answer) for key in older])
    list(parse_cached(cache, nlp, texts))  # the docs are now used more recently
    assert cache.stored_bytes() == docs + 8 * answer
    cache.put_answers(pipeline, "k", [(key, b"y" * answer) for key in newer])
    with sqlite3.connect(path) as conn:
        sizes = [
            conn.execute(f"SELECT COALESCE(SUM(size), 0) FROM {table}").fetchone()[0]
            for table in ("docs", "answers")
        ]
    assert sizes == [docs, 8 * answer] and sum(sizes) == cache.stored_bytes() <= bound
    assert cache.get_answers(pipeline, "k", older) == {}
    assert set(cache.get_answers(pipeline, "k", newer)) == set(newer)
    assert len(cache) == 8


CHILD = """
import sys
from goldloop.text.nlp import load_nlp
from goldloop.text.parse_cache import ParseCache, parse_cached
texts = [line for line in open(sys.argv[2], encoding="utf-8").read().split("\\x00")]
cache = ParseCache(sys.argv[1])
for _ in range(2):
    for doc in parse_cached(cache, load_nlp(), texts, batch_size=4):
        pass
print(len(cache))
"""


def test_two_processes_write_one_cache_at_once(nlp: Language, tmp_path: Path) -> None:
    texts = corpus_texts(30)
    path = tmp_path / "parse.sqlite"
    lists = []
    for name, part in (("a", texts[:20]), ("b", texts[10:])):  # ten texts in common
        lists.append(tmp_path / name)
        lists[-1].write_text("\x00".join(part), encoding="utf-8")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(CHILD), str(path), str(texts_file)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "GOLDLOOP_PARSE_CACHE": str(tmp_path / "unused.sqlite")},
        )
        for texts_file in lists
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    cache = ParseCache(path)
    count, size = stored_sizes(path)
    assert count == len(cache) == 30 and size == cache.stored_bytes()
    assert same(list(parse_cached(cache, nlp, texts)), list(nlp.pipe(texts)))
    assert len(cache) == 30


def test_several_processes_parse_only_the_misses_in_order(nlp: Language, cache: ParseCache) -> None:
    texts = corpus_texts(24)
    list(parse_cached(cache, nlp, texts[::3]))
    assert len(cache) == 8
    docs = list(parse_cached(cache, nlp, iter(texts), n_process=2, batch_size=2))
    assert len(cache) == 24
    assert same(docs, list(nlp.pipe(texts)))


def test_derive_runs_where_each_doc_is_parsed(nlp: Language, cache: ParseCache) -> None:
    """Workers derive from the docs they parse and send back only that (and the stored bytes);
    a stored doc is derived here. Both give what a fresh parse gives."""
    texts = corpus_texts(24)
    list(parse_cached(cache, nlp, texts[::3]))

    def derive(doc: Doc) -> tuple[int, list[tuple[Any, ...]]]:
        return os.getpid(), tokens(doc)

    derived = list(parse_cached(cache, nlp, texts, n_process=2, batch_size=2, derive=derive))
    assert [found for _, found in derived] == [tokens(doc) for doc in nlp.pipe(texts)]
    here = [i for i, (pid, _) in enumerate(derived) if pid == os.getpid()]
    assert here == list(range(0, 24, 3))  # the stored ones; the others came from the workers
    assert len(cache) == 24
    assert same(list(parse_cached(cache, nlp, texts)), list(nlp.pipe(texts)))


def test_without_fork_spacys_own_processes_parse_the_misses(
    nlp: Language, cache: ParseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A platform without fork (Windows) is simulated by switching the forked workers off."""
    monkeypatch.setattr(parse_cache._Workers, "usable", staticmethod(lambda: False))
    texts = corpus_texts(12)
    docs = list(parse_cached(cache, nlp, texts, n_process=2, batch_size=2))
    assert len(cache) == 12
    assert same(docs, list(nlp.pipe(texts)))


def test_a_caller_stopping_early_stops_the_parse_workers(nlp: Language, cache: ParseCache) -> None:
    import multiprocessing

    docs = parse_cached(cache, nlp, corpus_texts(24), n_process=2, batch_size=2)
    first = next(docs)
    assert multiprocessing.active_children()  # the workers are parsing the rest
    docs.close()  # type: ignore[attr-defined]
    assert first.text == corpus_texts(1)[0]
    assert not multiprocessing.active_children()


def test_a_stream_is_read_a_window_at_a_time(nlp: Language, cache: ParseCache) -> None:
    read = 0

    def stream() -> Iterator[str]:
        nonlocal read
        for k in range(100_000):
            read += 1
            yield f"Text number {k}."

    docs = parse_cached(cache, nlp, stream())
    assert next(docs).text == "Text number 0."
    assert read <= parse_cache.WINDOW


def test_switches_bypass_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "parse.sqlite"
    off = Parsing.from_settings(Settings.from_env({"GOLDLOOP_PARSE_CACHE": "off"}))
    assert off.cache_path is None and open_cache(off) is None
    list(parse_many(corpus_texts(2), off))
    read = Settings.from_env({"GOLDLOOP_PARSE_CACHE": str(path)})
    root_option = Parsing.from_settings(read.without_parse_cache())  # --no-parse-cache
    assert open_cache(root_option) is None
    list(parse_many(corpus_texts(2), root_option))
    assert not path.exists()
    on = Parsing.from_settings(read)
    assert open_cache(on) is open_cache(on) is not None  # one cache per file in a process
    list(parse_many(corpus_texts(2), on))
    assert stored_sizes(path)[0] == 2


def test_the_root_option_bypasses_the_cache_for_a_command(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "parse.sqlite"
    env = {"GOLDLOOP_PARSE_CACHE": str(path)}
    command = ["sample", "--corpus", DEMO_CORPUS, "--kb", BUNDLED_KB, "--n-primary", 2, "--n-double", 1]  # fmt: skip
    result = cli("--no-parse-cache", *command, "--out", tmp_path / "off", env=env)
    assert result.returncode == 0, result.err
    assert not path.exists()
    result = cli(*command, "--out", tmp_path / "on", env=env)
    assert result.returncode == 0, result.err
    assert stored_sizes(path)[0] > 0


def test_an_unusable_location_is_one_error_naming_it(tmp_path: Path, cli: Cli) -> None:
    from goldloop.errors import GoldloopError

    with pytest.raises(GoldloopError, match="parse cache"):
        ParseCache(tmp_path)  # a directory
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_text("not a database " * 40)
    out = tmp_path / "sample"
    result = cli("sample", "--corpus", DEMO_CORPUS, "--out", out, "--n-primary", 2,
                 env={"GOLDLOOP_PARSE_CACHE": str(damaged)})  # fmt: skip
    assert result.returncode == 2 and not out.exists()
    assert result.err == f"error: {damaged}: cannot open the parse cache: file is not a database"
