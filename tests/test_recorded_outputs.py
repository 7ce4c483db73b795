"""The loop's outputs, recorded before issue #28 moves the modules into layers: the same commands
on the same inputs must exit with the same codes, print the same lines and leave the same files.

Two scenarios run ``goldloop`` through its entry point (:func:`tests.conftest.run_goldloop`):

- ``offline``: ``sample`` (and ``--extend``) on the bundled demo corpus, ``annotate`` with the
  lexical pre-annotator and with an LLM (the fake provider), ``agree``, ``score``, ``baselines``
  (also on the legacy fixture gold), ``pool``, ``precision judge``/``sample``/``report``,
  ``gold check``, ``kb check``, ``kb derive``, ``label-config``, ``audit`` (also of the fixture
  sample dir) and ``stats``;
- ``studio`` (a real Label Studio, the ``studio`` marker): ``push`` of the offline sample with
  both pre-annotations (the task payloads are recorded), two people's work through the SDK,
  ``agree --studio-project``, ``curate``, ``pull``, ``score`` on the pulled gold, ``precision
  sample``/``report --studio-project``; the fixture corpus of ``tests/studio/loop_data.py`` with
  the loop test's people's work, pulled whole and per annotator; the curation campaign of
  ``tests/studio/campaign_data.py`` with ``status``, ``effort``, ``agree`` and ``pull``.

Each command's exit code, stdout and stderr and every file left in the work directory are
compared with ``tests/data/recorded/<scenario>``; a difference fails with the list of differing
files and the diff of the first. Only what is legitimately run-dependent is normalised, each
with its reason: temporary directories and the checkout (``Loop.paths``), servers' ports and the
random names of Label Studio's people and projects (:func:`masked`), times and durations
(:data:`TIME_KEYS`), Label Studio's ids (:data:`RUN_DEPENDENT`), Label Studio's own records in
pull's mirror (:func:`mirror_frame`) and in the task payloads (:func:`record_payloads`), a time
column of CSVs (:func:`without_time_columns`), and PNG pixels (:func:`png_metadata`).

After an intended change of an output (a labeling config, a report field), re-record and review
the diff of ``tests/data/recorded`` before committing it:

    GOLDLOOP_RECORD=1 .venv/bin/pytest tests/test_recorded_outputs.py

(with ``GOLDLOOP_LABEL_STUDIO`` naming the ``label-studio`` executable when it is not installed in
``.goldloop/studio``; without a server the ``studio`` records stay as they are). What each record
holds and each normalisation: ``tests/data/recorded/README.md``.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import io
import json
import os
import re
import shlex
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from rich.console import Console

from tests.conftest import REPO, CliResult, run_goldloop, shared_kb
from tests.fakes.llm_server import BASE_URL_ENV, FAKE_KEY, KEY_ENV, FakeLLMServer, FakeRequest
from tests.studio.campaign_data import build
from tests.studio.loop_data import people_work, project_titled, tasks_of, write_inputs

RECORDED = REPO / "tests" / "data" / "recorded"
RECORDING = os.environ.get("GOLDLOOP_RECORD") == "1"
DEMO_CORPUS = REPO / "src" / "goldloop" / "data" / "demo" / "corpus.tsv"
LEGACY_GOLD = REPO / "tests" / "data" / "legacy" / "sample.0.gt.json"
FIXTURE_SAMPLE = REPO / "tests" / "data" / "sample"
COMMAND_WORD = re.compile(r"[a-z][a-z-]*")
# Files the scenario writes for the commands to read (hand labels, a merged KB) and copies of the
# fixtures: inputs, not outputs.
INPUTS = "inputs"
# Caches the commands keep for themselves: SQLite pages whose bytes differ run to run, and no
# command's output.
CACHES = ("llm-cache.sqlite", "parse-cache.sqlite")
# Values that differ on every run, whatever the code, and why; each becomes <its key> in JSON.
TIME_KEYS = (
    "created",  # the moment a sampling report was written
    "wall_time_s", "scoring_time_s",  # how long a step took
    # status's pace: annotations per hour between the first and the last annotation, which the
    # test makes within seconds of each other
    "annotations_per_hour", "hours_left_at_this_pace",
)  # fmt: skip
RUN_DEPENDENT: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (
        re.compile(r'"(?P<key>' + "|".join(TIME_KEYS) + r')": (?:"[^"]*"|[-0-9.eE+]+|null)'),
        lambda m: f'"{m["key"]}": "<{m["key"]}>"',
    ),
    # The same pace in status's table, as wide as it was.
    (
        re.compile(r"(?<=hours left at this pace)(?P<cell> +│ +[0-9.]+)"),
        lambda m: re.sub(r"[0-9]", "#", m["cell"]),
    ),
    # Label Studio's ids count every task and project the server ever made: other tests share it.
    # (A curate task's data names its double task.)
    (re.compile(r'"(?P<key>task|double_task)": [0-9]+'), lambda m: f'"{m["key"]}": "<id>"'),
    # ... also in push's right-aligned table cells, kept as wide.
    (
        re.compile(r"(?<=│)(?P<pad> +)(?P<title>[^│]*)\(id (?P<id>[0-9]+)\)"),
        lambda m: " " * (len(m["pad"]) + len(m["id"]) - 1) + m["title"] + "(id #)",
    ),
]
# The fake LLM's reading of a text, independent of goldloop's lexical matcher: where a surface
# occurs it is quoted with this label and direction. "reduces" read as inhibits and "induces" as
# inverse give the two pre-annotators relations and directions to disagree on; "activation" is
# nominal (rejected as non_verbal).
LLM_READING = [
    ("activates", "activates", "forward"),
    ("binds to", "binds to", "symmetric"),
    ("inhibited by", "inhibits", "inverse"),
    ("reduces", "inhibits", "forward"),
    ("promotes", "promotes", "forward"),
    ("induces", "induces", "inverse"),
    ("phosphorylates", "phosphorylates", "forward"),
    ("activation", "activates", "forward"),
]


def llm_reading(request: FakeRequest) -> str:
    mentions = [
        {"surface": surface, "occurrence": 1, "label": label, "direction": direction}
        for surface, label, direction in LLM_READING
        if surface in request.user
    ]
    return json.dumps({"mentions": mentions})


def judge_reading(request: FakeRequest) -> str:
    """Passive surfaces ("inhibited by") are not found, the others supported."""
    verdict = "not_found" if " by⟧" in request.user else "supported"
    return json.dumps({"verdict": verdict, "reason": "scripted"})


@dataclass
class Loop:
    """One scenario, run with ``work`` as the current directory: each command's exit code and
    output (``commands/NN-name.txt``), then every file it left (``files/...``)."""

    work: Path
    env: dict[str, str]
    # Run-dependent names (servers' addresses, Label Studio's people and projects), masked.
    names: dict[str, str]
    # Run-dependent directories, deepest first, and what stands for them.
    paths: dict[str, str]
    records: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str | int | Path, env: dict[str, str] | None = None) -> CliResult:
        result = run_goldloop(args, {**self.env, **(env or {})})
        number = sum(name.startswith("commands/") for name in self.records) + 1
        words = [str(a) for a in args[:2]]
        name = "-".join(words[: 2 if COMMAND_WORD.fullmatch(words[-1]) else 1])
        self.records[f"commands/{number:02d}-{name}.txt"] = self.normalise(
            f"$ goldloop {shlex.join(map(str, args))}\nexit {result.returncode}\n"
            f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
        )
        return result

    def normalise(self, text: str) -> str:
        for value, placeholder in (self.names | self.paths).items():
            text = text.replace(value, placeholder)
        for pattern, replacement in RUN_DEPENDENT:
            text = pattern.sub(replacement, text)
        return text

    def collect(self) -> dict[str, str]:
        """The commands' records and every file under ``work``, normalised."""
        records = dict(self.records)
        for path in sorted(p for p in self.work.rglob("*") if p.is_file()):
            if path.name in CACHES or path.relative_to(self.work).parts[0] == INPUTS:
                continue
            # Per-annotator files are named after people's (masked) emails.
            name = "files/" + self.normalise(path.relative_to(self.work).as_posix())
            if path.suffix == ".png":
                records[name + ".json"] = png_metadata(path)
            elif path.suffix == ".gz":
                # The content, not the bytes: gzip's header and compression are zlib's business.
                records[name.removesuffix(".gz")] = self.file_text(
                    path, gzip.decompress(path.read_bytes())
                )
            else:
                records[name] = self.file_text(path, path.read_bytes())
        return records

    def file_text(self, path: Path, data: bytes) -> str:
        text = self.normalise(data.decode("utf-8"))
        if path.name.endswith(".tasks.json"):
            return mirror_frame(text)
        if path.suffix == ".csv" or path.name.endswith(".csv.gz"):
            return without_time_columns(text)
        return text


def without_time_columns(text: str) -> str:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    columns = [i for i, name in enumerate(rows[0] if rows else []) if name in TIME_KEYS]
    if not columns:
        return text
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(rows[0])
    for row in rows[1:]:
        writer.writerow(
            [f"<{rows[0][i]}>" if i in columns and value else value for i, value in enumerate(row)]
        )
    return out.getvalue()


def mirror_frame(text: str) -> str:
    """goldloop's frame of pull's mirror (``<gold>.tasks.json``): its format, campaign, projects
    and which tasks each holds. The tasks themselves are Label Studio's export as it answered it
    (ids, dates, "0 minutes ago", fields per Label Studio version), kept for ``--since``."""
    mirror = json.loads(text)
    frame = {
        "format": mirror["format"],
        "campaign": mirror["campaign"],
        "projects": [
            {
                "title": project["title"],
                "tasks": {
                    task["data"]["doc_id"]: {
                        "annotations": len(task["annotations"]),
                        "predictions": len(task["predictions"]),
                    }
                    for task in project["tasks"]
                },
            }
            for project in mirror["projects"]
        ],
    }
    return json.dumps(frame, indent=2, ensure_ascii=False) + "\n"


def masked(value: str) -> str:
    """A run-dependent part of a name as x's, so that tables keep their widths: a server's port
    (the OS's choice), or the random hex the test helpers add to the people and projects they
    create in the shared Label Studio."""
    return re.sub(r"[0-9]+$|[0-9a-f]{6}(?=@|$)", lambda m: "x" * len(m[0]), value)


def png_metadata(path: Path) -> str:
    """What a chart is, not its pixels: those follow matplotlib's and FreeType's versions."""
    with Image.open(path) as image:
        software = str(image.info.get("Software", ""))
        meta = {
            "format": image.format,
            "mode": image.mode,
            "size": list(image.size),
            # PNG keeps pixels per metre: 110 dpi reads back as 110.0074.
            "dpi": [round(v) for v in image.info.get("dpi", ())],
            # The version of matplotlib that drew it is the environment's, not goldloop's.
            "software": re.sub(r"version[0-9.]+", "version<x>", software),
        }
    return json.dumps(meta, indent=2) + "\n"


def check_recorded(scenario: str, records: dict[str, str]) -> None:
    """``records`` equal ``tests/data/recorded/<scenario>`` (written there with GOLDLOOP_RECORD=1)."""
    where = RECORDED / scenario
    if RECORDING:
        shutil.rmtree(where, ignore_errors=True)
        for name, text in records.items():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            (where / name).write_bytes(text.encode("utf-8"))
        return
    recorded = {
        p.relative_to(where).as_posix(): p.read_bytes().decode("utf-8")
        for p in sorted(where.rglob("*"))
        if p.is_file()
    }
    missing = sorted(recorded.keys() - records.keys())
    new = sorted(records.keys() - recorded.keys())
    changed = sorted(n for n in records.keys() & recorded.keys() if records[n] != recorded[n])
    if not (missing or new or changed):
        return
    lines = [
        f"the {scenario} loop's outputs differ from tests/data/recorded/{scenario} "
        "(re-record with GOLDLOOP_RECORD=1 only for an intended change):"
    ]
    lines += [f"  changed: {n}" for n in changed]
    lines += [f"  no longer written: {n}" for n in missing]
    lines += [f"  not recorded: {n}" for n in new]
    if changed:
        first = changed[0]
        diff = difflib.unified_diff(
            recorded[first].splitlines(),
            records[first].splitlines(),
            f"recorded/{scenario}/{first}",
            f"this run's {first}",
            lineterm="",
        )
        lines += ["", *list(diff)[:80]]
    pytest.fail("\n".join(lines), pytrace=False)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The scenarios' directories, and an environment that names nothing of the machine's: no
    provider key, KB, model or Label Studio from the caller, caches inside the directory, and
    goldloop's consoles printing as into a file."""
    path = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            # GOLDLOOP_LABEL_STUDIO names the server executable the session fixture starts.
            if name.startswith(("GOLDLOOP_", "LABEL_STUDIO_")) and name != "GOLDLOOP_LABEL_STUDIO":
                patch.delenv(name)
        for name in (*KEY_ENV, *BASE_URL_ENV):
            patch.delenv(name, raising=False)
        patch.setenv("GOLDLOOP_HOME", str(path / "home"))
        patch.setenv("GOLDLOOP_CACHE", str(path / "llm-cache.sqlite"))
        patch.setenv("GOLDLOOP_PARSE_CACHE", str(path / "parse-cache.sqlite"))
        # The records are what `goldloop ... > file` prints: each command fits the consoles'
        # width to its own stdout and $COLUMNS when it starts.
        patch.delenv("COLUMNS", raising=False)
        for console in goldloop_consoles():
            # But a console takes its colours and interactivity when its module is first
            # imported, by whichever test: a terminal's under `pytest -s`.
            patch.setattr(console, "_color_system", None)
            patch.setattr(console, "is_interactive", False)  # no live progress display
        yield path


def goldloop_consoles() -> list[Console]:
    """Every rich console goldloop's modules print through, wherever they live."""
    import goldloop.cli  # noqa: F401  (the entry point: every command's module, and their consoles)

    found = {
        id(value): value
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "goldloop"
        for value in vars(module).values()
        if isinstance(value, Console)
    }
    return list(found.values())


def new_loop(root: Path, scenario: str, names: dict[str, str]) -> Loop:
    work = root / scenario
    (work / INPUTS).mkdir(parents=True)
    os.chdir(work)
    return Loop(work, {}, names, {str(work): "<work>", str(root): "<tmp>", str(REPO): "<repo>"})


@pytest.fixture(scope="module")
def offline(root: Path) -> Iterator[Loop]:
    """The offline scenario, run once; the studio scenario pushes its sample and pre-annotations."""
    cwd = Path.cwd()
    with FakeLLMServer(llm_reading) as llm:
        loop = new_loop(root, "offline", {llm.url: masked(llm.url)})
        try:
            run_offline(loop, llm)
        finally:
            os.chdir(cwd)
    yield loop


def run_offline(loop: Loop, llm: FakeLLMServer) -> None:
    demo = ["--corpus", DEMO_CORPUS, "--out", "sample", "--tail-top-k", "10", "--workers", "1"]
    loop.run("sample", *demo, "--n-primary", 8, "--n-double", 4, "--n-reserve", 4)
    loop.run("sample", *demo, "--n-primary", 2, "--n-double", 1, "--n-reserve", 1, "--extend")
    loop.run("annotate", "--sample", "sample", "--provider", "lexical", "-o", "gold.lexical.json")
    # One request at a time: the fake's prompt cache (the cached tokens reported) follows the
    # order requests arrive in.
    fake = {"OPENAI_API_KEY": FAKE_KEY}
    llm_options = ["--provider", "openai", "--base-url", llm.base_url("openai"), "--concurrency", 1]
    loop.run("annotate", "--sample", "sample", *llm_options, "--model", "fake-llm",
             "-o", "gold.llm.json", env=fake)  # fmt: skip
    llm.answer = judge_reading
    loop.run("precision", "judge", "--system", "gold.lexical.json", "--documents", "sample",
             *llm_options, "--model", "fake-judge", "-o", "verdicts.jsonl", env=fake)  # fmt: skip
    loop.run("precision", "sample", "--verdicts", "verdicts.jsonl", "--documents", "sample",
             "-o", "to-label.jsonl", "--n", 12)  # fmt: skip
    drawn = [json.loads(line) for line in Path("to-label.jsonl").read_text().splitlines()]
    Path("inputs/labels.jsonl").write_text(
        "".join(
            json.dumps({"key": row["key"], "label": ("supported", "not_found")[i % 2]}) + "\n"
            for i, row in enumerate(drawn)
        )
    )
    loop.run("precision", "report", "--verdicts", "verdicts.jsonl", "--labels", "inputs/labels.jsonl",
             "-o", "precision.json")  # fmt: skip
    loop.run("agree", "--gold", "gold.lexical.json", "--other", "gold.llm.json",
             "-o", "agreement.json")  # fmt: skip
    loop.run("score", "--gold", "gold.llm.json", "--system", "lexical=gold.lexical.json",
             "--regime", "both", "--bootstrap", 50, "--report-dir", "score")  # fmt: skip
    loop.run("pool", "lexical=gold.lexical.json", "llm=gold.llm.json", "--documents", "sample",
             "--bootstrap", 100, "-o", "pool.json")  # fmt: skip
    # The fixtures, copied in: relative paths keep tables as wide wherever the checkout is.
    shutil.copy(LEGACY_GOLD, "inputs/legacy.gt.json")
    shutil.copytree(FIXTURE_SAMPLE, "inputs/sample")
    loop.run("baselines", "--gold", "gold.llm.json", "--report-dir", "baselines")
    loop.run("baselines", "--gold", "inputs/legacy.gt.json", "--report-dir", "baselines-legacy")
    loop.run("gold", "check", "gold.lexical.json")
    loop.run("gold", "check", "gold.llm.json")
    loop.run("gold", "check", "inputs/legacy.gt.json")  # exit 1: ids the KB does not have
    loop.run("kb", "check")
    Path("inputs/merged.csv").write_text(
        "entity_id,label,description,inverse_entity_id\n"
        "X:1,regulates,,\nX:2,regulated by,,\nX:3,overlaps,,\nX:4,has part,,X:5\nX:5,part of,,\n"
    )
    Path("inputs/symmetric.csv").write_text("entity_id,label,note\nX:3,,\n")
    loop.run("kb", "derive", "--input", "inputs/merged.csv", "--output", "pairs.csv",
             "--symmetric", "inputs/symmetric.csv")  # fmt: skip
    loop.run("label-config", "-o", "relations.xml")
    loop.run("audit", "--sample", "sample", "--gold", "gold.lexical.json", "--out", "audit")
    loop.run("audit", "--sample", "inputs/sample", "--out", "audit-fixture")
    loop.run("stats", "--report-dir", "stats", "--corpus", DEMO_CORPUS, "--sample", "sample",
             "--gold", "gold.lexical.json")  # fmt: skip
    loop.run("stats", "--report-dir", "stats-fixture", "--sample", "inputs/sample",
             "--gold", "inputs/legacy.gt.json")  # fmt: skip


def test_offline_loop_outputs_are_as_recorded(offline: Loop) -> None:
    check_recorded("offline", offline.collect())


# What goldloop sets on a project (or will: instructions, issue #27), not what Label Studio keeps
# for itself (ids, counters, dates).
PROJECT_FIELDS = (
    "title", "description", "label_config", "expert_instruction", "show_instruction",
    "show_skip_button", "enable_empty_annotation", "maximum_annotations",
    "overlap_cohort_percentage", "model_version",
)  # fmt: skip
# Every project of the loop gets the KB's labeling config: recorded once, as a file of its own.
LABEL_CONFIG = "label-studio/label_config.xml"


def record_payloads(loop: Loop, client: Any, name: str, titles: list[str]) -> None:
    """The projects' settings and their tasks as Label Studio stores them: data and predictions
    (ids, dates and counters left out: Label Studio's, and different on every server)."""
    projects = {p.title: p for p in client.projects.list()}
    pushed = {}
    for title in titles:
        project = client.projects.get(id=projects[title].id)
        settings = {field: getattr(project, field, None) for field in PROJECT_FIELDS}
        config = loop.records.setdefault(LABEL_CONFIG, settings["label_config"])
        if settings["label_config"] == config:
            settings["label_config"] = LABEL_CONFIG
        pushed[title] = {
            "project": settings,
            "tasks": [
                {
                    "data": task.data,
                    "predictions": [
                        {"model_version": p.model_version, "score": p.score, "result": p.result}
                        for p in task.predictions
                    ],
                }
                for task in client.tasks.list(project=project.id, fields="all", page_size=100)
            ],
        }
    loop.records[f"label-studio/{name}.json"] = loop.normalise(
        json.dumps(pushed, indent=2, ensure_ascii=False) + "\n"
    )


def accept(client: Any, title: str, version: str, person: Any = None) -> None:
    """Someone (the admin by default) accepts the prediction ``version`` of every task of
    ``title`` as it is."""
    project = project_titled(client, title)
    who = {} if person is None else {"completed_by": person.id}
    for task in tasks_of(client, project.id).values():
        start = next(p for p in task.predictions if p.model_version == version)
        client.annotations.create(id=task.id, result=start.result, **who)


@pytest.mark.studio
def test_label_studio_loop_outputs_are_as_recorded(
    offline: Loop, root: Path, label_studio: Any
) -> None:
    cwd = Path.cwd()
    # The offline tags name the fake provider's address (gold.llm.json's annotator).
    loop = new_loop(root, "studio", {**offline.names, label_studio.url: masked(label_studio.url)})
    loop.env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    try:
        run_demo_loop(loop, label_studio.studio.sdk)
        run_fixture_loop(loop, label_studio.studio.sdk)
        run_campaign(loop, label_studio)
    finally:
        os.chdir(cwd)
    check_recorded("studio", loop.collect())


def run_demo_loop(loop: Loop, client: Any) -> None:
    """The offline sample with both pre-annotations: the admin accepts every pre-filled task, a
    second person the LLM's candidates of the double tasks; agree, curate, pull, score the
    pre-annotators on the verified gold; the judged sample pushed, labelled and reported.
    (``status`` and ``effort`` run on the campaign, whose annotations are timed.)"""
    offline = Path("..", "offline")
    loop.run("push", "--sample", offline / "sample", "--project", "recorded-demo",
             "--candidates", offline / "gold.lexical.json", "--other", offline / "gold.llm.json")  # fmt: skip
    record_payloads(loop, client, "demo", ["recorded-demo", "recorded-demo-double"])
    review = project_titled(client, "recorded-demo").model_version
    accept(client, "recorded-demo", review)
    accept(client, "recorded-demo-double", review)
    # A name the shared server has not seen in this session; masked in the records.
    email = f"demo-{uuid.uuid4().hex[:6]}@goldloop.local"
    loop.names[email] = masked(email)
    second = client.users.create(email=email, username=uuid.uuid4().hex[:10])
    llm = review.removeprefix("review:").split("+")[1]  # B's tag, the fake LLM's
    accept(client, "recorded-demo-double", llm, second)
    loop.run("agree", "--studio-project", "recorded-demo", "-o", "demo.agreement.json")
    loop.run("curate", "--project", "recorded-demo")
    record_payloads(loop, client, "demo-curate", ["recorded-demo-curate"])
    loop.run("pull", "--project", "recorded-demo", "--out", "demo.verified.json")
    loop.run("score", "--gold", "demo.verified.json", "--system", f"lexical={offline / 'gold.lexical.json'}",
             "--system", f"llm={offline / 'gold.llm.json'}", "--report-dir", "score-verified")  # fmt: skip
    loop.run("precision", "sample", "--verdicts", offline / "verdicts.jsonl", "--documents",
             offline / "sample", "-o", "to-label.jsonl", "--n", 12,
             "--studio-project", "recorded-precision")  # fmt: skip
    record_payloads(loop, client, "precision", ["recorded-precision"])
    precision = project_titled(client, "recorded-precision")
    for i, task in enumerate(client.tasks.list(project=precision.id, page_size=100)):
        verdict = {"choices": [("supported", "not found")[i % 2]]}
        result = {"from_name": "verdict", "to_name": "text", "type": "choices", "value": verdict}
        client.annotations.create(id=task.id, result=[result])
    loop.run("precision", "report", "--verdicts", offline / "verdicts.jsonl",
             "--studio-project", "recorded-precision", "-o", "precision.json")  # fmt: skip


def run_fixture_loop(loop: Loop, client: Any) -> None:
    """The fixture corpus (tests/studio/loop_data.py) and the loop test's people's work: accept,
    fix, delete, widen, add, skip, a second person on the double task; pull all, and one person's;
    score both candidates on Label Studio's export."""
    documents, gold_a, gold_b = write_inputs(Path(INPUTS, "loop"))
    loop.run("push", "--sample", documents, "--project", "recorded-loop", "--candidates", gold_a,
             "--other", gold_b)  # fmt: skip
    record_payloads(loop, client, "loop", ["recorded-loop", "recorded-loop-double"])
    _, _, second = people_work(client, "recorded-loop")
    loop.names[second] = masked(second)
    loop.run("pull", "--project", "recorded-loop", "--out", "loop.verified.json")
    loop.run("pull", "--project", "recorded-loop", "--out", "second.json", "--annotator", second,
             "--per-annotator")  # fmt: skip
    # Label Studio's export as gold: pull's mirror holds the tasks as the export API gave them.
    mirror = json.loads(Path("loop.verified.json.tasks.json").read_text(encoding="utf-8"))
    export = next(p["tasks"] for p in mirror["projects"] if p["title"] == "recorded-loop")
    Path(INPUTS, "loop-export.json").write_text(json.dumps(export), encoding="utf-8")
    loop.run("score", "--gold", Path(INPUTS, "loop-export.json"), "--system", f"a={gold_a}",
             "--system", f"b={gold_b}", "--report-dir", "score-export")  # fmt: skip


def run_campaign(loop: Loop, label_studio: Any) -> None:
    """The curation campaign (tests/studio/campaign_data.py): three people, the disputes curated
    but one, every annotation timed."""
    campaign = build(label_studio, shared_kb())
    loop.names |= {campaign.name: masked(campaign.name)}
    loop.names |= {campaign.email(p): masked(campaign.email(p)) for p in ("alice", "bob", "carol")}
    titles = [campaign.name, f"{campaign.name}-double", f"{campaign.name}-curate"]
    record_payloads(loop, label_studio.studio.sdk, "campaign", titles)
    loop.run("status", "--project", campaign.name, "-o", "campaign.status.json")
    loop.run("effort", "--project", campaign.name, "-o", "campaign.effort.json",
             "--png", "campaign.effort.png")  # fmt: skip
    loop.run("agree", "--studio-project", campaign.name, "-o", "campaign.agreement.json")
    loop.run("pull", "--project", campaign.name, "--out", "campaign.verified.json")
