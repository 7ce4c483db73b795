"""What push sends: task payloads (every result checked against the labeling config before
anything is sent), the instructions and the labeling config with its required fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.label_config import (
    LabelConfigError,
    label_interface,
    render_instructions,
    render_label_config,
)
from goldloop.studio.push import Candidates, build_tasks, route, task_count
from tests.studio.loop_data import DOCS, TAG_A, write_inputs

pytest.importorskip("label_studio_sdk", reason="the studio extra is not installed")


@pytest.fixture(scope="module")
def inputs(kb: KB, tmp_path_factory: pytest.TempPathFactory):
    _, gold_a, gold_b = write_inputs(tmp_path_factory.mktemp("payload"))
    return kb, Candidates.from_gold(gold_a, kb), Candidates.from_gold(gold_b, kb)


def test_payload_carries_task_fields_and_three_predictions(inputs) -> None:
    kb, a, b = inputs
    documents = [Document(**d) for d in DOCS]
    tasks = build_tasks(documents, kb, render_label_config(kb), a, b)
    assert [t["data"]["doc_id"] for t in tasks] == [d["doc_id"] for d in DOCS]
    assert tasks[0]["data"] == {
        **{k: DOCS[0][k] for k in ("text", "doc_id", "role", "batch", "p_incl")},
        "stratum": DOCS[0].get("stratum"),
    }
    assert [p["model_version"] for p in tasks[0]["predictions"]] == [
        TAG_A,
        b.tag,
        f"review:{TAG_A}+{b.tag}",
    ]


def test_a_result_the_config_does_not_know_is_refused(inputs) -> None:
    kb, a, b = inputs
    config = re.sub(r'\s*<Choice [^>]*alias="inhibits"[^>]*/>', "", render_label_config(kb))
    documents = [Document(**d) for d in DOCS]
    with pytest.raises(
        LabelConfigError,
        match=r"document 'pmid:2': prediction 'gpt-test@low' does not fit the labeling config",
    ):
        build_tasks(documents, kb, config, a, b)


def test_a_second_annotator_needs_a_first(inputs, tmp_path: Path) -> None:
    from goldloop.studio.push import push

    kb, _, b = inputs
    with pytest.raises(GoldloopError, match="needs a first"):
        push(None, [], "p", kb, b=b)  # refused before any server is asked


def test_instructions_say_what_each_action_means_and_show_a_worked_example(kb: KB) -> None:
    html = render_instructions()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
    for says in (
        "Accept when relation, direction and words are right: leave it as it is.",
        "Delete it when the words state no relation: click it, then press Backspace or the trash icon.",
        "Add a mention the model missed: press 1, select the words",
        '"inhibited" finds inhibits',
        "forward: as the name reads",
        "inverse: the other way round",
        '"TNF activates NF-kB, which is inhibited by IkB."',
        "relation inhibits, direction inverse",
    ):
        assert says in text
    # The example's relations and directions are ones the picker offers.
    interface = label_interface(render_label_config(kb))
    assert {"activates", "inhibits"} <= set(interface.get_control("relation").labels)
    assert {"forward", "inverse"} <= set(interface.get_control("direction").labels)


def test_a_region_without_relation_or_direction_still_fits_the_config(inputs) -> None:
    """``required`` binds the annotator at Submit, not a prediction: a candidate without a
    direction is sent as it is, and the annotator must pick one."""
    kb, a, _ = inputs
    documents = [Document(**d) for d in DOCS]
    no_direction = {
        doc_id: [h.model_copy(update={"direction": None}) for h in hits]
        for doc_id, hits in a.hits.items()
    }
    stripped = Candidates(a.tag, no_direction)
    tasks = build_tasks(documents, kb, render_label_config(kb), stripped, None)
    (review,) = tasks[0]["predictions"]
    assert {item["from_name"] for item in review["result"]} == {"mention", "relation"}


def test_a_blind_document_is_two_tasks_and_a_skipped_role_none() -> None:
    docs = [
        Document(doc_id=f"{role}:{i}", text="x", role=role)
        for role, n in (("primary", 3), ("double", 2), ("blind", 4), ("reserve", 1))
        for i in range(n)
    ]
    routed = route(docs, "c")
    assert {title: len(d) for title, d in routed.items()} == {"c": 8, "c-double": 2, "c-blind": 4}
    assert [d.doc_id for d in routed["c-blind"]] == [f"blind:{i}" for i in range(4)]
    # push's progress bar counts tasks: 3 + 2 + 4 × 2 + 1 of 10 documents.
    assert task_count(docs, "c") == 14
    assert task_count(docs, "c", ["primary", "blind"]) == 11
