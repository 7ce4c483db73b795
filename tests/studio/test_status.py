"""``goldloop status`` on the curation campaign (real Label Studio): tasks per project, work per
annotator, verdicts, κ and the time left, checked against what the test did."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.labelstudio.verify import Curation, Tally
from goldloop.kb import KB
from goldloop.studio.campaign import campaign_sections
from goldloop.studio.effort import figures
from goldloop.studio.project import export_campaign
from goldloop.studio.status import StatusCuration, Verdicts
from tests.conftest import Cli, assert_fits, run_goldloop
from tests.studio.campaign_data import LEAD_TIMES, Campaign

pytestmark = pytest.mark.studio
RECORDED = Path(__file__).parents[1] / "data/recorded/studio/files"


def test_status_table_json_and_watch(
    kb: KB, campaign: Campaign, label_studio: Any, tmp_path, cli: Cli
) -> None:
    out = tmp_path / "status.json"
    done = cli("status", "--project", campaign.name, "-o", str(out), "--watch", "--interval", "0.01", "--rounds", "2", env={"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token, "COLUMNS": "200"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    stdout = done.stdout
    status = json.loads(out.read_text())
    assert status["roles"] == {
        "primary": {"tasks": 1, "annotated": 1, "partly_annotated": 0, "skipped": 0, "annotations": 1, "annotations_needed": 0, "without_prediction": 0},
        "double": {"tasks": 6, "annotated": 5, "partly_annotated": 1, "skipped": 0, "annotations": 11, "annotations_needed": 1, "without_prediction": 0},
        "curate": {"tasks": 4, "annotated": 3, "partly_annotated": 0, "skipped": 0, "annotations": 3, "annotations_needed": 1, "without_prediction": 0},
    }  # fmt: skip
    people = {campaign.email(p): p for p in ("admin", "alice", "bob", "carol")}
    assert {people[e]: row for e, row in status["annotators"].items()} == {
        "admin": {"tasks": 1, "kept": 1, "added": 0, "deleted": 0},
        "alice": {"tasks": 6, "kept": 7, "added": 1, "deleted": 0},
        "bob": {"tasks": 5, "kept": 6, "added": 0, "deleted": 0},
        "carol": {"tasks": 3, "kept": 4, "added": 0, "deleted": 0},
    }
    verdicts = status["verdicts"]
    assert (verdicts["accept"], verdicts["fix"], verdicts["added"]) == (6, 2, 0)
    assert verdicts["correction_rate"] == pytest.approx(2 / 8)
    assert verdicts["anchored"]["candidates"] == 8 and verdicts["paraphrase"]["candidates"] == 0
    assert status["decided"] == {"single": 3, "agreed": 1, "curated": 3}
    assert status["curation"]["awaiting_curation"] == ["pmid:14"]
    exported = export_campaign(label_studio.studio, campaign.name)
    sections = campaign_sections(exported, kb)
    assert sections.agreement_before_curation is not None and sections.completeness is not None
    assert status["agreement"] == sections.agreement_before_curation.to_dict()
    f1 = status["agreement"]["span_f1"]["lenient"]["f1"]
    labelled = status["agreement"]["span_f1_labelled"]["lenient"]["f1"]
    line = rf"span F1 lenient / labelled, double tasks\s*│\s*{f1:.3f} / {labelled:.3f}"
    assert re.search(line, done.out)
    assert status["completeness"] == json.loads(json.dumps(sections.completeness.to_dict()))
    assert status["completeness"]["n_docs"] == 5
    median = statistics.median(min(s / 60, 15.0) for s in LEAD_TIMES.values())
    assert status["finish"]["annotations_needed"] == 2
    assert status["finish"]["median_minutes_per_document"] == pytest.approx(median, abs=1e-4)
    assert status["finish"]["work_minutes_left"] == pytest.approx(2 * median, abs=0.01)
    assert status["finish"]["annotations_per_hour"] > 0
    assert f"{campaign.name}-curate (curate)" in stdout and "annotations still needed" in stdout


def test_status_of_a_missing_project_names_it(label_studio: Any, tmp_path, cli: Cli) -> None:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    done = cli("status", "--project", "no-such-campaign", "-o", tmp_path / "s.json", env=env)
    assert done.returncode == 2 and "'no-such-campaign'" in done.err
    assert not (tmp_path / "s.json").exists()


def test_status_effort_and_curate_read_whole_at_80_columns(
    campaign: Campaign, label_studio: Any, tmp_path, terminal: int
) -> None:
    """Long e-mails wrap, figures stay whole, and the curation tag is on a line of its own."""
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    status = run_goldloop(["status", "--project", campaign.name, "-o", tmp_path / "s.json"], env)
    assert status.returncode == 0, status.stderr
    data = json.loads((tmp_path / "s.json").read_text())
    assert_fits(status.stdout, [
        f"{data['verdicts']['correction_rate']:.3f}",
        f"{data['finish']['median_minutes_per_document']:.3f}",
    ])  # fmt: skip
    effort = run_goldloop(["effort", "--project", campaign.name, "-o", tmp_path / "e.json",
                           "--png", tmp_path / "e.png"], env)  # fmt: skip
    assert effort.returncode == 0, effort.stderr
    report = json.loads((tmp_path / "e.json").read_text())
    assert_fits(effort.stdout, [
        f"{row['minutes_per_verified_mention']:.3f}"
        for row in report["by_annotator"].values() if row["minutes_per_verified_mention"]
    ])  # fmt: skip
    curate = run_goldloop(["curate", "--project", campaign.name], env)
    assert curate.returncode == 0, curate.stderr
    assert_fits(curate.stdout)
    tag = next(
        p.model_version for t in campaign.curate_tasks.values() for p in t.predictions
        if p.model_version.startswith("curate:")
    )  # fmt: skip
    assert f"curation tag of {campaign.name}-curate: {tag}" in curate.stdout.splitlines()


def test_the_typed_sections_keep_the_recorded_json_keys_in_order() -> None:
    """Verdicts, curation and effort write the keys a recorded status file holds, in order."""
    recorded = json.loads((RECORDED / "campaign.status.json").read_text(encoding="utf-8"))
    verdicts = Verdicts(Tally(candidates=4, fix=1), Tally(candidates=4, fix=1), Tally()).to_dict()
    assert list(verdicts) == list(recorded["verdicts"])
    assert verdicts["correction_rate"] == 0.25 and verdicts["paraphrase"]["correction_rate"] is None
    kept_by = {"both": 0, "one": 0, "neither": 0}
    curation = StatusCuration(Curation(1, 0, ["pmid:1"], 0, kept_by), disputes_not_pushed=1)
    assert list(curation.to_dict()) == list(recorded["curation"])
    nothing = figures([]).to_dict()
    assert list(nothing) == list(recorded["effort"])
    assert (nothing["annotations"], nothing["minutes_per_document"]) == (0, None)
