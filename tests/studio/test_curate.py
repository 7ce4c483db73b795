"""``goldloop curate`` against a real Label Studio: disputed double tasks go to NAME-curate once,
pre-filled with the curation prediction, with each annotator's version beside it."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import SameAnnotatorError, curate_name
from goldloop.kb import KB
from goldloop.studio.curate import curate
from goldloop.studio.label_config import CURATE_INSTRUCTIONS, render_instructions
from goldloop.studio.project import find_project
from goldloop.studio.push import push
from goldloop.studio.review import hit_regions, review_tag
from tests.conftest import Cli
from tests.studio.campaign_data import ALICE, TAG, TEXTS, Campaign, hits, span

pytestmark = pytest.mark.studio
CURATE_TAG = f"curate:{review_tag(TAG)}"


def test_disputes_go_to_the_curate_project_once(
    campaign: Campaign, label_studio: Any, cli: Cli
) -> None:
    first = campaign.first_curate
    assert first is not None
    assert (first.double_tasks, first.fewer_than_two, first.agreed, first.disputed) == (6, 1, 1, 4)
    assert (first.created, first.already_present, first.model_version) == (4, 0, CURATE_TAG)
    assert sorted(campaign.curate_tasks) == ["pmid:12", "pmid:13", "pmid:14", "pmid:15"]
    done = cli("curate", "--project", campaign.name, env={"LABEL_STUDIO_URL": label_studio.url,
        "LABEL_STUDIO_API_KEY": label_studio.token, "COLUMNS": "200"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"curate tasks created\s*│\s*0\s*│", out)
    assert re.search(r"already in the curate project\s*│\s*4\s*│", out)
    project = find_project(label_studio.studio, curate_name(campaign.name))
    assert project is not None and project.model_version == CURATE_TAG
    listed = list(label_studio.studio.sdk.tasks.list(project=project.id))
    assert len(listed) == 4
    # Curators read their own instructions, not the annotators'.
    assert project.instructions == render_instructions(CURATE_INSTRUCTIONS)
    assert "Settle the disputed mentions" in project.instructions
    shown = label_studio.studio.sdk.projects.get(id=project.id)
    assert shown.show_instruction and shown.expert_instruction == project.instructions


def test_curation_prediction_marks_both_and_each_dispute(campaign: Campaign) -> None:
    alice, bob = campaign.email("alice"), campaign.email("bob")
    task = campaign.curate_tasks["pmid:13"]
    versions = {p.model_version: p.result for p in task.predictions}
    assert sorted(versions) == sorted(
        [review_tag(TAG), f"annotator:{alice}", f"annotator:{bob}", CURATE_TAG]
    )
    assert task.data["doc_id"] == "pmid:13" and task.data["text"] == TEXTS["pmid:13"]
    start, end = span("pmid:13", "activates")
    dispute = f"{alice}: activates · forward | {bob}: regulates · forward"
    mention = next(i for i in versions[CURATE_TAG] if i["from_name"] == "mention")
    assert (mention["value"]["start"], mention["value"]["end"]) == (start, end)
    assert mention["meta"]["text"] == dispute
    note = next(i for i in versions[CURATE_TAG] if i["from_name"] == "note")
    assert note["value"]["text"] == [dispute]
    relation = next(i for i in versions[f"annotator:{bob}"] if i["from_name"] == "relation")
    assert relation["value"]["taxonomy"] == [["regulates"]]

    spans = {p.model_version: p.result for p in campaign.curate_tasks["pmid:12"].predictions}
    notes = {
        i["value"]["text"]: i["meta"]["text"]
        for i in spans[CURATE_TAG] if i["from_name"] == "mention"
    }  # fmt: skip
    assert notes == {
        "inhibits": f"only {alice}: inhibits · forward",
        "inhibits STAT3": f"only {bob}: inhibits · forward",
        "regulates": "both",
    }
    one_sided = {p.model_version: p.result for p in campaign.curate_tasks["pmid:15"].predictions}
    assert [i["meta"]["text"] for i in one_sided[CURATE_TAG] if i["from_name"] == "mention"] == [
        "both", f"only {alice}: induces · forward",
    ]  # fmt: skip
    direction = {p.model_version: p.result for p in campaign.curate_tasks["pmid:14"].predictions}
    assert [i["meta"]["text"] for i in direction[CURATE_TAG] if i["from_name"] == "mention"] == [
        f"{alice}: stimulates · forward | {bob}: stimulates · inverse"
    ]


def test_curate_refuses_two_annotations_by_one_person(kb: KB, label_studio: Any) -> None:
    studio = label_studio.studio
    name = f"twice-{uuid.uuid4().hex[:6]}"
    push(
        studio,
        [Document(doc_id="pmid:11", text=TEXTS["pmid:11"], role="double")],
        name,
        kb,
    )
    project = find_project(studio, f"{name}-double")
    assert project is not None
    task = next(iter(studio.sdk.tasks.list(project=project.id)))
    result = [
        i for h in hits(ALICE["pmid:11"], "pmid:11") for i in hit_regions(TEXTS["pmid:11"], h, kb)
    ]
    studio.sdk.annotations.create(id=task.id, result=result)
    studio.sdk.annotations.create(id=task.id, result=result)
    with pytest.raises(
        SameAnnotatorError, match=rf"task {task.id} \(pmid:11\) holds two annotations by admin@"
    ):
        curate(studio, name, kb)
    assert find_project(studio, curate_name(name)) is None
