"""``goldloop effort`` on the curation campaign (real Label Studio): the figures follow from the
``lead_time`` values the test set, with the idle outlier capped and counted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from goldloop.studio.effort import EffortRow, effort_report, minutes_by_document
from tests.conftest import Cli
from tests.studio.campaign_data import ADMIN, ALICE, BOB, CAROL, LEAD_TIMES, Campaign

pytestmark = pytest.mark.studio
CAP = 15.0
VERSIONS = {"admin": ADMIN, "alice": ALICE, "bob": BOB, "carol": CAROL}
# Annotations that changed or dropped a pre-annotated candidate (correction rate > 0.2 here).
CORRECTED = {("bob", "pmid:12"), ("bob", "pmid:13"), ("bob", "pmid:14"), ("carol", "pmid:12"), ("carol", "pmid:13")}  # fmt: skip


def reference(keys: list[tuple[str, str]]) -> dict[str, Any]:
    """The figures over some annotations, straight from the test's own tables."""
    minutes = sum(min(LEAD_TIMES[k] / 60, CAP) for k in keys)
    mentions = sum(len(VERSIONS[p][d]) for p, d in keys)
    return {
        "annotations": len(keys),
        "minutes": pytest.approx(minutes),
        "minutes_per_document": pytest.approx(minutes / len(keys), abs=1e-4),
        "verified_mentions": mentions,
        "minutes_per_verified_mention": pytest.approx(minutes / mentions, abs=1e-4),
    }


def picked(figures: dict[str, Any]) -> dict[str, Any]:
    keys = ("annotations", "minutes", "minutes_per_document", "verified_mentions",
            "minutes_per_verified_mention")  # fmt: skip
    return {k: figures[k] for k in keys}


def test_effort_figures_follow_lead_time(
    campaign: Campaign, label_studio: Any, tmp_path, cli: Cli
) -> None:
    out, png = tmp_path / "effort.json", tmp_path / "effort.png"
    done = cli(
        "effort",
        "--project",
        campaign.name,
        "-o",
        out,
        "--png",
        png,
        env={
            "LABEL_STUDIO_URL": label_studio.url,
            "LABEL_STUDIO_API_KEY": label_studio.token,
            "COLUMNS": "200",
        },
    )
    assert done.returncode == 0, done.stderr
    stdout = done.stdout
    report = json.loads(out.read_text())
    assert (report["idle_cap_minutes"], report["capped_annotations"]) == (CAP, 1)
    assert report["annotations_without_lead_time"] == 0
    assert picked(report["overall"]) == reference(list(LEAD_TIMES))
    emails = {campaign.email(p): p for p in VERSIONS}
    by_person = {emails[e]: picked(f) for e, f in report["by_annotator"].items()}
    assert by_person == {p: reference([k for k in LEAD_TIMES if k[0] == p]) for p in VERSIONS}
    assert {k: picked(v) for k, v in report["by_correction_rate"].items()} == {
        "0": reference([k for k in LEAD_TIMES if k not in CORRECTED]),
        ">0.2": reference(sorted(CORRECTED)),
    }
    assert list(report["by_pre_annotator"]) == ["gpt-test@low"]
    assert list(report["by_length"]) == ["<1000 chars"]
    assert {role: f["annotations"] for role, f in report["by_role"].items()} == {
        "curate": 3, "double": 11, "primary": 1,
    }  # fmt: skip
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    assert "minutes per verified mention" in stdout and "capped at 15 min (idle)" in stdout


def test_a_failing_chart_keeps_the_last_good_pair(
    campaign: Campaign, label_studio: Any, tmp_path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The JSON and the PNG are written together once both are made: a chart that fails to draw
    # leaves the last run's pair as it was, not a new JSON beside an old chart.
    from matplotlib.figure import Figure

    out, png = tmp_path / "effort.json", tmp_path / "effort.png"
    out.write_text("old json\n")
    png.write_bytes(b"old png")

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the chart could not be drawn")

    monkeypatch.setattr(Figure, "savefig", fail)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    with pytest.raises(RuntimeError, match="could not be drawn"):
        cli("effort", "--project", campaign.name, "-o", out, "--png", png, env=env)
    assert (out.read_text(), png.read_bytes()) == ("old json\n", b"old png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["effort.json", "effort.png"]


def test_the_report_keeps_its_json_keys_in_order() -> None:
    """The typed report writes the keys the effort file has always had, the groups last."""
    report = effort_report([], cap_minutes=10.0).to_dict()
    assert list(report) == [
        "idle_cap_minutes", "capped_annotations", "annotations_without_lead_time", "overall",
        "by_annotator", "by_pre_annotator", "by_correction_rate", "by_length", "by_role",
    ]  # fmt: skip
    assert report["idle_cap_minutes"] == 10.0 and report["by_annotator"] == {}


def test_minutes_by_document_average_its_timed_primary_and_double_annotations() -> None:
    """A plan's effort record: per document the mean of its timed annotations in the primary
    and double projects (a curation's minutes are not what one more document costs)."""

    def row(role: str, doc_id: str, minutes: float | None) -> EffortRow:
        return EffortRow(role=role, task=1, doc_id=doc_id, annotator="a", pre_annotator="x",
                         seconds=None if minutes is None else minutes * 60, minutes=minutes,
                         capped=False, kept=0, added=0, deleted=0, candidates=0, corrections=0,
                         length=10, created_at="")  # fmt: skip

    rows = [row("primary", "d1", 2.0), row("double", "d2", 1.0), row("double", "d2", 3.0),
            row("curate", "d2", 9.0), row("primary", "d3", None)]  # fmt: skip
    assert minutes_by_document(rows) == {"d1": 2.0, "d2": 2.0}


def test_proposals_submitted_untouched_count_among_the_verified_mentions() -> None:
    """The backend's other-occurrence proposals are gold mentions of the annotation, apart from
    the candidates kept and the mentions added."""
    row = EffortRow(role="primary", task=1, doc_id="d", annotator="a", pre_annotator="x",
                    seconds=60.0, minutes=1.0, capped=False, kept=2, added=1, deleted=0,
                    candidates=3, corrections=0, length=10, created_at="", proposed=2)  # fmt: skip
    assert row.verified_mentions == 5
