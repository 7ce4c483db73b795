"""``goldloop annotate`` on a sample dir and on a documents JSONL, with each provider and ``lexical``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from goldloop.formats.gold import read_gold
from goldloop.formats.sampledir import ManifestRow, append_batch
from goldloop.kb import KB
from tests.conftest import Cli, CliResult
from tests.fakes.llm_server import KEY_ENV, FakeLLMServer, FakeRequest, Reply
from tests.llm.conftest import PROVIDER_NAMES, answers_by_text, mentions_json

TEXTS = {
    "pmid:1": "TNF binds to TNFR1 and increases apoptosis.",
    "pmid:2": "IL-6 is activated by TNF in macrophages.",
    "pmid:3": "A reserve abstract that inhibits nothing.",
}
ROLES = {"pmid:1": "primary", "pmid:2": "double", "pmid:3": "reserve"}
ANSWERS = answers_by_text(
    {
        TEXTS["pmid:1"]: mentions_json(
            [
                {
                    "surface": "binds to",
                    "occurrence": 1,
                    "label": "binds to",
                    "direction": "symmetric",
                },
                {
                    "surface": "increases",
                    "occurrence": 1,
                    "label": "increases",
                    "direction": "forward",
                },
                {
                    "surface": "apoptosis",
                    "occurrence": 1,
                    "label": "increases",
                    "direction": "forward",
                },
            ]
        ),
        TEXTS["pmid:2"]: mentions_json(
            [
                {
                    "surface": "activated by",
                    "occurrence": 1,
                    "label": "activates",
                    "direction": "inverse",
                }
            ]
        ),
    }
)


def make_sample_dir(directory: Path) -> Path:
    rows = [
        ManifestRow(
            doc_id=doc_id,
            doc_uid=doc_id.split(":")[1],
            ids={"pmid": doc_id.split(":")[1]},
            publication_year=2020,
            n_chars=len(text),
            n_mentions=1,
            n_verb_mentions=1,
            labels_detected=("increases",),
            stratum="s",
            p_incl=0.5,
            batch=0,
            role=ROLES[doc_id],
            text_sha1="0" * 40,
        )
        for doc_id, text in TEXTS.items()
    ]
    append_batch(directory, rows, TEXTS)
    return directory


def make_documents_jsonl(path: Path) -> Path:
    path.write_text(
        "".join(
            json.dumps({"doc_id": k, "text": t, "source_note": "x"}) + "\n"
            for k, t in TEXTS.items()
        )
    )
    return path


def source_options(source: str, workdir: Path) -> list[str]:
    """``--sample DIR`` or ``--documents JSONL`` over the same three documents."""
    if source == "sample":
        return ["--sample", str(make_sample_dir(workdir / "sample"))]
    return ["--documents", str(make_documents_jsonl(workdir / "docs.jsonl"))]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOLDLOOP_CACHE", str(tmp_path / "cache.sqlite"))
    return tmp_path


Invoke = Callable[..., CliResult]


@pytest.fixture
def invoke(cli: Cli) -> Invoke:
    """``goldloop ARGS`` through the shared runner, which must succeed."""

    def run(*args: str | Path) -> CliResult:
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        return result

    return run


@pytest.mark.parametrize("name", PROVIDER_NAMES)
@pytest.mark.parametrize("source", ["sample", "documents"])
def test_annotate_with_each_provider(
    llm_server: FakeLLMServer, workdir: Path, kb: KB, name: str, source: str, invoke: Invoke
) -> None:
    llm_server.answer = ANSWERS
    where = source_options(source, workdir)
    out = workdir / "gold.json"
    invoke(
        "annotate", *where, "--out", str(out), "--provider", name, "--model", "m-1", "--effort", "low",
        "--base-url", llm_server.base_url(name), "--concurrency", "2",
    )  # fmt: skip
    gold = read_gold(out, kb)
    report = json.loads(out.with_name("gold.json.report.json").read_text())
    expected_docs = ["pmid:1", "pmid:2"] if source == "sample" else ["pmid:1", "pmid:2", "pmid:3"]
    assert [d.doc_id for d in gold.documents] == expected_docs  # the reserve role is not annotated
    assert llm_server.request_count == len(expected_docs)
    hits = [h for d in gold.documents for h in d.ground_truth]
    assert [(h.surface, h.direction) for h in hits] == [
        ("binds to", "symmetric"),
        ("increases", "forward"),
        ("activated by", "inverse"),
    ]
    assert {h.annotator for h in hits} == {f"m-1@low@{llm_server.base_url(name)}"}
    counts = report["counts"]
    assert counts["hits"] + counts["rejections"] == counts["items"] == 4
    assert report["rejections"] == [
        {
            "surface": "apoptosis",
            "occurrence": 1,
            "label": "increases",
            "direction": "forward",
            "doc_id": "pmid:1",
            "reasons": ["non_verbal"],
        }
    ]
    assert (report["provider"], report["model"], report["effort"]) == (name, "m-1", "low")
    if source == "sample":
        assert [(d.role, d.doc_uid, d.batch) for d in gold.documents] == [
            ("primary", "1", 0),
            ("double", "2", 0),
        ]
    else:
        assert gold.documents[0].model_extra == {"source_note": "x"}
    for key in KEY_ENV:
        assert os.environ[key] not in out.with_name("gold.json.report.json").read_text()


@pytest.mark.parametrize("source", ["sample", "documents"])
def test_annotate_lexical_without_any_key(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, kb: KB, source: str, invoke: Invoke
) -> None:
    for key in KEY_ENV:
        monkeypatch.delenv(key, raising=False)
    where = source_options(source, workdir)
    out = workdir / "lexical.json"
    invoke(
        "annotate", *where, "--out", str(out)
    )  # no --provider: lexical is the default without keys
    report = json.loads((workdir / "lexical.json.report.json").read_text())
    assert report["annotator"] == f"lexical@{kb.tag}"
    hits = [h for d in read_gold(out, kb).documents for h in d.ground_truth]
    assert {h.surface for h in hits} >= {"binds to", "increases", "activated by"}
    assert report["counts"]["hits"] + report["counts"]["rejections"] == report["counts"]["items"]


def test_dry_run_calls_nothing(llm_server: FakeLLMServer, workdir: Path, invoke: Invoke) -> None:
    sample = make_sample_dir(workdir / "sample")
    out = workdir / "gold.json"
    result = invoke(
        "annotate", "--sample", str(sample), "--out", str(out), "--provider", "anthropic",
        "--base-url", llm_server.base_url("anthropic"), "--dry-run", "--input-price", "3",
    )  # fmt: skip
    assert llm_server.request_count == 0
    assert not out.exists()
    output = result.out
    assert "requests to send" in output and "input cost" in output


def test_truncated_documents_are_left_out_and_retried(
    llm_server: FakeLLMServer, workdir: Path, kb: KB, invoke: Invoke, cli: Cli
) -> None:
    llm_server.answer = ANSWERS
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    common = [
        "annotate",
        "--documents",
        str(docs),
        "--out",
        str(out),
        "--provider",
        "gemini",
        "--base-url",
        llm_server.url,
    ]
    cut = cli(*common, "--max-tokens", "30")
    assert cut.returncode == 3, cut.stderr  # partial: the README's code, not success
    assert "1 of 3 documents failed (pmid:1: truncated:" in cut.err
    report = json.loads((workdir / "gold.json.report.json").read_text())
    assert report["counts"]["truncated"] == 1  # the long answer for pmid:1
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:2", "pmid:3"]
    llm_server.reset()
    invoke(*common, "--max-tokens", "2000")
    assert llm_server.request_count == 1
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:1", "pmid:2", "pmid:3"]


@pytest.mark.parametrize("reply", ["unparsable", "cut off"])
def test_a_run_with_no_usable_answer_writes_nothing_and_exits_4(
    llm_server: FakeLLMServer, workdir: Path, cli: Cli, reply: str
) -> None:
    if reply == "unparsable":
        llm_server.answer = lambda request: Reply("Sorry, I cannot help with that.")
    else:
        llm_server.answer = lambda request: Reply('{"mentions": [', truncated=True)
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    result = cli(
        "annotate", "--documents", docs, "--out", out, "--provider", "gemini",
        "--base-url", llm_server.url,
    )  # fmt: skip
    assert result.returncode == 4, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    reason = "unparsable" if reply == "unparsable" else "truncated"
    assert "nothing written" in result.err and f"pmid:1: {reason}:" in result.err
    # Every request was answered: the line does not say they failed.
    assert "no request gave a usable answer" in result.err and "request failed" not in result.err
    assert not out.exists() and not (workdir / "gold.json.report.json").exists()


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"doc_id": "a", "text": "ok"}\nnot json\n')
    monkeypatch.chdir(tmp_path)
    result = cli(
        "annotate", "--documents", bad, "--out", tmp_path / "o.json", "--provider", "lexical",
        env={"COLUMNS": "400"},  # rich wraps at 80 columns without a terminal
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "docs.jsonl: line 2: not valid JSON" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.json").exists()


def test_dry_run_needs_no_key(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, invoke: Invoke
) -> None:
    for key in KEY_ENV:
        monkeypatch.delenv(key, raising=False)
    result = invoke(
        "annotate", "--documents", str(make_documents_jsonl(workdir / "docs.jsonl")),
        "--provider", "openai", "--model", "gpt-x", "--effort", "high", "--dry-run",
    )  # fmt: skip
    output = result.out
    assert "gpt-x@high" in output and "requests to send" in output


def test_a_batch_run_interrupted_after_submission_resumes_and_collects_each_answer_once(
    llm_server: FakeLLMServer, workdir: Path, kb: KB, invoke: Invoke
) -> None:
    llm_server.answer = ANSWERS
    llm_server.batch_polls = 10**6  # the job runs until this test lets it end
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    state = workdir / "gold.json.batch.json"
    common = [
        "annotate", "--documents", str(docs), "--out", str(out), "--provider", "anthropic",
        "--base-url", llm_server.base_url("anthropic"), "--poll-interval", "0.05",
    ]  # fmt: skip
    command = [str(Path(sys.executable).with_name("goldloop")), *common, "--batch"]
    env = {**os.environ, "COLUMNS": "400"}
    process = subprocess.Popen(
        command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not (
        state.exists() and any(j["polls_left"] < 10**6 for j in llm_server.batches.values())
    ):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "the batch jobs run on" in " ".join(err.split())
    assert not out.exists() and state.exists()
    assert len(llm_server.batches) == 1 and not llm_server.answered

    for job in llm_server.batches.values():
        job["polls_left"] = 0  # the provider finishes the job
    invoke(*common, "--resume")
    assert len(llm_server.batches) == 1 and llm_server.request_count == 0
    assert sorted(llm_server.answered.values()) == [1, 1, 1]  # each request answered once
    assert [d.doc_id for d in read_gold(out, kb).documents] == ["pmid:1", "pmid:2", "pmid:3"]
    assert not state.exists()
    report = json.loads(out.with_name("gold.json.report.json").read_text())
    assert report["mode"] == "batch" and report["counts"]["requests"] == 3
    # Every answer is in the cache: an online re-run sends nothing.
    invoke(*common)
    assert llm_server.request_count == 0 and len(llm_server.batches) == 1


def test_ctrl_c_while_a_batch_job_is_created_still_records_it(
    llm_server: FakeLLMServer, workdir: Path, kb: KB, invoke: Invoke
) -> None:
    llm_server.answer = ANSWERS
    llm_server.batch_polls = 10**6
    llm_server.batch_create_delay_s = 1.5  # the provider made the job; its id is on the way
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    state = workdir / "gold.json.batch.json"
    common = [
        "annotate", "--documents", str(docs), "--out", str(out), "--provider", "openai",
        "--base-url", llm_server.base_url("openai"), "--poll-interval", "0.05",
    ]  # fmt: skip
    command = [str(Path(sys.executable).with_name("goldloop")), *common, "--batch"]
    process = subprocess.Popen(
        command, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not llm_server.batches:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    assert not state.exists()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "finishing submitting a batch job and recording it" in err
    assert "the batch jobs run on" in " ".join(err.split())
    recorded = json.loads(state.read_text(encoding="utf-8"))
    assert [job["id"] for job in recorded["jobs"]] == list(llm_server.batches)

    llm_server.batch_create_delay_s = 0
    for job in llm_server.batches.values():
        job["polls_left"] = 0
    invoke(*common, "--resume")
    assert len(llm_server.batches) == 1 and sorted(llm_server.answered.values()) == [1, 1, 1]
    assert len(read_gold(out, kb).documents) == 3 and not state.exists()


def test_no_wait_submits_and_exits_5_and_resume_needs_a_state_file(
    llm_server: FakeLLMServer, workdir: Path, cli: Cli
) -> None:
    llm_server.batch_polls = 1
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    common = [
        "annotate", "--documents", docs, "--out", out, "--provider", "openai",
        "--base-url", llm_server.base_url("openai"),
    ]  # fmt: skip
    result = cli(*common, "--resume")
    assert result.returncode == 2 and "--resume: there is no batch state file" in result.err
    result = cli(*common, "--batch", "--no-wait")
    assert result.returncode == 5 and "run the same command again to collect them" in result.err
    assert not out.exists() and (workdir / "gold.json.batch.json").exists()
    result = cli(*common, "--no-wait")
    assert result.returncode == 0, result.err
    assert len(read_gold(out).documents) == 3 and len(llm_server.batches) == 1
    result = cli(*common, "--batch", "--api", "messages")
    assert result.returncode == 2 and "--api: openai: there is no API 'messages'" in result.err


def test_the_dry_run_prices_online_and_batch_from_the_given_table(
    llm_server: FakeLLMServer, workdir: Path, invoke: Invoke
) -> None:
    llm_server.answer = ANSWERS
    prices = workdir / "prices.json"
    prices.write_text(json.dumps({
        "date": "test", "sources": {},
        "providers": {"gemini": {"batch_discount": 0.5, "models": {
            "m-1": {"input": 1.0, "cached_input": 0.1, "output": 10.0}}}},
    }))  # fmt: skip
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    common = [
        "annotate", "--documents", str(docs), "--provider", "gemini", "--model", "m-1",
        "--base-url", llm_server.base_url("gemini"), "--prices", str(prices),
    ]  # fmt: skip
    first = invoke(*common, "--dry-run").out
    assert "cost online (USD)" in first and "cost with --batch (USD)" in first
    assert "output at its limit" in first and "output tokens (at most)" in first
    invoke(*common, "--out", str(workdir / "gold.json"), "--limit", "2")
    report = json.loads((workdir / "gold.json.report.json").read_text())
    assert report["cost"]["prices"] == str(prices) and report["cost"]["usd"] > 0
    again = invoke(*common, "--dry-run").out
    assert "calibrated on 2 cached answer(s)" in again and "output tokens (estimate)" in again
    assert llm_server.request_count == 2


def half_fail(request: FakeRequest) -> Reply | str:
    """HTTP 500 for pmid:2 and pmid:3, every time; the scripted answer for the others."""
    if TEXTS["pmid:2"] in request.user or TEXTS["pmid:3"] in request.user:
        return Reply("overloaded", status=500)
    return ANSWERS(request)


AnnotateCli = Callable[..., tuple[int, str]]


@pytest.fixture
def annotate_cli(llm_server: FakeLLMServer, workdir: Path, cli: Cli) -> AnnotateCli:
    """``goldloop annotate`` of the three documents into ``gold.json`` by a provider of the fake:
    (exit code, stderr unwrapped)."""
    docs = make_documents_jsonl(workdir / "docs.jsonl")

    def run(provider: str, *options: str) -> tuple[int, str]:
        result = cli(
            "annotate", "--documents", docs, "--out", workdir / "gold.json", "--provider",
            provider, "--base-url", llm_server.base_url(provider), *options,
        )  # fmt: skip
        return result.returncode, result.err

    return run


def test_failed_requests_exit_3_with_the_rest_and_a_rerun_asks_only_for_them(
    llm_server: FakeLLMServer, workdir: Path, annotate_cli: AnnotateCli
) -> None:
    out = workdir / "gold.json"
    args = ["anthropic", "--model", "c-1", "--attempts", "2"]
    llm_server.answer = half_fail
    code, err = annotate_cli(*args)
    assert code == 3, err
    assert "2 of 3 documents failed" in err and "a re-run asks only for those" in err
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:1"]  # never written as empty
    report = json.loads(out.with_name("gold.json.report.json").read_text())
    assert [(f["doc_id"], f["reason"]) for f in report["failed_documents"]] == [
        ("pmid:2", "failed"),
        ("pmid:3", "failed"),
    ]
    assert "HTTP 500" in report["failed_documents"][0]["detail"]

    llm_server.reset()
    llm_server.answer = ANSWERS
    assert annotate_cli(*args)[0] == 0
    assert sorted(r.user.split("Abstract:")[-1].strip()[:4] for r in llm_server.requests) == [
        "A re",
        "IL-6",
    ]  # only pmid:2 and pmid:3 were asked again
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:1", "pmid:2", "pmid:3"]


def test_a_partial_run_never_replaces_a_fuller_output_unless_forced(
    llm_server: FakeLLMServer,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    annotate_cli: AnnotateCli,
) -> None:
    out = workdir / "gold.json"
    args = ["openai", "--attempts", "1"]
    llm_server.answer = ANSWERS
    assert annotate_cli(*args)[0] == 0
    good = out.read_bytes(), out.with_name("gold.json.report.json").read_bytes()
    llm_server.answer = half_fail
    monkeypatch.setenv("GOLDLOOP_CACHE", str(workdir / "cold.sqlite"))  # nothing cached: asks again
    code, err = annotate_cli(*args)
    assert code == 3 and f"kept {out}, which answers 3 (this run: 1)" in err and "--force" in err
    assert (out.read_bytes(), out.with_name("gold.json.report.json").read_bytes()) == good
    assert annotate_cli(*args, "--force")[0] == 3
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:1"]


def test_every_request_failing_writes_nothing_and_exits_4(
    llm_server: FakeLLMServer, workdir: Path, annotate_cli: AnnotateCli
) -> None:
    out = workdir / "gold.json"
    out.write_text("[]")  # an existing output stays as it was
    llm_server.fail(500, times=100)
    code, err = annotate_cli("gemini", "--attempts", "1")
    assert code == 4 and "every request failed, nothing written" in err and "gemini" in err
    assert out.read_text() == "[]" and not out.with_name("gold.json.report.json").exists()


def test_a_provider_that_never_answers_is_given_up_on_with_one_line(
    workdir: Path, cli: Cli
) -> None:
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    with FakeLLMServer(latency_s=5) as silent:  # accepts the connection, answers too late
        result = cli(
            "annotate", "--documents", docs, "--out", workdir / "g.json", "--provider", "openai",
            "--base-url", silent.base_url("openai"), "--timeout", "0.2",
            env={"OPENAI_API_KEY": "k"},
        )  # fmt: skip
    code, err = result.returncode, result.err
    assert code == 4
    assert len(result.stderr.strip().splitlines()) == 1
    assert f"openai gpt-5-mini at {silent.base_url('openai')}: no answer within 0.2 s" in err
    assert not (workdir / "g.json").exists()


def test_ctrl_c_stops_cleanly_and_a_rerun_resumes_from_the_cache(
    llm_server: FakeLLMServer, workdir: Path, invoke: Invoke
) -> None:
    import signal
    import time

    from goldloop.llm import SQLiteCache

    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    llm_server.answer = ANSWERS
    llm_server.latency_s = 1.0
    command = [
        str(Path(sys.executable).with_name("goldloop")), "annotate", "--documents", str(docs),
        "--out", str(out), "--provider", "openai", "--base-url", llm_server.base_url("openai"),
        "--concurrency", "1",
    ]  # fmt: skip
    env = {**os.environ, "COLUMNS": "400"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=workdir)
    deadline = time.monotonic() + 60
    while llm_server.request_count < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the first answer is in, the second request is out
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted: nothing written" in err and "a re-run resumes from them" in err
    assert not out.exists()
    cached = len(SQLiteCache(workdir / "cache.sqlite"))
    assert 1 <= cached < 3
    llm_server.reset()
    llm_server.latency_s = 0
    invoke(*command[1:])
    assert llm_server.request_count == 3 - cached
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:1", "pmid:2", "pmid:3"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--out", "{docs}"], "--out {docs} and --documents {docs} are the same file"),
        (["--out", "{dir}"], "--out {dir}"),
        (["--out", "o.json", "--roles", "primary,bogus"], "--roles 'primary,bogus': unknown role"),
        (["--out", "o.json", "--base-url", "http://127.0.0.1:9/v1"], "--model: a base URL"),
        (["--out", "o.json", "--base-url", "localhost:8000"], "--base-url: the base URL must"),
    ],
)
def test_bad_options_are_refused_before_any_work(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli, options: list[str], message: str
) -> None:
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    before = docs.read_bytes()
    names = {"docs": str(docs), "dir": str(workdir)}
    filled = [o.format(**names) if "{" in o else o for o in options]
    monkeypatch.chdir(workdir)
    result = cli("annotate", "--documents", docs, *filled)
    assert result.returncode == 2 and message.format(**names) in result.err, result.err
    assert docs.read_bytes() == before and not (workdir / "o.json").exists()


def test_a_request_the_batch_fails_twice_exits_3_with_the_rest_written(
    llm_server: FakeLLMServer, workdir: Path, cli: Cli
) -> None:
    llm_server.answer = ANSWERS
    llm_server.batch_outcome = lambda r: "errored" if TEXTS["pmid:2"] in r.user else None
    docs = make_documents_jsonl(workdir / "docs.jsonl")
    out = workdir / "gold.json"
    result = cli(
        "annotate", "--documents", docs, "--out", out, "--provider", "gemini",
        "--base-url", llm_server.base_url("gemini"), "--batch", "--poll-interval", "0.01",
    )  # fmt: skip
    assert result.returncode == 3, result.err
    assert "1 of 3 documents failed" in result.err and "pmid:2" in result.err
    assert [d.doc_id for d in read_gold(out).documents] == ["pmid:1", "pmid:3"]
    assert [len(job["requests"]) for job in llm_server.batches.values()] == [3, 1]
    report = json.loads(out.with_name("gold.json.report.json").read_text())
    assert [f["doc_id"] for f in report["failed_documents"]] == ["pmid:2"]
