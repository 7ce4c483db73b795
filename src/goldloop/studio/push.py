"""``push``: documents as Label Studio tasks, candidates as predictions, idempotent on ``doc_id``.

Every task is imported with its predictions inline (the review prediction, after A's and B's own
when there is a B), in batches; Label Studio stores a batch in one transaction, so a task is
there with all its predictions or not at all. Each run first lists the project's ``doc_id``\\ s
and sends only what is missing, so a re-run after a crash, or with a new batch, never
duplicates. Every result is checked against the labeling config before anything is sent (Label
Studio stores invalid results silently). Documents of role ``double`` go to ``<NAME>-double``,
which asks for two annotations; documents of role ``blind`` go to ``<NAME>`` with their
predictions and to ``<NAME>-blind`` without any (the design: README, "What pre-annotation costs
and saves"). A project gets the annotators' instructions and a first Data
Manager tab that shows ``p_incl`` rounded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document, Hit, read_gold
from goldloop.formats.labelstudio.tasks import blind_name, check_campaign_name, double_name
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio
from goldloop.studio.label_config import (
    BLIND_INSTRUCTIONS,
    prediction_checker,
    render_instructions,
    render_label_config,
)
from goldloop.studio.review import Prediction, review_tag, task_predictions
from goldloop.text.parsing import Parsing

BATCH_SIZE = projects.BATCH_SIZE
DOUBLE_ROLE = "double"
BLIND_ROLE = "blind"
TASK_FIELDS = ("text", "doc_id", "role", "batch", "p_incl", "stratum")
# The Data Manager shows a task data key the labeling config does not read as it is stored
# (p_incl 0.012345679012345678); shown as a number it is rounded to three decimals, the stored
# value unchanged.
TASKS_VIEW, TASKS_VIEW_DISPLAY = "Tasks", {"tasks:data.p_incl": "Number"}


@dataclass
class Candidates:
    """One annotator's hits by ``doc_id``, and its tag (``model_version`` of its predictions)."""

    tag: str
    hits: dict[str, list[Hit]]
    not_in_kb: int = 0

    @classmethod
    def from_gold(cls, path: str | Path, kb: KB, tag: str | None = None) -> Candidates:
        """Read a gold file; the tag is the hits' ``annotator`` unless given."""
        gold = read_gold(path, kb)
        hits = {
            doc.doc_id: [h for h in doc.ground_truth if h.entity_id in kb] for doc in gold.documents
        }
        tags = Counter(
            h.annotator for doc in gold.documents for h in doc.ground_truth if h.annotator
        )
        if tag is None:
            if len(tags) != 1:
                found = ", ".join(sorted(tags)) or "none"
                raise GoldloopError(
                    f"{path}: cannot tell the annotator tag (annotators found: {found}); give it"
                )
            tag = next(iter(tags))
        return cls(tag, hits, sum(gold.stats.not_in_kb.values()))


@dataclass
class ProjectPush:
    """What one push did to one project."""

    title: str
    project_id: int
    documents: int = 0
    created: int = 0
    already_present: int = 0
    predictions_added_to_existing: int = 0
    predictions: int = 0
    model_version: str | None = None


@dataclass
class PushReport:
    projects: list[ProjectPush] = field(default_factory=list)
    roles: Counter[str] = field(default_factory=Counter)
    skipped_roles: Counter[str] = field(default_factory=Counter)
    candidates_not_in_kb: int = 0

    @property
    def created(self) -> int:
        return sum(p.created for p in self.projects)


def push(
    studio: Studio,
    documents: Sequence[Document],
    name: str,
    kb: KB,
    *,
    a: Candidates | None = None,
    b: Candidates | None = None,
    roles: Iterable[str] | None = None,
    batch_size: int = BATCH_SIZE,
    progress: projects.ProgressFn | None = None,
    parsing: Parsing = Parsing(),
) -> PushReport:
    """Push ``documents`` (of ``roles``, all when None; no role is kept) into ``name``,
    ``name-double`` and ``name-blind``; the label config's verb forms come from ``parsing``'s
    pipelines."""
    if b is not None and a is None:
        raise GoldloopError("a second annotator (B) needs a first (A)")
    check_campaign_name(name)
    repeated = [doc_id for doc_id, n in Counter(d.doc_id for d in documents).items() if n > 1]
    if repeated:
        raise GoldloopError(
            f"{len(repeated)} doc_id(s) repeat in the documents, first {repeated[0]!r}"
        )
    report = PushReport(candidates_not_in_kb=(a.not_in_kb if a else 0) + (b.not_in_kb if b else 0))
    by_project = route(documents, name, roles, report)
    config = render_label_config(kb, models=parsing.models)
    instructions = render_instructions()
    for title, docs in by_project.items():
        annotations = 2 if title == double_name(name) else 1
        blind = title == blind_name(name)
        project = projects.ensure_project(
            studio, title, config, annotations=annotations,
            instructions=render_instructions(BLIND_INSTRUCTIONS) + instructions if blind else instructions,
        )  # fmt: skip
        # The blind project shows no candidates: what people mark there is theirs alone.
        shown = (None, None) if blind else (a, b)
        report.projects.append(
            _push_project(studio, project, docs, kb, *shown, batch_size, progress)
        )
    return report


def route(
    documents: Sequence[Document],
    name: str,
    roles: Iterable[str] | None = None,
    report: PushReport | None = None,
) -> dict[str, list[Document]]:
    """The documents each project of campaign ``name`` gets: a blind document goes to two
    (``name`` with the candidates, ``name-blind`` without); documents of roles not in ``roles``
    go nowhere. ``report`` counts the roles pushed and skipped."""
    wanted = set(roles) if roles is not None else None
    counts = report if report is not None else PushReport()
    by_project: dict[str, list[Document]] = {}
    for doc in documents:
        role = doc.role or "none"
        if wanted is not None and doc.role is not None and role not in wanted:
            counts.skipped_roles[role] += 1
            continue
        counts.roles[role] += 1
        title = double_name(name) if doc.role == DOUBLE_ROLE else name
        by_project.setdefault(title, []).append(doc)
        if doc.role == BLIND_ROLE:
            by_project.setdefault(blind_name(name), []).append(doc)
    return by_project


def task_count(documents: Sequence[Document], name: str, roles: Iterable[str] | None = None) -> int:
    """How many tasks :func:`push` sends or finds (its progress counts each once): a blind
    document is two tasks, a skipped role none."""
    return sum(len(docs) for docs in route(documents, name, roles).values())


def build_tasks(
    documents: Sequence[Document], kb: KB, config: str, a: Candidates | None, b: Candidates | None
) -> list[dict[str, Any]]:
    """Task payloads with their predictions, every result checked against ``config``."""
    check = prediction_checker(config)
    tasks = []
    for doc in documents:
        predictions: list[Prediction] = []
        if a is not None:
            predictions = task_predictions(
                doc.text, a.hits.get(doc.doc_id, []), b.hits.get(doc.doc_id, []) if b else None,
                a.tag, b.tag if b else None, kb,
            )  # fmt: skip
        for prediction in predictions:
            check.require(f"document {doc.doc_id!r}", prediction)
        data = {key: getattr(doc, key) for key in TASK_FIELDS}
        tasks.append({"data": data, "predictions": predictions})
    return tasks


def _push_project(
    studio: Studio,
    project: projects.Project,
    documents: list[Document],
    kb: KB,
    a: Candidates | None,
    b: Candidates | None,
    batch_size: int,
    progress: projects.ProgressFn | None,
) -> ProjectPush:
    done = ProjectPush(project.title, project.id, documents=len(documents))
    tag = review_tag(a.tag, b.tag if b else None) if a else None
    existing = projects.existing_tasks(studio, project)
    missing = [doc for doc in documents if doc.doc_id not in existing]
    done.already_present = len(documents) - len(missing)
    tasks = build_tasks(missing, kb, project.label_config, a, b)
    done.created = projects.import_tasks(
        studio, project, tasks, batch_size=batch_size, progress=progress
    )
    projects.ensure_view(studio, project, TASKS_VIEW, TASKS_VIEW_DISPLAY)
    done.predictions = sum(len(t["predictions"]) for t in tasks)
    if tag is not None:
        stale = [
            doc
            for doc in documents
            if doc.doc_id in existing and tag not in existing[doc.doc_id].model_versions
        ]
        done.predictions_added_to_existing = _add_predictions(
            studio, project, stale, existing, kb, a, b
        )
        if progress and done.already_present:
            progress(done.already_present)
        if done.created or done.predictions_added_to_existing or project.model_version != tag:
            projects.set_model_version(studio, project, tag)
        done.model_version = tag
    elif progress and done.already_present:
        progress(done.already_present)
    return done


def _add_predictions(
    studio: Studio,
    project: projects.Project,
    documents: list[Document],
    existing: dict[str, projects.ExistingTask],
    kb: KB,
    a: Candidates | None,
    b: Candidates | None,
) -> int:
    """Tasks pushed before without the current review tag get this push's predictions."""
    if not documents:
        return 0
    rows = []
    for doc, task in zip(
        documents, build_tasks(documents, kb, project.label_config, a, b), strict=True
    ):
        have = existing[doc.doc_id].model_versions
        rows += [
            {"task": existing[doc.doc_id].id, **p}
            for p in task["predictions"]
            if p["model_version"] not in have
        ]
    projects.add_predictions(studio, project, rows)
    return len(rows)
