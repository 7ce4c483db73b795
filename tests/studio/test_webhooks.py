"""``goldloop studio webhook``: one webhook per campaign project, with the backend's basic auth."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.kb import KB
from goldloop.studio.label_config import render_label_config
from goldloop.studio.mirror import mirror_path
from goldloop.studio.webhooks import ACTIONS
from tests.conftest import Cli

pytestmark = pytest.mark.studio

BACKEND = "http://127.0.0.1:9"  # never called here: registering does not contact the backend


def hooks_to_backend(client: Any, project_id: int) -> list[Any]:
    return [
        h for h in client.webhooks.list(project=str(project_id)) if h.url == f"{BACKEND}/webhook"
    ]


def test_the_command_takes_over_the_backends_webhook_and_pulls_the_gold(
    cli: Cli, label_studio: Any, kb: KB, tmp_path: Path
) -> None:
    studio = label_studio.studio
    name = f"hooks-{uuid.uuid4().hex[:6]}"
    config = render_label_config(kb)
    primary = studio.sdk.projects.create(title=name, label_config=config)
    double = studio.sdk.projects.create(title=f"{name}-double", label_config=config)
    studio.sdk.projects.import_tasks(
        id=primary.id, request=[{"data": {"text": "IL-6 activates STAT3.", "doc_id": "d1"}}]
    )
    # What Label Studio creates when the backend is connected: every action, no auth.
    studio.sdk.webhooks.create(
        project=primary.id, url=f"{BACKEND}/webhook", send_payload=True, send_for_all_actions=True
    )
    gold = tmp_path / "gold.json"
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token,
           "BASIC_AUTH_USER": "ls", "BASIC_AUTH_PASS": "pw-not-a-secret"}  # fmt: skip
    for created in (1, 0):  # the double project's, on the first run only
        done = cli("studio", "webhook", "--project", name, "--url", f"{BACKEND}/", "--gold", gold,
                   env=env)  # fmt: skip
        assert done.returncode == 0, done.err
        assert (
            f"{name} (id {primary.id})" in done.out
            and f"{name}-double (id {double.id})" in done.out
        )
        assert (done.out.count(" created"), done.out.count(" updated")) == (created, 2 - created)
        assert f"GOLDLOOP_GOLD={name}={gold.resolve()}" in done.out
    expected_auth = "Basic " + base64.b64encode(b"ls:pw-not-a-secret").decode()
    for project in (primary, double):
        (hook,) = hooks_to_backend(studio.sdk, project.id)
        assert hook.headers == {"Authorization": expected_auth}
        assert not hook.send_for_all_actions and hook.send_payload and hook.is_active
        assert sorted(hook.actions) == sorted(ACTIONS)
    assert json.loads(gold.read_text()) == []  # nothing annotated yet
    assert mirror_path(gold).exists()


def test_the_command_refuses_a_missing_project_and_half_an_auth_pair(
    cli: Cli, label_studio: Any, tmp_path: Path
) -> None:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    args = ("studio", "webhook", "--project", "no-such-campaign", "--url", BACKEND,
            "--gold", tmp_path / "g.json")  # fmt: skip
    done = cli(*args, env=env)
    assert done.returncode != 0 and "no-such-campaign" in done.err
    done = cli(*args, env={**env, "BASIC_AUTH_USER": "ls"})
    assert done.returncode == 2 and "BASIC_AUTH_PASS" in done.err
    assert not (tmp_path / "g.json").exists()
