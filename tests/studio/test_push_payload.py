"""Task payloads: every result is checked against the labeling config before anything is sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.gold import Document
from goldloop.kb import load_kb
from goldloop.studio.label_config import LabelConfigError, render_label_config
from goldloop.studio.push import Candidates, build_tasks
from tests.studio.loop_data import DOCS, TAG_A, write_inputs

pytest.importorskip("label_studio_sdk", reason="the studio extra is not installed")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory):
    kb = load_kb()
    _, gold_a, gold_b = write_inputs(tmp_path_factory.mktemp("payload"))
    return kb, Candidates.from_gold(gold_a, kb), Candidates.from_gold(gold_b, kb)


def test_payload_carries_task_fields_and_three_predictions(inputs) -> None:
    kb, a, b = inputs
    documents = [Document(**d) for d in DOCS]
    tasks = build_tasks(documents, kb, render_label_config(kb), a, b)
    assert [t["data"]["doc_id"] for t in tasks] == [d["doc_id"] for d in DOCS]
    assert tasks[0]["data"] == {
        k: DOCS[0][k] for k in ("text", "doc_id", "role", "batch", "p_incl")
    }
    assert [p["model_version"] for p in tasks[0]["predictions"]] == [
        TAG_A,
        b.tag,
        f"review:{TAG_A}+{b.tag}",
    ]


def test_a_result_the_config_does_not_know_is_refused(inputs) -> None:
    kb, a, b = inputs
    config = re.sub(r'\s*<Choice value="inhibits"[^>]*/>', "", render_label_config(kb))
    documents = [Document(**d) for d in DOCS]
    with pytest.raises(
        LabelConfigError,
        match=r"document 'pmid:2': prediction 'gpt-test@low' does not fit the labeling config",
    ):
        build_tasks(documents, kb, config, a, b)


def test_a_second_annotator_needs_a_first(inputs, tmp_path: Path) -> None:
    from goldloop.studio.connection import Connection
    from goldloop.studio.push import push

    kb, _, b = inputs
    with pytest.raises(GoldloopError, match="needs a first"):
        push(Connection("http://127.0.0.1:9", "k"), None, [], "p", kb, b=b)
