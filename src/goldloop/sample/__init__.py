"""Sampling documents for gold: corpus reading, eligibility gate, mention pool, strata, batches.

``read_documents`` is :func:`goldloop.formats.documents.read_documents`, the one documents reader (a
sample dir, a documents JSONL or a gold file) for every command that takes documents.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldloop.formats.documents import read_documents
    from goldloop.formats.sampledir import ManifestRow, SampleDirError, read_manifest

__all__ = ["ManifestRow", "SampleDirError", "read_documents", "read_manifest"]

# Re-exported when first asked for: importing a submodule (the CLI's help reads
# ``goldloop.sample.strata.ROLES``) does not import the documents readers.
_HOMES = {
    "ManifestRow": "goldloop.formats.sampledir",
    "SampleDirError": "goldloop.formats.sampledir",
    "read_manifest": "goldloop.formats.sampledir",
    "read_documents": "goldloop.formats.documents",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
