"""The names of the labeling config's controls, as regions of an export carry them, and the
relation control's value.

``goldloop.studio.label_config`` generates the config from these names (and re-exports them);
reading a region needs only the names, so they live below the workflow.
"""

from __future__ import annotations

from typing import Any

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


def relation_value(label: str) -> dict[str, Any]:
    """The region value that picks ``label`` in the relation control."""
    return {RELATION_TYPE: [[label]]}


def read_relation(value: dict[str, Any]) -> str | None:
    """The label picked in a relation region value, or None when nothing is picked."""
    paths = value.get(RELATION_TYPE) or []
    return str(paths[0][-1]) if paths and paths[0] else None
