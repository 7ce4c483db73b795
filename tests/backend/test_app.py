"""The backend app: health, setup, the webhook, basic auth, the loopback guard, a 500."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from goldloop.backend.app import create_app
from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.predictor import Predictor
from goldloop.kb import KB
from goldloop.text.lexical import LexicalAnnotator
from tests.backend.conftest import (
    LEXICAL,
    LOOPBACK,
    MENTION_TEXT,
    basic_auth_header,
    predict,
    tasks_of,
)
from tests.conftest import environment_parsing


def test_health_answers_up_with_the_review_tag(client: TestClient, kb: KB) -> None:
    reply = client.get("/health")
    assert reply.status_code == 200
    assert reply.json()["status"] == "UP"
    assert reply.json()["model_version"] == f"review:lexical@{kb.tag}"
    assert list(reply.json()) == ["status", "model_class", "model_version"]
    assert client.get("/").json() == reply.json() == {
        "status": "UP", "model_class": "goldloop", "model_version": f"review:lexical@{kb.tag}"
    }  # fmt: skip


def test_setup_replies_with_the_review_tag(client: TestClient, kb: KB, label_config: str) -> None:
    body = {"project": "3.1700", "schema": label_config, "hostname": "http://127.0.0.1:8080",
            "access_token": "not-a-real-token", "extra_params": {}}  # fmt: skip
    reply = client.post("/setup", json=body)
    assert reply.status_code == 200
    assert reply.json() == {"model_version": f"review:lexical@{kb.tag}"}


def test_webhook_is_acknowledged_and_ignored_without_a_live_gold(client: TestClient) -> None:
    reply = client.post("/webhook", json={"action": "ANNOTATION_CREATED", "annotation": {"id": 1}})
    assert reply.status_code == 200
    assert reply.json() == {
        "status": "ok", "action": "ANNOTATION_CREATED", "live_gold": "ignored: no live gold is set"
    }  # fmt: skip


def test_basic_auth_when_configured(lexical_predictor: Predictor, label_config: str) -> None:
    settings = BackendSettings(annotator=AnnotatorSpec("lexical"), basic_auth=("ls", "s3cret"))
    with TestClient(create_app(settings, lexical_predictor), client=LOOPBACK) as client:
        assert client.get("/health").status_code == 200  # open, for health checks
        assert predict(client, tasks_of([MENTION_TEXT]), label_config).status_code == 401
        wrong = predict(
            client, tasks_of([MENTION_TEXT]), label_config, headers=basic_auth_header("ls", "nope")
        )
        assert wrong.status_code == 401
        right = predict(
            client,
            tasks_of([MENTION_TEXT]),
            label_config,
            headers=basic_auth_header("ls", "s3cret"),
        )
        assert right.status_code == 200 and right.json()["results"][0]["result"]
        assert client.post("/setup", json={}).status_code == 401
        assert (
            client.post("/setup", json={}, headers=basic_auth_header("ls", "s3cret")).status_code
            == 200
        )


def test_no_basic_auth_when_not_configured(client: TestClient, label_config: str) -> None:
    assert predict(client, tasks_of([MENTION_TEXT]), label_config).status_code == 200
    assert client.post("/setup", json={}).status_code == 200


# --- exposure ---


def test_without_basic_auth_only_loopback_peers_are_served(
    lexical_predictor: Predictor, label_config: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOLDLOOP_INSECURE", raising=False)
    remote = ("192.0.2.7", 40000)  # TEST-NET-1: never routed, only a peer address here
    with TestClient(create_app(LEXICAL, lexical_predictor), client=remote) as client:
        reply = predict(client, tasks_of([MENTION_TEXT]), label_config)
        assert reply.status_code == 403
        assert "BASIC_AUTH_USER and BASIC_AUTH_PASS" in reply.json()["message"]
    secured = BackendSettings(annotator=AnnotatorSpec("lexical"), basic_auth=("ls", "s3cret"))
    with TestClient(create_app(secured, lexical_predictor), client=remote) as client:
        reply = predict(
            client,
            tasks_of([MENTION_TEXT]),
            label_config,
            headers=basic_auth_header("ls", "s3cret"),
        )
        assert reply.status_code == 200
    insecure = BackendSettings.from_env({"GOLDLOOP_INSECURE": "1"})  # as the door read it
    assert insecure.annotator == LEXICAL.annotator and insecure.basic_auth is None
    with TestClient(create_app(insecure, lexical_predictor), client=remote) as client:
        assert predict(client, tasks_of([MENTION_TEXT]), label_config).status_code == 200


def test_an_unexpected_failure_is_a_json_500_with_the_details_logged(
    kb: KB, label_config: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Predictor):
        def predict_batch(self, tasks: Any, label_config: str | None, **options: Any) -> Any:
            raise RuntimeError("boom")

    broken = Broken(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    with (
        TestClient(
            create_app(LEXICAL, broken), client=LOOPBACK, raise_server_exceptions=False
        ) as client,
        caplog.at_level(logging.ERROR, logger="goldloop.backend"),
    ):
        reply = predict(client, tasks_of([MENTION_TEXT]), label_config)
    assert reply.status_code == 500
    assert reply.json() == {
        "status": "error",
        "message": "internal error (RuntimeError); the backend's log has the details",
    }
    assert "POST /predict failed" in caplog.text
