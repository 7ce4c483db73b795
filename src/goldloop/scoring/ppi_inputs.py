"""The inputs of prediction-powered corpus figures besides the gold, read and checked.

Two files: the pre-annotation of the gold's own documents, and the surrogate part (documents
only the pre-annotator saw, each with its ``p_incl``, stratum and batch as the sampler wrote
them, its hits the pre-annotation). What ``scoring.ppi_corpus`` assumes is checked where a file
can show it: the pre-annotation covers exactly the gold's documents, the surrogate part's
documents are a surrogate part's (role ``surrogate``), carry ``p_incl`` and share the gold's
strata, a document in both parts has one text, and one pre-annotator made both files (the
hits' ``annotator`` tags).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from goldloop.errors import DesignRefused, GoldloopError
from goldloop.formats.documents import read_gold_documents
from goldloop.formats.gold import Document
from goldloop.formats.sampledir import SURROGATE_ROLE
from goldloop.kb import KB
from goldloop.scoring.design import Design, read_design


class SurrogateRefused(GoldloopError):
    """A surrogate part or pre-annotation cannot stand with the gold; the message says why,
    naming the file and document."""


@dataclass(frozen=True)
class SurrogateParts:
    """The pre-annotation of the gold's documents (in the gold's order) and the surrogate part:
    its documents (hits: the pre-annotation) and their design."""

    pre_annotated: list[Document]
    documents: list[Document]
    design: Design


def read_surrogate(
    surrogate: Path, pre_annotations: Path, gold: Sequence[Document], kb: KB | None
) -> SurrogateParts:
    """Both files read and checked against the ``gold`` (module docstring)."""
    pre = _ordered_like(read_gold_documents(pre_annotations, kb), gold, pre_annotations)
    part = read_gold_documents(surrogate, kb)
    if not part:
        raise SurrogateRefused(f"{surrogate}: holds no documents")
    texts = {d.doc_id: d.text for d in gold}
    for number, document in enumerate(part, 1):
        where = f"{surrogate}: document {number} ({document.doc_id!r})"
        if document.role != SURROGATE_ROLE:
            raise SurrogateRefused(
                f"{where} is not of a surrogate part (role {document.role!r}, not"
                f" {SURROGATE_ROLE!r})"
            )
        if document.p_incl is None:
            raise SurrogateRefused(f"{where} has no p_incl (its inclusion probability)")
        if texts.get(document.doc_id, document.text) != document.text:
            raise SurrogateRefused(f"{where} has another text than the gold's document of that id")
    strata = {d.stratum for d in gold}
    if not any(d.stratum in strata for d in part):
        raise SurrogateRefused(
            f"{surrogate}: none of its strata is the gold's: drawn from another pool"
        )
    _one_annotator(pre, pre_annotations, part, surrogate)
    try:
        design = read_design(part, source=surrogate)
    except DesignRefused as exc:
        raise SurrogateRefused(exc.message) from exc
    assert design is not None  # every document carries p_incl (checked above)
    return SurrogateParts(pre, part, design)


def _ordered_like(pre: list[Document], gold: Sequence[Document], path: Path) -> list[Document]:
    """``pre`` in the gold's order; it must hold each gold document once, and nothing else."""
    wanted = {d.doc_id for d in gold}
    by_id: dict[str, Document] = {}
    for number, document in enumerate(pre, 1):
        if document.doc_id not in wanted:
            raise SurrogateRefused(
                f"{path}: document {number} ({document.doc_id!r}) is not among the gold's"
            )
        by_id[document.doc_id] = document
    missing = [i for i, d in enumerate(gold, 1) if d.doc_id not in by_id]
    if missing:
        first = gold[missing[0] - 1].doc_id
        raise SurrogateRefused(
            f"{path}: no pre-annotation of the gold's document {missing[0]} ({first!r})"
            f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''}"
        )
    return [by_id[d.doc_id] for d in gold]


def _one_annotator(
    pre: Sequence[Document], pre_path: Path, part: Sequence[Document], part_path: Path
) -> None:
    """The same pre-annotator in both files: PPI corrects one annotator's error with the gold,
    not another's."""
    mine, theirs = _annotators(pre), _annotators(part)
    if mine and theirs and mine != theirs:
        raise SurrogateRefused(
            f"{pre_path} and {part_path} were pre-annotated by different annotators"
            f" ({', '.join(sorted(mine))} against {', '.join(sorted(theirs))})"
        )


def _annotators(documents: Sequence[Document]) -> set[str]:
    return {hit.annotator for d in documents for hit in d.ground_truth if hit.annotator}
