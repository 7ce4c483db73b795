"""The whole loop on the bundled demo corpus: sample, pre-annotate, start Label Studio, push, check.

Work files live in ``<workdir>/demo`` (the sample dir and the pre-annotation); the embedded
Label Studio keeps its own under ``<workdir>/studio``. Re-running reuses the sample and pushes
only what is missing. The pre-annotator is an LLM when a provider key is set, else the offline
``lexical`` one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from goldloop.files.atomic import atomic_write_json
from goldloop.files.beside import report_path
from goldloop.formats.gold import Document, write_gold
from goldloop.formats.labelstudio.tasks import Task, doc_id_of, double_name
from goldloop.kb import KB
from goldloop.llm import annotator_from_env, make_annotator
from goldloop.llm.annotate import annotate_documents, select_documents
from goldloop.sample import read_documents
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.run import run_sample
from goldloop.settings import Settings
from goldloop.studio import server
from goldloop.studio.connection import Connection, connect
from goldloop.studio.project import export_project, find_project
from goldloop.studio.push import Candidates, PushReport, push
from goldloop.studio.review import build_review_prediction, review_tag
from goldloop.text.parsing import Parsing

DEMO_CORPUS = Path(str(files("goldloop") / "data" / "demo" / "corpus.tsv"))
PROJECT = "goldloop-demo"
ROLES = ("primary", "double")
# Small batches: the demo corpus holds 31 documents, 26 of them eligible.
SETTINGS = SampleSettings(n_primary=8, n_double=4, n_reserve=4, tail_top_k=10)


@dataclass
class DemoRun:
    sample_dir: Path
    gold_path: Path
    annotator: str
    documents: list[Document]
    candidates: Candidates
    state: server.ServerState
    push: PushReport
    problems: list[str] = field(default_factory=list)


def demo_dir(settings: Settings) -> Path:
    return settings.home / "demo"


def pick_annotator(kb: KB, settings: Settings) -> Any:
    """The pre-annotator ``settings`` (what the door read) name, as for the ML backend
    (``GOLDLOOP_PROVIDER``, ``GOLDLOOP_MODEL``, ...): with nothing named, the provider whose key
    is set (its default model), else the offline ``lexical`` one."""
    return make_annotator(
        annotator_from_env(settings.environ), kb, cache=settings.cache, settings=settings
    )


def run_demo(
    kb: KB,
    annotator: Any,
    *,
    settings: Settings,
    home: Path | None = None,
    studio_home: Path | None = None,
) -> DemoRun:
    """Sample (once), pre-annotate, start the embedded Label Studio and push into ``goldloop-demo``
    (in ``home`` and ``studio_home``, by default under the settings' working directory)."""
    base = home or demo_dir(settings)
    parsing = Parsing.from_settings(settings)
    sample_dir = base / "sample"
    if not (sample_dir / "manifest.csv").is_file():
        run_sample(DEMO_CORPUS, sample_dir, kb, SETTINGS, parsing=parsing)
    documents = select_documents(read_documents(sample_dir), ROLES, None)
    gold_path = base / f"gold.{annotator.name}.json"
    annotated = annotate_documents(documents, annotator, kb, parsing=parsing)
    write_gold(gold_path, annotated.documents)
    atomic_write_json(report_path(gold_path), annotated.report.to_dict())
    candidates = Candidates(annotator.tag, {d.doc_id: d.ground_truth for d in annotated.documents})
    state = server.start(studio_home or server.studio_home(settings), settings=settings)
    studio = connect(Connection(state.url, state.token))
    report = push(studio, documents, PROJECT, kb, a=candidates, parsing=parsing)
    return DemoRun(sample_dir, gold_path, annotator.tag, documents, candidates, state, report)


def check_pushed(run: DemoRun, kb: KB) -> list[str]:
    """What is wrong with the pushed projects (empty when every task is there and pre-filled)."""
    studio = connect(Connection(run.state.url, run.state.token))
    problems: list[str] = []
    wanted = {d.doc_id: d for d in run.documents}
    seen: dict[str, Task] = {}
    review = review_tag(run.annotator)
    for title in (PROJECT, double_name(PROJECT)):
        project = find_project(studio, title)
        if project is None:
            problems.append(f"project {title!r} is missing")
            continue
        if project.model_version != review:
            problems.append(
                f"project {title!r} pre-fills from {project.model_version!r}, not {review!r}"
            )
        for exported in export_project(studio, project):
            doc_id = doc_id_of(exported)
            if doc_id in seen:
                problems.append(f"{doc_id}: pushed twice")
            seen[doc_id] = exported
    for doc_id, doc in wanted.items():
        task = seen.get(doc_id)
        if task is None:
            problems.append(f"{doc_id}: no task")
            continue
        hits = run.candidates.hits.get(doc_id, [])
        # One pre-annotator: push sends the review prediction alone.
        expected = build_review_prediction(doc.text, hits, None, run.annotator, None, kb)["result"]
        stored = {p["model_version"]: p["result"] for p in task.get("predictions") or []}
        if stored != {review: expected}:
            problems.append(f"{doc_id}: its predictions differ from what was pushed")
    problems += [f"{doc_id}: not in the sample" for doc_id in seen.keys() - wanted.keys()]
    return problems


def next_commands(run: DemoRun, program: str = "goldloop") -> list[str]:
    """Logins for the annotators, then what to run once people have annotated: status, curation
    of the double tasks, pull, effort, score, and stopping Label Studio; every report goes beside
    the demo's work files, never into the current folder. ``program`` is how the user runs
    goldloop (``.venv/bin/goldloop`` when it is not on the PATH), so each line runs as printed."""
    here = run.sample_dir.parent
    gold = here / "gold.verified.json"
    system = run.annotator.split("@")[0]
    return [
        f"{program} studio users alice@example.org bob@example.org   # a login per annotator "
        "(a double task needs two people)",
        f"{program} status --project {PROJECT} -o {here / PROJECT}.status.json",
        f"{program} curate --project {PROJECT}   # once two people annotated {double_name(PROJECT)}",
        f"{program} pull --project {PROJECT} --out {gold}",
        f"{program} effort --project {PROJECT} -o {here / PROJECT}.effort.json "
        f"--png {here / PROJECT}.effort.png",
        f"{program} score --gold {gold} --system {system}={run.gold_path} "
        f"--report-dir {here / 'score-report'}",
        f"{program} studio stop",
    ]
