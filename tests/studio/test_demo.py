"""The demo loop on the bundled corpus, against the session's Label Studio, and its check."""

from __future__ import annotations

from pathlib import Path

from goldloop.kb import KB
from goldloop.studio.demo import PROJECT, check_pushed, next_commands, run_demo
from goldloop.studio.project import find_project
from goldloop.text.lexical import LexicalAnnotator


def test_demo_pushes_the_sample_and_the_check_sees_a_missing_task(
    kb: KB, label_studio, tmp_path: Path
) -> None:
    run = run_demo(kb, LexicalAnnotator(kb), home=tmp_path / "demo", studio_home=label_studio.home)
    assert run.state.url == label_studio.url
    assert len(run.documents) == 12 and {d.role for d in run.documents} == {"primary", "double"}
    assert sum(len(h) for h in run.candidates.hits.values()) > 0
    assert check_pushed(run, kb) == []
    again = run_demo(
        kb, LexicalAnnotator(kb), home=tmp_path / "demo", studio_home=label_studio.home
    )
    assert sum(p.created for p in again.push.projects) == 0
    project = find_project(label_studio.connection, label_studio.client, PROJECT)
    assert project is not None
    victim = next(iter(label_studio.client.tasks.list(project=project.id)))
    label_studio.client.tasks.delete(id=victim.id)
    assert check_pushed(run, kb) == [f"{victim.data['doc_id']}: no task"]
    commands = [c.split()[1] for c in next_commands(run)]
    assert commands == ["status", "curate", "pull", "effort", "score", "studio"]
