"""Verified gold from exported Label Studio tasks, under the name the README documents (code in
:mod:`goldloop.formats.labelstudio.verify`)."""

from goldloop.formats.labelstudio.verify import (
    COUNTS,
    DECIDED,
    DOUBLE_ROLE,
    KEPT,
    SLICES,
    Chosen,
    PullResult,
    Tally,
    annotator_versions,
    annotators,
    read_annotation,
    summary_rows,
    verify,
)

__all__ = [
    "COUNTS",
    "DECIDED",
    "DOUBLE_ROLE",
    "KEPT",
    "SLICES",
    "Chosen",
    "PullResult",
    "Tally",
    "annotator_versions",
    "annotators",
    "read_annotation",
    "summary_rows",
    "verify",
]
