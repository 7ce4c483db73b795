"""``goldloop agree --studio-project NAME`` against a real Label Studio: two people annotate the
tasks of ``NAME-double``; κ read from Label Studio equals κ of the same hits given as files; in
the session's curation campaign, each person against the pre-annotation shown and the curator
against each person equal the same figures computed from the versions the test wrote."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.scoring.agreement import agreement, corpus_agreement
from goldloop.scoring.design import part_design
from goldloop.studio.push import Candidates, push
from goldloop.studio.review import hit_regions
from tests.conftest import Cli
from tests.studio import campaign_data
from tests.studio.campaign_data import ALICE, BOB, CANDIDATES, CAROL, Campaign
from tests.studio.conftest import ACTIVATES, BINDS, FIRST, INHIBITS, SECOND, TEXTS, hits

pytestmark = pytest.mark.studio


def documents(rows: list[tuple[str, str, str, str]]) -> list[Document]:
    return [
        Document(doc_id=d, text=TEXTS[d], ground_truth=hits(rows, d)) for d in ("pmid:1", "pmid:2")
    ]


def test_agree_from_the_double_project(
    kb: KB, label_studio: Any, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    studio = label_studio.studio
    name = f"agree-{uuid.uuid4().hex[:6]}"
    p_incl = {"pmid:1": 0.5, "pmid:2": 0.25, "pmid:3": 1.0}
    docs = [
        Document(doc_id=d, text=t, role="double", p_incl=p_incl[d], batch=0)
        for d, t in TEXTS.items()
    ]
    push(studio, docs, name, kb)
    project = next(
        p for p in studio.sdk.projects.list(include="id,title") if p.title == f"{name}-double"
    )
    tasks = {
        t.data["doc_id"]: t.id for t in studio.sdk.tasks.list(project=project.id, fields="all")
    }
    second, third = (
        studio.sdk.users.create(
            email=f"{who}-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:8]
        )
        for who in ("b", "c")
    )

    def annotate(doc_id: str, rows: list[tuple[str, str, str, str]], **who: Any) -> None:
        result = [
            item for hit in hits(rows, doc_id) for item in hit_regions(TEXTS[doc_id], hit, kb)
        ]
        studio.sdk.annotations.create(id=tasks[doc_id], result=result, **who)

    for doc_id in ("pmid:1", "pmid:2"):
        annotate(doc_id, FIRST)
        annotate(doc_id, SECOND, completed_by=second.id)
    annotate("pmid:2", FIRST, completed_by=third.id)  # a third annotation: not used, counted
    annotate("pmid:3", [])  # one annotation only: not compared, counted

    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    result = cli(
        "agree", "--studio-project", name, "--url", label_studio.url, "-o", tmp_path / "k.json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "k.json").read_text())
    assert report.pop("label_studio") == {
        "project": f"{name}-double",
        "tasks": 3,
        "compared_tasks": 2,
        "tasks_with_fewer_than_two_annotations": 1,
        "annotations_beyond_the_second": 1,
    }
    # Pushed without candidates and never curated: no pre-annotation or curator to compare.
    roles = ("person_pre_annotation", "curator_person", "curators", "person_pre_annotator")
    assert [report.pop(k) for k in roles] == [{}, {}, [], {}]
    # The corpus κ from the tasks' p_incl is the files' with that design: the two compared
    # documents are two of the batch's three drawn ones (pmid:3 too), so weigh 1/p × 3/2.
    corpus = report.pop("corpus")
    expected_report = agreement(documents(FIRST), documents(SECOND), kb)
    compared = ["pmid:1", "pmid:2"]
    design = part_design(docs, compared)
    assert design is not None and design.weights.tolist() == [3.0, 6.0]
    shared = list(zip(documents(FIRST), documents(SECOND), strict=True))
    assert [a.doc_id for a, _ in shared] == compared
    assert (
        corpus
        == corpus_agreement(expected_report, compared, kb, design, 0, 0, shared=shared).to_dict()
    )
    assert report == expected_report.to_dict()
    assert (report["n_span_matched"], report["n_only_a"], report["n_only_b"]) == (3, 1, 0)
    assert "2 of 3 task(s) compared" in result.out


def test_agree_weighs_the_double_documents_as_a_part_of_each_batch_of_the_campaign(
    kb: KB, label_studio: Any, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch 0 draws pmid:1 (double) and three primary documents, batch 1 draws pmid:2 (double)
    alone: the double documents' own batch shares (1/2, 1/2) are not the draw's (4/5, 1/5)."""
    studio = label_studio.studio
    name = f"agree2-{uuid.uuid4().hex[:6]}"
    primary = "Insulin stimulates glucose uptake."
    docs = [
        Document(doc_id="pmid:1", text=TEXTS["pmid:1"], role="double", p_incl=0.5, batch=0),
        *(
            Document(doc_id=f"p:{i}", text=primary, role="primary", p_incl=0.5, batch=0)
            for i in range(3)
        ),
        Document(doc_id="pmid:2", text=TEXTS["pmid:2"], role="double", p_incl=0.25, batch=1),
    ]
    push(studio, docs, name, kb)
    project = next(
        p for p in studio.sdk.projects.list(include="id,title") if p.title == f"{name}-double"
    )
    tasks = {
        t.data["doc_id"]: t.id for t in studio.sdk.tasks.list(project=project.id, fields="all")
    }
    other = studio.sdk.users.create(
        email=f"b-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:8]
    )
    for doc_id in ("pmid:1", "pmid:2"):
        for rows, who in ((FIRST, {}), (SECOND, {"completed_by": other.id})):
            result = [
                item for hit in hits(rows, doc_id) for item in hit_regions(TEXTS[doc_id], hit, kb)
            ]
            studio.sdk.annotations.create(id=tasks[doc_id], result=result, **who)

    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    out = tmp_path / "k.json"
    result = cli("agree", "--studio-project", name, "--url", label_studio.url, "-o", out)
    assert result.returncode == 0, result.stderr
    corpus = json.loads(out.read_text())["corpus"]
    # By hand. The draw's batch shares: α_0 = 4/5, α_1 = 1/5. pmid:1 weighs .8/.5 + .2 = 1.8 in
    # the draw, times 4/1 (the batch's four drawn documents over its one double): 7.2; pmid:2
    # weighs .2/.25 = .8, times 1/1. Lenient pairs: pmid:1 A 2, B 2, paired 2; pmid:2 A 2, B 1,
    # paired 1 ("inhibited by" within "is inhibited by"). Labelled (same relation and
    # direction): only "activates" in pmid:1.
    w1, w2 = 7.2, 0.8
    assert corpus["population_docs"] == pytest.approx(w1 + w2)
    assert corpus["n_docs"] == 2
    assert corpus["span_f1_lenient"] == pytest.approx(2 * (2 * w1 + w2) / (4 * w1 + 3 * w2))
    assert corpus["span_f1_labelled_lenient"] == pytest.approx(2 * w1 / (4 * w1 + 3 * w2))
    # The double documents' own shares (1/2 each) would give 1.5 and 2: another figure.
    wrong = 2 * (2 * 1.5 + 2) / (4 * 1.5 + 3 * 2)
    assert abs(corpus["span_f1_lenient"] - wrong) > 0.1


def test_agree_compares_the_blind_documents_with_and_without_candidates(
    kb: KB, label_studio: Any, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pmid:1 is a double task; pmid:2 and pmid:3 are blind (each in NAME with the candidates and
    in NAME-blind without). pmid:2 is annotated both ways by two people, pmid:3 only with the
    candidates: one pair, compared as two annotators are."""
    studio = label_studio.studio
    name = f"agbl-{uuid.uuid4().hex[:6]}"
    roles = {"pmid:1": "double", "pmid:2": "blind", "pmid:3": "blind"}
    docs = [Document(doc_id=d, text=t, role=roles[d], batch=0) for d, t in TEXTS.items()]
    shown = {d: hits(FIRST, d) for d in ("pmid:2", "pmid:3")}
    push(studio, docs, name, kb, a=Candidates("gpt-test@low", shown))
    b, c = (
        studio.sdk.users.create(
            email=f"{who}-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:8]
        )
        for who in ("b", "c")
    )
    tasks: dict[tuple[str, str], int] = {}
    for title in (name, f"{name}-double", f"{name}-blind"):
        project = next(p for p in studio.sdk.projects.list(include="id,title") if p.title == title)
        tasks |= {
            (title, t.data["doc_id"]): t.id for t in studio.sdk.tasks.list(project=project.id)
        }

    def annotate(title: str, doc_id: str, rows: list[tuple[str, str, str, str]], who: Any) -> None:
        result = [
            item for hit in hits(rows, doc_id) for item in hit_regions(TEXTS[doc_id], hit, kb)
        ]
        studio.sdk.annotations.create(id=tasks[(title, doc_id)], result=result, completed_by=who.id)

    annotate(f"{name}-double", "pmid:1", FIRST, b)
    annotate(f"{name}-double", "pmid:1", SECOND, c)
    annotate(name, "pmid:2", FIRST, b)  # with the candidates: b keeps them
    annotate(f"{name}-blind", "pmid:2", SECOND, c)  # without: c marks what c finds
    annotate(name, "pmid:3", FIRST, b)  # only one way: not paired
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    out = tmp_path / "k.json"
    result = cli("agree", "--studio-project", name, "--url", label_studio.url, "-o", out)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    with_them = [
        Document(doc_id="pmid:2", text=TEXTS["pmid:2"], ground_truth=hits(FIRST, "pmid:2"))
    ]
    without = [Document(doc_id="pmid:2", text=TEXTS["pmid:2"], ground_truth=hits(SECOND, "pmid:2"))]
    expected = agreement(with_them, without, kb).to_dict()
    assert report["blind_vs_pre_annotated"] == {
        "project": f"{name}-blind", "blind_documents": 2, "paired_documents": 1,
        "agreement": expected,
    }  # fmt: skip
    assert expected["n_span_matched"] == 1 and expected["n_only_a"] == 1
    # The double task's figures are what they were: the blind pair is one more comparison.
    double = agreement(documents(FIRST)[:1], documents(SECOND)[:1], kb).to_dict()
    assert {key: report[key] for key in double} == double
    assert "blind documents: with candidates" in result.out


def test_agree_needs_the_double_project(
    label_studio: Any, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    result = cli("agree", "--studio-project", "nothing-here", "--url", label_studio.url)
    assert result.returncode == 2
    assert "nothing-here-double" in result.err


def test_agree_refuses_two_annotations_by_one_person(
    kb: KB, label_studio: Any, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    studio = label_studio.studio
    name = f"twice-{uuid.uuid4().hex[:6]}"
    push(studio, [Document(doc_id="pmid:1", text=TEXTS["pmid:1"],
         role="double")], name, kb)  # fmt: skip
    project = next(
        p for p in studio.sdk.projects.list(include="id,title") if p.title == f"{name}-double"
    )
    task = next(iter(studio.sdk.tasks.list(project=project.id, fields="all")))
    result = [
        item for hit in hits(FIRST, "pmid:1") for item in hit_regions(TEXTS["pmid:1"], hit, kb)
    ]
    first = studio.sdk.annotations.create(id=task.id, result=result)
    second = studio.sdk.annotations.create(id=task.id, result=result)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    refused = cli("agree", "--studio-project", name, "--url", label_studio.url)
    assert refused.returncode == 2
    assert f"task {task.id} (pmid:1) holds two annotations by" in refused.err
    assert f"ids {first.id} and {second.id}" in refused.err


def test_agree_reports_people_pre_annotation_and_curator(
    kb: KB,
    campaign: Campaign,
    label_studio: Any,
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    result = cli(
        "agree", "--studio-project", campaign.name, "--url", label_studio.url,
        "-o", tmp_path / "k.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "k.json").read_text())
    alice, bob = campaign.email("alice"), campaign.email("bob")

    def docs(version: dict[str, list[tuple[str, str, str]]]) -> list[Document]:
        return campaign_data.documents(version)

    def only(version: dict[str, Any], doc_ids: Any) -> dict[str, Any]:
        return {d: rows for d, rows in version.items() if d in doc_ids}

    # Two people: the double tasks both annotated.
    expected = agreement(docs(only(ALICE, BOB)), docs(BOB), kb).to_dict()
    assert {key: report[key] for key in expected} == expected
    # Each person against the pre-annotator's candidates pushed on the tasks they annotated.
    shown = {d: [(s, e, di) for doc, s, e, di in CANDIDATES if doc == d] for d in ALICE}
    assert report["person_pre_annotation"] == {
        alice: agreement(docs(shown), docs(ALICE), kb).to_dict(),
        bob: agreement(docs(only(shown, BOB)), docs(BOB), kb).to_dict(),
    }
    assert report["person_pre_annotator"] == {}  # one pre-annotator: its version is the review
    # The curator (carol settled three disputes) against each annotator on those tasks.
    assert report["curators"] == [campaign.email("carol")]
    assert report["curator_person"] == {
        alice: agreement(docs(CAROL), docs(only(ALICE, CAROL)), kb).to_dict(),
        bob: agreement(docs(CAROL), docs(only(BOB, CAROL)), kb).to_dict(),
    }
    # Bob moved away from the candidates on pmid:12-14; alice kept them all and added one.
    moved = report["person_pre_annotation"]
    assert moved[alice]["span_f1"]["strict"]["recall"] == 1.0
    assert moved[bob]["span_f1_labelled"]["strict"]["f1"] < 1.0
    assert "pre-annotation shown" in result.out and "curator" in result.out


def test_agree_compares_each_person_with_each_pre_annotator(
    kb: KB, label_studio: Any, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    studio = label_studio.studio
    name = f"two-llms-{uuid.uuid4().hex[:6]}"
    shared = ("pmid:1", "pmid:2")
    llm_a = [
        ("pmid:1", "activates", ACTIVATES, "forward"),
        ("pmid:1", "inhibits", INHIBITS, "forward"),
    ]
    llm_b = [
        ("pmid:1", "activates", ACTIVATES, "forward"),
        ("pmid:2", "binds to", BINDS, "symmetric"),
    ]
    push(
        studio,
        [Document(doc_id=d, text=TEXTS[d], role="double") for d in shared], name, kb,
        a=Candidates("llm-a", {d: hits(llm_a, d) for d in shared}),
        b=Candidates("llm-b", {d: hits(llm_b, d) for d in shared}),
    )  # fmt: skip
    project = next(
        p for p in studio.sdk.projects.list(include="id,title") if p.title == f"{name}-double"
    )
    tasks = {
        t.data["doc_id"]: t.id for t in studio.sdk.tasks.list(project=project.id, fields="all")
    }
    second = studio.sdk.users.create(
        email=f"b-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:8]
    )
    for doc_id in shared:
        for rows, who in ((FIRST, {}), (SECOND, {"completed_by": second.id})):
            result = [
                item for h in hits(rows, doc_id) for item in hit_regions(TEXTS[doc_id], h, kb)
            ]
            studio.sdk.annotations.create(id=tasks[doc_id], result=result, **who)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    done = cli(
        "agree", "--studio-project", name, "--url", label_studio.url, "-o", tmp_path / "k.json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "k.json").read_text())
    admin = studio.sdk.users.whoami().email
    # The review prediction shown: one region per span either proposed, A's relation first.
    review = llm_a + [row for row in llm_b if row[1] != "activates"]
    for person, rows in ((admin, FIRST), (second.email, SECOND)):
        assert (
            report["person_pre_annotation"][person]
            == agreement(documents(review), documents(rows), kb).to_dict()
        )
        assert report["person_pre_annotator"][person] == {
            "llm-a": agreement(documents(llm_a), documents(rows), kb).to_dict(),
            "llm-b": agreement(documents(llm_b), documents(rows), kb).to_dict(),
        }
