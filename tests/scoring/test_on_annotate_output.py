"""agree, pool and precision on the files ``goldloop annotate`` writes: the offline lexical
pre-annotator as one annotator, an LLM (real SDK, fake provider) as the other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.formats.gold import read_gold
from tests.conftest import Cli
from tests.fakes.llm_server import FakeLLMServer, FakeRequest

DOCS = [
    {"doc_id": "pmid:1", "text": "IL-6 activates STAT3 in liver cells.", "role": "primary"},
    {"doc_id": "pmid:2", "text": "SOCS3 inhibits STAT3 signalling in mice.", "role": "primary"},
    {"doc_id": "pmid:3", "text": "Insulin increases glucose uptake in muscle.", "role": "double"},
]
ANSWERS = {
    "pmid:1": [
        {"surface": "activates", "occurrence": 1, "label": "activates", "direction": "forward"}
    ],
    "pmid:2": [
        {"surface": "inhibits", "occurrence": 1, "label": "regulates", "direction": "forward"}
    ],
    "pmid:3": [],
}


def annotation_answer(request: FakeRequest) -> str:
    doc = next(d for d in DOCS if d["text"] in request.user)
    return json.dumps({"mentions": ANSWERS[doc["doc_id"]]})


def judge_answer(request: FakeRequest) -> str:
    verdict = "supported" if "⟦activates⟧" in request.user else "not_found"
    return json.dumps({"verdict": verdict, "reason": "scripted"})


@pytest.fixture
def annotated(
    tmp_path: Path, cli: Cli, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, Path]:
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path / "home"))
    documents = tmp_path / "docs.jsonl"
    documents.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    lexical, llm = tmp_path / "gold.lexical.json", tmp_path / "gold.llm.json"
    done = cli("annotate", "--documents", documents, "--provider", "lexical", "-o", lexical)
    assert done.returncode == 0, done.stderr
    llm_server.answer = annotation_answer
    done = cli(
        "annotate", "--documents", documents, "--provider", "openai", "--model", "m",
        "--base-url", llm_server.base_url("openai"), "-o", llm,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return documents, lexical, llm


def test_agree_pool_and_precision_on_annotate_files(
    annotated: tuple[Path, Path, Path], tmp_path: Path, cli: Cli, llm_server: FakeLLMServer
) -> None:
    documents, lexical, llm = annotated
    lexical_hits = {d.doc_id: d.ground_truth for d in read_gold(lexical).documents}
    assert [h.surface for h in lexical_hits["pmid:1"]] == ["activates"]

    agreed = cli("agree", "--gold", lexical, "--other", llm, "-o", tmp_path / "k.json")
    assert agreed.returncode == 0, agreed.stderr
    report = json.loads((tmp_path / "k.json").read_text())
    # lexical: activates, inhibits, increases; LLM: activates, "inhibits" named regulates.
    assert (report["n_docs_shared"], report["n_span_matched"], report["n_only_a"]) == (3, 2, 1)
    assert report["kappa_entity_id"] == pytest.approx(0.25)  # (1/3 - 1/9) / (1 - 1/9)
    assert report["confusion"]["PEL.000018"] == {"RO.0002211": 1}

    pooled = cli(
        "pool", f"lexical={lexical}", f"llm={llm}", "--documents", documents,
        "-o", tmp_path / "pool.json",
    )  # fmt: skip
    assert pooled.returncode == 0, pooled.stderr
    pool = {r["name"]: r for r in json.loads((tmp_path / "pool.json").read_text())["runs"]}
    # "inhibits" and "regulates" on one span are two relations, so two pool items (of 4).
    assert [(r["n_found"], r["found_alone"]) for r in pool.values()] == [(3, 2), (2, 1)]
    assert [r["relative_recall"]["value"] for r in pool.values()] == [0.75, 0.5]

    llm_server.answer = judge_answer
    verdicts = tmp_path / "verdicts.jsonl"
    judged = cli(
        "precision", "judge", "--system", llm, "--documents", documents, "--provider", "openai",
        "--model", "judge", "--base-url", llm_server.base_url("openai"), "-o", verdicts,
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    rows = [json.loads(line) for line in verdicts.read_text().splitlines()]
    assert sorted((r["surface"], r["verdict"]) for r in rows) == [
        ("activates", "supported"),
        ("inhibits", "not_found"),
    ]
