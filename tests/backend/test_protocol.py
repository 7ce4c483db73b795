"""The request bodies as the backend reads them: bad JSON, a wrong shape, a malformed config
are each a 400 naming what is wrong."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.backend.conftest import MENTION_TEXT, predict, tasks_of


@pytest.mark.parametrize("path", ["/predict", "/setup", "/webhook"])
def test_bad_json_is_a_400_with_a_message(client: TestClient, path: str) -> None:
    reply = client.post(path, content=b'{"tasks": [', headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    assert "not valid JSON" in reply.json()["message"]


def test_a_body_of_the_wrong_shape_is_a_400_naming_the_field(client: TestClient) -> None:
    reply = client.post("/predict", json={"tasks": "all of them"})
    assert reply.status_code == 400
    assert "tasks" in reply.json()["message"]


@pytest.mark.parametrize("config", ["<View><Text", "not xml at all"])
def test_a_malformed_label_config_is_a_400_naming_it(client: TestClient, config: str) -> None:
    reply = predict(client, tasks_of([MENTION_TEXT]), config)
    assert reply.status_code == 400
    assert (
        "label_config: Value error, not a Label Studio labeling config" in reply.json()["message"]
    )
