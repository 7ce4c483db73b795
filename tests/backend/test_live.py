"""The live gold against a real Label Studio: annotations made through the SDK reach the backend
as webhooks, and the gold file it keeps equals what ``goldloop pull`` writes.

One campaign (primary, double and an empty curate project) is pushed; a snapshot of its pull is
taken before anyone annotates. Then people accept, fix, delete, skip, update an annotation and
delete one, annotate the double task twice and differently, and a curator decides it. A recording server registered beside the backend keeps every event
Label Studio sent, so the same events can be replayed: in reverse order, to a backend starting
from the snapshot, and split between two replicas sharing a Redis lock.
"""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from copy import deepcopy
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.live import Change, read_event
from goldloop.backend.predictor import Predictor
from goldloop.files.beside import verification_path
from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.tasks import campaign_titles
from goldloop.kb import KB
from goldloop.sample import read_documents
from goldloop.studio.connection import Connection, Studio, connect
from goldloop.studio.curate import curate
from goldloop.studio.label_config import render_label_config
from goldloop.studio.mirror import mirror_path
from goldloop.studio.pull import pull
from goldloop.studio.push import Candidates, push
from goldloop.studio.review import hit_regions, review_tag
from goldloop.studio.webhooks import ACTIONS, register_webhooks
from goldloop.text.lexical import LexicalAnnotator
from tests.backend.conftest import RunningBackend, running_backend, running_redis
from tests.conftest import environment_parsing
from tests.studio.loop_data import INDUCES, TAG_A, TAG_B, span, text_of, write_inputs

AUTH = ("live-user", "live-pass-not-a-secret")
REVIEW = review_tag(TAG_A, TAG_B)


class Recorder:
    """A webhook receiver on loopback that keeps every body it gets."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                recorder.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@dataclass
class Campaign:
    name: str
    dir: Path
    snapshot: Path  # the pull before any annotation (gold, sidecar, mirror)
    events: list[dict[str, Any]]
    live_gold: Path  # what the backend wrote while the annotations were made
    backend_webhooks: dict[str, int]  # per project, webhooks pointing at the backend


def settings_for(label_studio: Any, name: str, gold: Path, **extra: Any) -> BackendSettings:
    return BackendSettings(
        annotator=AnnotatorSpec("lexical"), gold={name: gold}, studio_url=label_studio.url,
        studio_api_key=label_studio.token, basic_auth=AUTH, **extra,
    )  # fmt: skip


def files(gold: Path) -> dict[str, Any]:
    """The gold file, its sidecar and the mirror, parsed (what must be identical)."""
    return {
        path.name.replace(gold.name, "GOLD"): json.loads(path.read_text(encoding="utf-8"))
        for path in (gold, verification_path(gold), mirror_path(gold))
    }


def copy_snapshot(snapshot: Path, gold: Path) -> None:
    for source, target in zip(
        (snapshot, verification_path(snapshot), mirror_path(snapshot)),
        (gold, verification_path(gold), mirror_path(gold)),
        strict=True,
    ):
        shutil.copyfile(source, target)


def full_pull(label_studio: Any, kb: KB, name: str, out: Path) -> dict[str, Any]:
    pull(connect(Connection(label_studio.url, label_studio.token)), name, kb, out)
    return files(out)


def post(backend: RunningBackend, body: dict[str, Any]) -> None:
    response = httpx.post(f"{backend.url}/webhook", json=body, auth=AUTH, timeout=10)
    assert response.status_code == 200, response.text
    assert response.json()["live_gold"] == "queued"


def _review(task: Any) -> list[dict[str, Any]]:
    return deepcopy(next(p for p in task.predictions if p.model_version == REVIEW).result)


def _without(result: list[dict[str, Any]], doc_id: str, surface: str) -> list[dict[str, Any]]:
    a, b = span(doc_id, surface)
    return [i for i in result if (i["value"]["start"], i["value"]["end"]) != (a, b)]


def _added(kb: KB, doc_id: str, surface: str, entity_id: str) -> list[dict[str, Any]]:
    a, b = span(doc_id, surface)
    hit = Hit(a=a, b=b, surface=surface, entity_id=entity_id, direction="forward")
    items = hit_regions(text_of(doc_id), hit, kb)
    for item in items:
        item["id"] = f"new{a}"
    return items


def annotate(studio: Studio, kb: KB, name: str) -> None:
    """People at work: every kind of change the gold must follow."""
    listed = {p.title: p.id for p in studio.sdk.projects.list(include="id,title")}
    tasks = {t.data["doc_id"]: t for t in studio.sdk.tasks.list(project=listed[name], fields="all")}
    double = {
        t.data["doc_id"]: t
        for t in studio.sdk.tasks.list(project=listed[f"{name}-double"], fields="all")
    }
    create = studio.sdk.annotations.create
    create(id=tasks["pmid:1"].id, result=_review(tasks["pmid:1"]), lead_time=4.0)
    create(id=tasks["pmid:2"].id, result=_without(_review(tasks["pmid:2"]), "pmid:2", "inhibits"))
    create(id=tasks["pmid:5"].id, result=[], was_cancelled=True)
    changed = create(id=tasks["pmid:6"].id, result=_review(tasks["pmid:6"]))
    studio.sdk.annotations.update(
        id=changed.id, result=_review(tasks["pmid:6"]) + _added(kb, "pmid:6", "induces", INDUCES)
    )
    gone = create(id=tasks["pmid:8"].id, result=_review(tasks["pmid:8"]))
    studio.sdk.annotations.delete(id=gone.id)
    create(id=double["pmid:7"].id, result=_review(double["pmid:7"]))
    second = studio.sdk.users.create(
        email=f"second-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:8]
    )
    create(id=double["pmid:7"].id, result=[], completed_by=second.id)
    # The two disagree: the document goes to NAME-curate, where a curator decides.
    assert curate(studio, name, kb).created == 1
    (curate_task,) = studio.sdk.tasks.list(project=listed[f"{name}-curate"], fields="all")
    create(id=curate_task.id, result=_review(double["pmid:7"]))


@pytest.fixture(scope="module")
def campaign(
    label_studio: Any, kb: KB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Campaign]:
    directory = tmp_path_factory.mktemp("live")
    documents, gold_a, gold_b = write_inputs(directory)
    name = f"live-{uuid.uuid4().hex[:6]}"
    studio = connect(Connection(label_studio.url, label_studio.token))
    push(
        studio, read_documents(documents), name, kb,
        a=Candidates.from_gold(gold_a, kb), b=Candidates.from_gold(gold_b, kb),
    )  # fmt: skip
    # NAME-curate exists (empty) before anyone annotates, so the snapshot's mirror knows it and
    # its first task arrives as a plain "task changed" event (a project unknown to the mirror
    # would make the backend catch up with everything, which the replica test must avoid).
    studio.sdk.projects.create(title=f"{name}-curate", label_config=render_label_config(kb))
    snapshot = directory / "snapshot.json"
    pull(studio, name, kb, snapshot)
    live_gold = directory / "live.json"
    settings = settings_for(label_studio, name, live_gold)
    predictor = Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    recorder = Recorder()
    with running_backend(settings, predictor) as backend:
        listed = {p.title: p.id for p in studio.sdk.projects.list(include="id,title")}
        # Connecting the backend makes Label Studio add <backend>/webhook, for every action and
        # without auth: the registration below must take it over, not add a second one.
        label_studio.studio.sdk.ml.create(
            project=listed[name], url=backend.url, title=predictor.model_version,
            auth_method="BASIC_AUTH", basic_auth_user=AUTH[0], basic_auth_pass=AUTH[1],
        )  # fmt: skip
        titles = list(campaign_titles(name).values())
        register_webhooks(studio, titles, backend.url, _auth_header())
        register_webhooks(studio, titles, recorder.url)
        annotate(studio, kb, name)
        assert backend.app.state.live.wait_idle(120)
        hooks = {
            title: sum(
                1
                for h in studio.sdk.webhooks.list(project=str(listed[title]))
                if h.url == f"{backend.url}/webhook"
            )
            for title in titles
            if title in listed
        }
    recorder.server.shutdown()
    yield Campaign(name, directory, snapshot, recorder.bodies, live_gold, hooks)


def _auth_header() -> dict[str, str]:
    from goldloop.studio.webhooks import basic_auth_header

    return basic_auth_header(*AUTH)


@pytest.mark.studio
def test_each_project_has_one_webhook_to_the_backend(campaign: Campaign) -> None:
    assert campaign.backend_webhooks == {
        campaign.name: 1,
        f"{campaign.name}-double": 1,
        f"{campaign.name}-curate": 1,
    }
    actions = {event["action"] for event in campaign.events}
    assert actions == set(ACTIONS) - {"ANNOTATIONS_CREATED"}


@pytest.mark.studio
def test_the_webhook_fed_gold_equals_a_full_pull(
    campaign: Campaign, label_studio: Any, kb: KB
) -> None:
    expected = full_pull(label_studio, kb, campaign.name, campaign.dir / "full.json")
    assert files(campaign.live_gold) == expected
    # the annotations did change the gold since the snapshot
    assert files(campaign.snapshot)["GOLD"] != expected["GOLD"]
    added = [h for d in expected["GOLD"] if d["doc_id"] == "pmid:6" for h in d["ground_truth"]]
    assert ("induces", "added") in {(h["surface"], h["verdict"]) for h in added}
    assert "pmid:8" not in {d["doc_id"] for d in expected["GOLD"]}
    curated = [h for d in expected["GOLD"] if d["doc_id"] == "pmid:7" for h in d["ground_truth"]]
    assert curated and {h["decided"] for h in curated} == {"curated"}


@pytest.mark.studio
def test_events_replayed_in_reverse_order_give_the_same_gold(
    campaign: Campaign, label_studio: Any, kb: KB
) -> None:
    gold = campaign.dir / "reverse.json"
    copy_snapshot(campaign.snapshot, gold)
    settings = settings_for(label_studio, campaign.name, gold)
    with running_backend(
        settings, Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    ) as backend:
        # the deletion comes first now: its annotation id is unknown to the snapshot
        for body in reversed(campaign.events):
            post(backend, body)
        assert backend.app.state.live.wait_idle(120)
    assert files(gold) == full_pull(label_studio, kb, campaign.name, campaign.dir / "full-r.json")


@pytest.mark.studio
def test_two_replicas_sharing_redis_lose_no_update(
    campaign: Campaign, label_studio: Any, kb: KB, tmp_path: Path
) -> None:
    gold = campaign.dir / "replicas.json"
    copy_snapshot(campaign.snapshot, gold)
    with running_redis(tmp_path) as redis_url:
        settings = settings_for(label_studio, campaign.name, gold, redis_url=redis_url)
        with (
            running_backend(
                settings, Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
            ) as one,
            running_backend(
                settings, Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
            ) as two,
        ):
            # Pairs of events at once, one to each replica: both re-read the mirror at the same
            # time, and without the lock the later write would drop the other's task. The
            # deletion is left out: its unknown id makes a replica catch up with every change,
            # which would repair a lost update (the creation events re-read the task as it is).
            events = [e for e in campaign.events if e["action"] != "ANNOTATIONS_DELETED"]
            for start in range(0, len(events), 2):
                senders = [
                    threading.Thread(target=post, args=(replica, body))
                    for replica, body in zip((one, two), events[start : start + 2], strict=False)
                ]
                for sender in senders:
                    sender.start()
                for sender in senders:
                    sender.join()
                assert one.app.state.live.wait_idle(120) and two.app.state.live.wait_idle(120)
    assert files(gold) == full_pull(label_studio, kb, campaign.name, campaign.dir / "full-2.json")


@pytest.mark.studio
def test_pull_since_reads_only_the_changes_and_equals_a_full_pull(
    campaign: Campaign, label_studio: Any, kb: KB
) -> None:
    gold = campaign.dir / "since.json"
    copy_snapshot(campaign.snapshot, gold)
    pull(
        connect(Connection(label_studio.url, label_studio.token)),
        campaign.name,
        kb,
        gold,
        since=True,
    )
    assert files(gold) == full_pull(label_studio, kb, campaign.name, campaign.dir / "full-s.json")


@pytest.mark.studio
def test_unrelated_or_malformed_events_are_acknowledged_and_ignored(
    campaign: Campaign, label_studio: Any, kb: KB
) -> None:
    gold = campaign.dir / "ignored.json"
    settings = settings_for(label_studio, campaign.name, gold)
    with running_backend(
        settings, Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    ) as backend:
        for body in (
            {"action": "PROJECT_UPDATED", "project": {"id": 1, "title": campaign.name}},
            {"action": "ANNOTATION_CREATED", "project": {"id": 1, "title": "someone-else"}},
            {"action": "ANNOTATION_CREATED", "project": {"id": 1, "title": campaign.name}},
            {"action": "ANNOTATION_CREATED"},
        ):
            response = httpx.post(f"{backend.url}/webhook", json=body, auth=AUTH, timeout=10)
            assert response.status_code == 200
            assert response.json()["live_gold"].startswith("ignored: ")
        unauthorised = httpx.post(f"{backend.url}/webhook", json={"action": "X"}, timeout=10)
        assert unauthorised.status_code == 401
    assert not gold.exists()


@pytest.mark.studio
def test_events_given_up_on_while_label_studio_is_down_are_caught_up_by_the_next(
    campaign: Campaign, label_studio: Any, kb: KB
) -> None:
    gold = campaign.dir / "down.json"
    copy_snapshot(campaign.snapshot, gold)
    created = [e for e in campaign.events if e["action"] == "ANNOTATION_CREATED"]
    settings = settings_for(label_studio, campaign.name, gold)
    with running_backend(
        settings, Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    ) as backend:
        live = backend.app.state.live
        live.retry_delays_s = (0.1,)
        label_studio.crash()
        try:
            for body in created[:-1]:
                post(backend, body)
            assert live.wait_idle(120)
        finally:
            label_studio.restart()
        # nothing could be read: the gold is the snapshot still, untouched
        assert files(gold) == files(campaign.snapshot)
        post(backend, created[-1])  # names one task; the others must come back too
        assert live.wait_idle(120)
    assert files(gold) == full_pull(label_studio, kb, campaign.name, campaign.dir / "full-d.json")


CAMPAIGNS = ["camp", "other"]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"action": "ANNOTATION_CREATED", "project": {"id": 3, "title": "camp-double"},
          "annotation": {"id": 9, "task": 41}, "task": {"id": 41}},
         Change("camp", "camp-double", 3, task_ids=frozenset({41}))),
        ({"action": "ANNOTATIONS_CREATED", "project": {"id": 4, "title": "camp-curate"},
          "annotation": [{"id": 1, "task": 5}, {"id": 2, "task": 6}], "task": [{"id": 5}, {"id": 6}]},
         Change("camp", "camp-curate", 4, task_ids=frozenset({5, 6}))),
        ({"action": "ANNOTATIONS_DELETED", "project": {"id": 2, "title": "other"},
          "annotations": [{"id": 7}, {"id": 8}]},
         Change("other", "other", 2, annotation_ids=frozenset({7, 8}))),
    ],
)  # fmt: skip
def test_an_event_names_the_tasks_or_annotations_that_changed(
    payload: dict[str, Any], expected: Change
) -> None:
    assert read_event(payload, CAMPAIGNS) == expected


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"action": "TASKS_CREATED", "project": {"id": 1, "title": "camp"}}, "not an annotation"),
        ({"action": "ANNOTATION_CREATED", "project": {"id": 1, "title": "campx"},
          "task": {"id": 1}}, "no gold file is set for project 'campx'"),
        ({"action": "ANNOTATION_CREATED", "task": {"id": 1}}, "names no project"),
        ({"action": "ANNOTATION_UPDATED", "project": {"id": 1, "title": "camp"},
          "task": {"id": "1"}}, "names no task"),
    ],
)  # fmt: skip
def test_an_event_the_live_gold_cannot_use_says_why(payload: dict[str, Any], reason: str) -> None:
    said = read_event(payload, CAMPAIGNS)
    assert isinstance(said, str) and reason in said
