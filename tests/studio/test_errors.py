"""Clear errors, exit 2, nothing written: unreachable server, wrong token, a config lacking a control."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from goldloop.studio import server
from tests.conftest import Cli, CliResult
from tests.studio.loop_data import write_inputs


@pytest.fixture
def goldloop(cli: Cli):
    def run(args: list[str], url: str, key: str, cwd: Path) -> CliResult:
        env = {
            "LABEL_STUDIO_URL": url,
            "LABEL_STUDIO_API_KEY": key,
            "GOLDLOOP_HOME": str(cwd / ".goldloop"),
        }
        return cli(*args, env=env)

    return run


def _push_args(tmp_path: Path, project: str) -> list[str]:
    documents, gold_a, _ = write_inputs(tmp_path)
    return ["push", "--sample", str(documents), "--project", project, "--candidates", str(gold_a)]


def test_unreachable_server(goldloop, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{server.free_port()}"
    done = goldloop(_push_args(tmp_path, "p"), url, "x" * 40, tmp_path)
    assert done.returncode == 4, done.stderr  # a service error, not bad input
    assert f"cannot reach Label Studio at {url}" in done.stderr
    assert "Traceback" not in done.stderr


def test_wrong_token(goldloop, label_studio, tmp_path: Path) -> None:
    done = goldloop(_push_args(tmp_path, "p"), label_studio.url, "0" * 40, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "refused the API key (HTTP 401)" in done.stderr
    assert "0" * 40 not in done.stderr


def test_project_without_needed_controls(goldloop, label_studio, tmp_path: Path) -> None:
    title = f"bare-{uuid.uuid4().hex[:6]}"
    config = '<View><Text name="text" value="$text"/><Labels name="mention" toName="text"><Label value="P"/></Labels></View>'
    project = label_studio.studio.sdk.projects.create(title=title, label_config=config)
    done = goldloop(_push_args(tmp_path, title), label_studio.url, label_studio.token, tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"project {title!r}" in done.stderr and "lacks relation (taxonomy)" in done.stderr
    assert list(label_studio.studio.sdk.tasks.list(project=project.id)) == []
    out = tmp_path / "v.json"
    done = goldloop(
        ["pull", "--project", title, "--out", str(out)],
        label_studio.url,
        label_studio.token,
        tmp_path,
    )
    assert done.returncode == 2 and "lacks relation" in done.stderr
    assert not out.exists()


def test_pull_of_a_missing_project(goldloop, label_studio, tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    done = goldloop(["pull", "--project", "no-such-project", "--out", str(out)], label_studio.url, label_studio.token,
                     tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "no Label Studio project titled 'no-such-project'" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("bad", ["nope", "inhibits"])
def test_candidates_whose_tag_cannot_be_told(goldloop, tmp_path: Path, bad: str) -> None:
    documents, gold_a, gold_b = write_inputs(tmp_path)
    merged = tmp_path / "merged.json"
    a, b = json.loads(gold_a.read_text()), json.loads(gold_b.read_text())
    for doc_a, doc_b in zip(a, b, strict=True):
        doc_a["ground_truth"] += [h for h in doc_b["ground_truth"] if (h["a"], h["b"]) not in
                                  {(x["a"], x["b"]) for x in doc_a["ground_truth"]}]  # fmt: skip
    merged.write_text(json.dumps(a))
    done = goldloop(["push", "--sample", str(documents), "--project", bad, "--candidates", str(merged)],
                     f"http://127.0.0.1:{server.free_port()}", "k", tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert (
        "cannot tell the annotator tag (annotators found: claude-test, gpt-test@low)" in done.stderr
    )
