"""The demo loop on the bundled corpus, against the session's Label Studio, and its check."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from goldloop.kb import KB
from goldloop.studio.demo import PROJECT, DemoRun, check_pushed, next_commands, run_demo
from goldloop.studio.project import find_project
from goldloop.text.lexical import LexicalAnnotator
from tests.conftest import environment, run_goldloop


def test_demo_pushes_the_sample_and_the_check_sees_a_missing_task(
    kb: KB, label_studio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def demo() -> DemoRun:
        return run_demo(
            kb,
            LexicalAnnotator(kb),
            settings=environment(),
            home=tmp_path / "demo",
            studio_home=label_studio.home,
        )

    run = demo()
    assert run.state.url == label_studio.url
    assert len(run.documents) == 12 and {d.role for d in run.documents} == {"primary", "double"}
    assert sum(len(h) for h in run.candidates.hits.values()) > 0
    assert check_pushed(run, kb) == []
    again = demo()
    assert sum(p.created for p in again.push.projects) == 0
    project = find_project(label_studio.studio, PROJECT)
    assert project is not None
    victim = next(iter(label_studio.studio.sdk.tasks.list(project=project.id)))
    label_studio.studio.sdk.tasks.delete(id=victim.id)
    assert check_pushed(run, kb) == [f"{victim.data['doc_id']}: no task"]
    commands = [c.split()[1] for c in next_commands(run)]
    assert commands == ["studio", "status", "curate", "pull", "effort", "score", "studio"]
    # Printed as the user runs goldloop: each line starts with it, so it runs as printed.
    venv = ".venv/bin/goldloop"
    assert all(c.startswith(f"{venv} ") for c in next_commands(run, venv))
    # The printed commands, run as printed before anyone annotated, from an empty folder: every
    # report lands beside the demo's files, and the charts say nothing was annotated yet; score
    # refuses a gold without documents (exit 2) and says why in the same words.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    printed = {c.split()[1]: shlex.split(c.partition("#")[0])[1:] for c in next_commands(run)[1:]}
    for name in ("status", "pull", "effort"):
        result = run_goldloop(printed[name], env)
        assert result.returncode == 0, (name, result.stderr)
        if name == "effort":
            assert "nothing annotated yet" in result.out, name
            assert "UserWarning" not in result.stderr
    result = run_goldloop(printed["score"], env)
    assert result.returncode == 2 and "nothing annotated yet" in result.err, result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert list(cwd.iterdir()) == []
    demo = tmp_path / "demo"
    written = {p.relative_to(demo).as_posix() for p in demo.rglob("*") if p.is_file()}
    assert {
        f"{PROJECT}.status.json", f"{PROJECT}.effort.json", f"{PROJECT}.effort.png",
        "gold.verified.json",
    } <= written  # fmt: skip
