"""The plan's loop through a real Label Studio: a pilot drawn and pushed, people's work with lead
times through the SDK, ``pull``, ``plan`` (minutes per stratum from those lead times),
``sample --extend --plan``, ``push`` of the planned batch, more work, and ``status --plan``
showing the target reached."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.documents import read_documents
from goldloop.formats.gold import read_gold
from goldloop.scoring.inputs import read_predictions
from goldloop.scoring.plan import gold_contributions, standing
from goldloop.studio.review import hit_regions
from tests.cli.plan_campaign import hits_of, write_corpus, write_gold_and_system
from tests.conftest import shared_kb
from tests.studio.conftest import run_in_studio
from tests.studio.loop_data import project_titled, tasks_of

pytestmark = pytest.mark.studio

PILOT = ["--n-primary", "30", "--n-double", "0", "--n-reserve", "0", "--tail-top-k", "10"]


def seconds_for(text: str) -> float:
    """What a person took: longer texts and more mentions take longer (so strata differ)."""
    return 30 + len(text) / 8 + 25 * len(hits_of(text))


def work(label_studio: Any, name: str) -> int:
    """Every task without an annotation gets the gold's regions, with a lead time."""
    studio, kb = label_studio.studio, shared_kb()
    done = 0
    for task in tasks_of(studio.sdk, project_titled(studio.sdk, name).id).values():
        if task.annotations:
            continue
        text = task.data["text"]
        result = [item for hit in hits_of(text) for item in hit_regions(text, hit, kb)]
        studio.sdk.annotations.create(id=task.id, result=result, lead_time=seconds_for(text))
        done += 1
    return done


def test_pilot_plan_planned_batch_then_the_target_is_reached(label_studio, tmp_path: Path) -> None:
    name = f"plan-{uuid.uuid4().hex[:6]}"
    corpus = write_corpus(tmp_path / "corpus.tsv")
    sample, system, truth = tmp_path / "sample", tmp_path / "system.json", tmp_path / "truth.json"
    run_in_studio(
        ["sample", "--corpus", corpus, "--out", sample, *PILOT, "--seed", "3"], label_studio
    )
    write_gold_and_system(read_documents(sample), truth, system)
    push = ["push", "--sample", sample, "--project", name, "--candidates", system,
            "--candidates-tag", "sys"]  # fmt: skip
    run_in_studio(push, label_studio)
    assert work(label_studio, name) == 30
    pulled = tmp_path / "gold.json"
    run_in_studio(["pull", "--project", name, "--out", pulled], label_studio)

    # The target: a tenth narrower than the pilot's anytime-valid half-width.
    documents = read_gold(pulled, shared_kb()).documents
    now = standing(
        gold_contributions(documents, read_predictions(system, documents), shared_kb(), "f1")
    )
    target = round(now.anytime_half_width * 0.9, 4)
    plan_file = tmp_path / "plan.json"
    made = run_in_studio(["plan", "--gold", pulled, "--sample", sample, "--system",
                          f"sys={system}", "--half-width", target, "--project", name,
                          "--out", plan_file], label_studio)  # fmt: skip
    plan = json.loads(plan_file.read_text())
    assert not plan["reached"] and plan["now"]["n_docs"] == 30
    assert {s["minutes_from"] for s in plan["strata"]} <= {"measured", "campaign"}
    measured = [s for s in plan["strata"] if s["minutes_from"] == "measured"]
    for stratum in measured:  # a stratum's minutes are its documents' lead times
        ids = [d.doc_id for d in documents if d.stratum == stratum["name"]]
        expected = [seconds_for(d.text) / 60 for d in documents if d.doc_id in ids]
        assert stratum["minutes"] == pytest.approx(sum(expected) / len(expected), abs=1e-4)
    assert "anytime-valid" in made.stdout

    status_line = run_in_studio(["status", "--project", name, "--plan", plan_file,
                                 "--out", tmp_path / "s0.json"], label_studio).stdout  # fmt: skip
    assert "goldloop sample --extend --plan" in status_line

    run_in_studio(["sample", "--corpus", corpus, "--out", sample, "--extend", "--plan",
                   plan_file, "--tail-top-k", "10"], label_studio)  # fmt: skip
    planned = plan["next_batch"]["documents"]
    assert len(read_documents(sample)) == 30 + planned
    write_gold_and_system(read_documents(sample), truth, system)  # candidates for the new ones
    run_in_studio(push, label_studio)
    assert work(label_studio, name) == planned

    status = tmp_path / "status.json"
    shown = run_in_studio(["status", "--project", name, "--plan", plan_file, "--out", status],
                          label_studio).stdout  # fmt: skip
    line = json.loads(status.read_text())["plan"]
    assert line["n_docs"] == 30 + planned
    assert line["anytime_half_width"] <= target and line["reached"]
    assert "stop: the target is reached" in shown
