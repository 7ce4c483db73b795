"""The Label Studio labeling config, generated from the KB, and the names of its controls.

The template (``relations.template.xml``, bundled, linked from ``label_config/``) holds the layout;
the KB fills in the relation picker: one choice per canonical relation, its label as value and
its description as hint. Region values carry canonical labels, never ids.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from goldloop.errors import GoldloopError
from goldloop.kb import KB

if TYPE_CHECKING:
    from label_studio_sdk.label_interface import LabelInterface

TEMPLATE = Path(str(files("goldloop") / "data" / "label_config" / "relations.template.xml"))
MARKER = "{relation_choices}"
OBJECT = "text"
SPAN = "mention"
SPAN_LABEL = "Predicate"
RELATION = "relation"
DIRECTION = "direction"
NOTE = "note"
# The relation picker is a Taxonomy: Label Studio 1.23 renders it with a search box per region
# (label_config/README.md records the browser check); its value is a list of paths.
RELATION_TYPE = "taxonomy"
CONTROLS = {SPAN: "labels", RELATION: RELATION_TYPE, DIRECTION: "choices", NOTE: "textarea"}
_HINT_CHARS = 300


class LabelConfigError(GoldloopError):
    """A project's labeling config lacks a control goldloop needs."""


def render_label_config(kb: KB, template: Path = TEMPLATE) -> str:
    """The labeling config for ``kb``: the template with one choice per canonical relation."""
    relations = sorted(kb.canonical_relations(), key=lambda r: r.label.casefold())
    choices = "\n".join(
        f"      <Choice value={quoteattr(r.label)}{_hint(r.description)}/>" for r in relations
    )
    return template.read_text(encoding="utf-8").replace(MARKER, choices)


def relation_value(label: str) -> dict[str, Any]:
    """The region value that picks ``label`` in the relation control."""
    return {RELATION_TYPE: [[label]]}


def read_relation(value: dict[str, Any]) -> str | None:
    """The label picked in a relation region value, or None when nothing is picked."""
    paths = value.get(RELATION_TYPE) or []
    return str(paths[0][-1]) if paths and paths[0] else None


def check_label_config(config: str, where: str) -> None:
    """Raise when ``config`` lacks one of goldloop's controls (name and tag type)."""
    found = {control.name: control.tag.lower() for control in _interface(config).controls or ()}
    missing = [f"{name} ({tag})" for name, tag in CONTROLS.items() if found.get(name) != tag]
    if missing:
        raise LabelConfigError(
            f"{where}: its labeling config lacks {', '.join(missing)}; "
            "regenerate it with `goldloop label-config` or use another project name"
        )


@lru_cache(maxsize=8)
def _interface(config: str) -> LabelInterface:
    from label_studio_sdk.label_interface import LabelInterface

    return LabelInterface(config)


def label_interface(config: str) -> LabelInterface:
    """The parsed config (cached): used to validate every result before it is sent."""
    return _interface(config)


def prediction_errors(interface: LabelInterface, prediction: dict[str, Any]) -> list[str]:
    """Why ``prediction`` does not fit ``interface``'s config ([] when it fits): remembered per
    interface and prediction, as a cache hit sends the same prediction again."""
    return list(_prediction_errors(interface, json.dumps(prediction, sort_keys=True)))


# Keyed by the interface object (kept alive as the key, so its identity is never reused), not by
# the ~50 kB config text a request brings: 512 such texts would be held otherwise.
@lru_cache(maxsize=512)
def _prediction_errors(interface: LabelInterface, prediction: str) -> tuple[str, ...]:
    errors = interface.validate_prediction(json.loads(prediction), return_errors=True)
    return tuple(str(error) for error in errors)


def _hint(description: str | None) -> str:
    text = " ".join((description or "").split())
    if not text:
        return ""
    if len(text) > _HINT_CHARS:
        text = text[: _HINT_CHARS - 1].rstrip() + "…"
    return f" hint={quoteattr(text)}"
