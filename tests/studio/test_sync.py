"""`goldloop sync` against a real Label Studio: push what is missing then pull; a sync that would
change the campaign's pre-fill is refused before anything is sent."""

from __future__ import annotations

import json

from goldloop.formats.gold import read_gold
from tests.conftest import run_goldloop
from tests.studio.conftest import run_in_studio
from tests.studio.loop_data import REVIEW, TAG_A, project_titled, tasks_of


def test_sync_pushes_what_is_missing_then_pulls(pushed, label_studio) -> None:
    out = pushed["dir"] / "synced.json"
    extra = pushed["dir"] / "more.jsonl"
    lines = pushed["documents"].read_text(encoding="utf-8")
    new = {"doc_id": "pmid:9", "text": "Rapamycin inhibits mTORC1.", "role": "primary", "batch": 2}
    extra.write_text(lines + json.dumps(new) + "\n", encoding="utf-8")
    output = run_in_studio(
        ["sync", "--sample", str(extra), "--project", pushed["name"], "--out", str(out),
         "--candidates", str(pushed["gold_a"]), "--other", str(pushed["gold_b"])],
        label_studio,
    ).stdout  # fmt: skip
    assert "tasks created" in output
    assert sorted(tasks_of(label_studio.studio.sdk, pushed["main"].id)) == [
        f"pmid:{i}" for i in (1, 2, 3, 4, 5, 6, 8, 9)
    ]
    sidecar = json.loads((pushed["dir"] / "synced.json.verification.json").read_text())
    assert (sidecar["tasks"], sidecar["verified_tasks"], sidecar["unannotated_tasks"]) == (9, 6, 2)
    assert len(read_gold(out).documents) == 6


def test_sync_without_b_keeps_the_campaigns_prefill(pushed, label_studio) -> None:
    """The README's sync (no --other) on an A+B campaign refuses before sending anything."""
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    out = pushed["dir"] / "sync-a-only.json"
    before = {
        d: len(t.predictions)
        for d, t in tasks_of(label_studio.studio.sdk, pushed["main"].id).items()
    }
    result = run_goldloop(
        ["sync", "--sample", str(pushed["documents"]), "--project", pushed["name"], "--out", str(out),
         "--candidates", str(pushed["gold_a"])], env,
    )  # fmt: skip
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--other" in result.err and REVIEW in result.err and f"review:{TAG_A}" in result.err
    assert project_titled(label_studio.studio.sdk, pushed["name"]).model_version == REVIEW
    assert (
        project_titled(label_studio.studio.sdk, f"{pushed['name']}-double").model_version == REVIEW
    )
    after = {
        d: len(t.predictions)
        for d, t in tasks_of(label_studio.studio.sdk, pushed["main"].id).items()
    }
    assert after == before
    assert not out.exists()
