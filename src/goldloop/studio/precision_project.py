"""The precision sample as a Label Studio project, and its labels pulled back.

One task per sampled mention: the abstract with the mention pre-highlighted (a prediction whose
model version the project pre-fills from) and the claim as a header; the annotator picks
supported, contradicted or not found. Label Studio is reached through the project layer
(``goldloop.studio.project``) with the door's ``Studio``, as push and pull do:
pushing imports each mention key exactly once, even across a crash mid-import; pulling takes
each task's earliest completed annotation (``goldloop.formats.labelstudio.tasks``) and counts the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from goldloop.formats.labelstudio.offsets import to_label_studio
from goldloop.formats.labelstudio.studio_error import StudioError
from goldloop.formats.labelstudio.tasks import Task, cancelled_annotations, completed_annotations
from goldloop.llm.tasks.judge import CLOSE, OPEN
from goldloop.precision.mentions import LABELS, Label
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio

MODEL_VERSION = "precision-sample"
SPAN, VERDICT, NOTE = "mention", "verdict", "note"
CHOICES = {label: label.replace("_", " ") for label in LABELS}
KEY = "key"

LABEL_CONFIG = f"""<View>
  <Header value="$claim"/>
  <Text name="text" value="$text"/>
  <Labels name={quoteattr(SPAN)} toName="text">
    <Label value="Mention" background="#FFD54F"/>
  </Labels>
  <Choices name={quoteattr(VERDICT)} toName="text" choice="single-radio" required="true" showInline="true">
{"".join(f"    <Choice value={quoteattr(v)}/>{chr(10)}" for v in CHOICES.values())}  </Choices>
  <TextArea name={quoteattr(NOTE)} toName="text" placeholder="note (optional)" maxSubmissions="1"/>
</View>
"""


def claim(row: dict[str, Any]) -> str:
    direction = f", {row['direction']}" if row.get("direction") else ""
    return f"Does {OPEN}{row['surface']}{CLOSE} state “{row['relation']}”{direction}?"


def task_of(row: dict[str, Any], text: str) -> dict[str, Any]:
    """The task for one row to label (from ``precision sample``), mention pre-highlighted."""
    start, end = to_label_studio(text, int(row["a"]), int(row["b"]))
    region = {
        "id": "mention",
        "from_name": SPAN,
        "to_name": "text",
        "type": "labels",
        "value": {"start": start, "end": end, "text": row["surface"], "labels": ["Mention"]},
    }
    return {
        "data": {"text": text, "claim": claim(row), "key": row["key"], "doc_id": row["doc_id"]},
        "predictions": [{"model_version": MODEL_VERSION, "result": [region]}],
    }


@dataclass(frozen=True)
class PushSummary:
    project_id: int
    imported: int
    already_there: int


def push_sample(
    studio: Studio,
    title: str,
    rows: Sequence[dict[str, Any]],
    texts: dict[str, str],
    *,
    batch_size: int = projects.BATCH_SIZE,
    progress: projects.ProgressFn | None = None,
) -> PushSummary:
    """Create or reuse the project ``title`` and import the rows it does not hold yet."""
    project = projects.ensure_project(studio, title, LABEL_CONFIG, check=_check_precision_config)
    present = projects.existing_tasks(studio, project, KEY)
    new = [task_of(row, texts[row["doc_id"]]) for row in rows if row["key"] not in present]
    projects.import_tasks(studio, project, new, key=KEY, batch_size=batch_size, progress=progress)
    if new:
        projects.set_model_version(studio, project, MODEL_VERSION)
    return PushSummary(project.id, len(new), len(rows) - len(new))


@dataclass
class PulledLabels:
    labels: list[Label]
    tasks: int = 0
    unlabelled: int = 0
    cancelled: int = 0
    extra_annotations: int = 0

    @property
    def labelled(self) -> int:
        return sum(label.label is not None for label in self.labels)


def pull_labels(studio: Studio, title: str) -> PulledLabels:
    """Every task's label: its earliest completed annotation's verdict (None when unlabelled)."""
    project = projects.find_project(studio, title, check=_check_precision_config)
    if project is None:
        raise StudioError(f"{studio.connection.url}: no Label Studio project titled {title!r}")
    return read_labels_from_tasks(projects.export_project(studio, project), title)


def read_labels_from_tasks(tasks: Sequence[Task], title: str) -> PulledLabels:
    """Labels from exported precision tasks (``title`` names the project in errors)."""
    pulled = PulledLabels([])
    by_choice = {choice: label for label, choice in CHOICES.items()}
    for task in sorted(tasks, key=lambda t: int(t["id"])):
        key = (task.get("data") or {}).get("key")
        if not isinstance(key, str):
            raise StudioError(
                f"Label Studio project {title!r}: task {task['id']} has no mention key"
            )
        pulled.tasks += 1
        done = completed_annotations(task)
        pulled.cancelled += len(cancelled_annotations(task))
        pulled.extra_annotations += max(0, len(done) - 1)
        label = None
        if done:
            for item in done[0].get("result") or []:
                if item.get("from_name") == VERDICT:
                    choices = (item.get("value") or {}).get("choices") or []
                    label = by_choice.get(choices[0]) if choices else None
                    if choices and label is None:
                        raise StudioError(
                            f"Label Studio project {title!r}: task {task['id']}: "
                            f"unknown choice {choices[0]!r}"
                        )
        pulled.unlabelled += label is None
        pulled.labels.append(Label(key, label))
    return pulled


def _check_precision_config(config: str, where: str) -> None:
    if f'name="{VERDICT}"' not in config:
        raise StudioError(f"{where} is not a precision project (no {VERDICT!r} choice)")
