"""Sampling documents for gold: corpus reading, eligibility gate, mention pool, strata, batches.

``read_documents`` is :func:`goldloop.formats.documents.read_documents`, the one documents reader (a
sample dir, a documents JSONL or a gold file) for every command that takes documents.
"""

from goldloop.formats.documents import read_documents
from goldloop.formats.sampledir import ManifestRow, SampleDirError, read_manifest

__all__ = ["ManifestRow", "SampleDirError", "read_documents", "read_manifest"]
