"""Sampling documents for gold: corpus reading, eligibility gate, mention pool, strata, batches.

``read_documents`` is the one reader of a sample dir (or a plain documents JSONL) for every
command that takes ``--sample``.
"""

from goldloop.sample.sampledir import ManifestRow, SampleDirError, read_documents, read_manifest

__all__ = ["ManifestRow", "SampleDirError", "read_documents", "read_manifest"]
