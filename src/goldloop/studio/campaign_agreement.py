"""Agreement from the ``<NAME>-double`` project's export: the first two annotators per task,
each person against the pre-annotation shown, and the curator against each person.

Each annotation is turned into hits by pull's own reading (``goldloop.formats.labelstudio.verify.verify``), so
the two annotators' documents are exactly what pull would make of each; then
``goldloop.scoring.agreement`` compares them. Tasks with fewer than two completed annotations are not
compared and are counted, as are annotations beyond the second; a task one person annotated twice
is refused (``goldloop.formats.labelstudio.tasks.two_annotators``). Pure: the door exports the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from goldloop.errors import DesignRefused
from goldloop.formats.gold import Document, Hit
from goldloop.formats.labelstudio.tasks import (
    Annotation,
    Campaign,
    Task,
    annotator_of,
    blind_pair,
    by_doc_id,
    completed_annotations,
    doc_id_of,
    review_seen,
    text_of,
    two_annotators,
)
from goldloop.formats.labelstudio.verify import (
    drawn_documents,
    prediction_hits,
    read_annotation,
    shown_hits,
    verify,
)
from goldloop.kb import KB
from goldloop.scoring.agreement import AgreementReport, agreement, shared_corpus_agreement
from goldloop.scoring.completeness import Completeness, estimate_completeness
from goldloop.scoring.design import CorpusFigures, Design, part_design, read_design
from goldloop.studio.review import review_tag


@dataclass(frozen=True)
class DoubleTasks:
    project: str
    tasks: int
    compared: int
    fewer_than_two: int
    extra_annotations: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "tasks": self.tasks,
            "compared_tasks": self.compared,
            "tasks_with_fewer_than_two_annotations": self.fewer_than_two,
            "annotations_beyond_the_second": self.extra_annotations,
        }


def split_annotations(tasks: Sequence[Task], where: str) -> tuple[list[Task], list[Task], int, int]:
    """Task copies holding only the first / only the second annotator's completed annotation."""
    first: list[Task] = []
    second: list[Task] = []
    fewer = extra = 0
    for task in tasks:
        pair = two_annotators(task, where)
        if pair is None:
            fewer += 1
            continue
        extra += len(completed_annotations(task)) - 2
        first.append({**task, "annotations": [pair[0]]})
        second.append({**task, "annotations": [pair[1]]})
    return first, second, fewer, extra


def double_versions(
    tasks: Sequence[Task], kb: KB, where: str
) -> tuple[list[Document], list[Document], DoubleTasks]:
    """The first and the second annotator's documents over exported double tasks, as pull reads
    each annotation (``where`` names the project in errors)."""
    first, second, fewer, extra = split_annotations(tasks, where)
    return (
        verify(first, kb).documents,
        verify(second, kb).documents,
        DoubleTasks(where, len(tasks), len(first), fewer, extra),
    )


def campaign_design(campaign: Campaign, doc_ids: Sequence[str], mode: str = "use") -> Design | None:
    """The design of the double documents ``doc_ids`` (in that order): a random part of each
    batch of the campaign's draw, every task pushed to ``NAME`` and ``NAME-double`` (annotated
    or not, with the design its data carries), so each weighs by that draw's batch shares
    (:func:`~goldloop.scoring.design.part_design`), not by the double documents' own. ``None``
    when the draw carries no ``p_incl``; one that mixes is refused (``DesignRefused``) unless
    ``mode`` is ``ignore``: equal weights."""
    drawn = drawn_documents(campaign.of("primary") + campaign.of("double"))
    if mode == "use":
        return part_design(drawn, doc_ids, f"campaign {campaign.name!r}")
    by_id = {d.doc_id: d for d in drawn}
    return read_design([by_id[doc_id] for doc_id in doc_ids], mode)


def shared_design(
    first: Sequence[Document], second: Sequence[Document], campaign: Campaign
) -> tuple[list[Document], Design | None]:
    """The documents both annotated (in ``first``'s order) and their design in ``campaign``
    (:func:`campaign_design`): none without ``p_incl``, nor when only some tasks carry it (the
    sidecar has no option to ignore it)."""
    ids = {d.doc_id for d in second}
    shared = [d for d in first if d.doc_id in ids]
    try:
        return shared, campaign_design(campaign, [d.doc_id for d in shared])
    except DesignRefused:
        return shared, None


def double_completeness(
    first: Sequence[Document], second: Sequence[Document], campaign: Campaign
) -> Completeness:
    """Capture–recapture over the documents both annotated (each one's spans), with corpus
    figures when the campaign's tasks carry the design (:func:`shared_design`)."""
    spans = {d.doc_id: {(h.a, h.b) for h in d.ground_truth} for d in second}
    shared, design = shared_design(first, second, campaign)
    return estimate_completeness(
        [({(h.a, h.b) for h in d.ground_truth}, spans[d.doc_id]) for d in shared],
        design=design,
    )


@dataclass
class RoleAgreements:
    """Per person: agreement with the pre-annotation shown (A: the pre-annotation, B: the
    person) and with the curator of their curated tasks (A: the curator, B: the person)."""

    person_pre_annotation: dict[str, AgreementReport]
    curator_person: dict[str, AgreementReport]
    curators: list[str]
    # With two pre-annotators: per person, each pre-annotator's own version (by tag) against
    # the person, over the tasks whose review prediction combined them.
    person_pre_annotator: dict[str, dict[str, AgreementReport]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "person_pre_annotation": {
                who: r.to_dict() for who, r in sorted(self.person_pre_annotation.items())
            },
            "curator_person": {who: r.to_dict() for who, r in sorted(self.curator_person.items())},
            "curators": self.curators,
            "person_pre_annotator": {
                who: {tag: r.to_dict() for tag, r in sorted(by_tag.items())}
                for who, by_tag in sorted(self.person_pre_annotator.items())
            },
        }


def role_agreements(
    tasks: Sequence[Task], curated: Sequence[Task], kb: KB, where: str
) -> RoleAgreements:
    """Each person's completed annotations (their first per task) of the double tasks against
    the review prediction each was made over; on the tasks a curator settled (the first
    completed annotation of the task's ``curated`` copy), the curator against each of the
    task's two annotators."""
    shown: dict[str, tuple[list[Document], list[Document]]] = {}
    each: dict[tuple[str, str], tuple[list[Document], list[Document]]] = {}
    settled: dict[str, tuple[list[Document], list[Document]]] = {}
    curators: set[str] = set()
    curations = by_doc_id(curated)
    for task in sorted(tasks, key=lambda t: int(t["id"])):
        people: dict[str, Annotation] = {}
        for annotation in completed_annotations(task):
            people.setdefault(annotator_of(annotation), annotation)
        for person, annotation in people.items():
            before = shown_hits(task, annotation, kb)
            if before is None:
                continue
            mine = _document(task, read_annotation(task, annotation, kb)[1])
            pair = shown.setdefault(person, ([], []))
            pair[0].append(_document(task, before))
            pair[1].append(mine)
            for tag, prediction in _pre_annotators(task, annotation):
                pair = each.setdefault((person, tag), ([], []))
                pair[0].append(_document(task, prediction_hits(task, prediction, kb)))
                pair[1].append(mine)
        both = two_annotators(task, where)
        curation = curations.get(doc_id_of(task))
        done = completed_annotations(curation) if curation is not None else []
        if both is None or not done:
            continue
        curators.add(annotator_of(done[0]))
        # Read as pull reads a curated document: the curator's annotation on the double task.
        curator_hits = read_annotation(task, done[0], kb)[1]
        for annotation in both:
            pair = settled.setdefault(annotator_of(annotation), ([], []))
            pair[0].append(_document(task, curator_hits))
            pair[1].append(_document(task, read_annotation(task, annotation, kb)[1]))
    return RoleAgreements(
        person_pre_annotation={who: agreement(*pair, kb) for who, pair in shown.items()},
        curator_person={who: agreement(*pair, kb) for who, pair in settled.items()},
        curators=sorted(curators),
        person_pre_annotator=_by_person({key: agreement(*pair, kb) for key, pair in each.items()}),
    )


@dataclass(frozen=True)
class BlindAgreement:
    """The blind documents' two annotations compared: A the one with the candidates (``NAME``),
    B the one without (``NAME-blind``); ``None`` until some blind document is paired."""

    project: str
    blind_documents: int
    paired: int
    report: AgreementReport | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "blind_documents": self.blind_documents,
            "paired_documents": self.paired,
            "agreement": None if self.report is None else self.report.to_dict(),
        }


def blind_agreement(
    pre_tasks: Sequence[Task], blind_tasks: Sequence[Task], kb: KB, where: str
) -> BlindAgreement:
    """Agreement between the conditions over the blind documents two different people annotated
    (``blind_pair``'s rule, as ``effect`` pairs them), each annotation read as pull reads it;
    ``pre_tasks`` are ``NAME``'s, ``where`` names ``NAME-blind``."""
    main = by_doc_id(pre_tasks)
    pre: list[Document] = []
    blind: list[Document] = []
    for task in sorted(blind_tasks, key=lambda t: int(t["id"])):
        pair = blind_pair(main.get(doc_id_of(task)), task)
        if pair is None:
            continue
        pre.append(_document(pair.pre_task, read_annotation(pair.pre_task, pair.pre, kb)[1]))
        blind.append(
            _document(pair.blind_task, read_annotation(pair.blind_task, pair.blind, kb)[1])
        )
    report = agreement(pre, blind, kb) if pre else None
    return BlindAgreement(where, len(blind_tasks), len(pre), report)


def _pre_annotators(task: Task, annotation: Annotation) -> list[tuple[str, dict[str, Any]]]:
    """The two pre-annotators' own predictions whose review ``annotation`` was made over, by
    tag (none when that review had one pre-annotator: it is then that one's version)."""
    review = review_seen(task, annotation)
    if review is None:
        return []
    own = {str(p.get("model_version")): p for p in task.get("predictions") or []}
    for tag_a, first in own.items():
        for tag_b, second in own.items():
            if tag_a != tag_b and review_tag(tag_a, tag_b) == review.get("model_version"):
                return [(tag_a, first), (tag_b, second)]
    return []


def _by_person(
    reports: dict[tuple[str, str], AgreementReport],
) -> dict[str, dict[str, AgreementReport]]:
    out: dict[str, dict[str, AgreementReport]] = {}
    for (person, tag), report in reports.items():
        out.setdefault(person, {})[tag] = report
    return out


def _document(task: Task, hits: list[Hit]) -> Document:
    return Document(doc_id=doc_id_of(task), text=text_of(task), ground_truth=hits)


@dataclass(frozen=True)
class CampaignAgreement:
    """What ``agree --studio-project`` reports: the two annotations per double task compared,
    who agrees with whom, the blind documents' two conditions (``None`` without a blind
    project's tasks), and the corpus figures (``None`` when the tasks carry no design)."""

    report: AgreementReport
    double: DoubleTasks
    roles: RoleAgreements
    blind: BlindAgreement | None
    corpus: CorpusFigures | None

    def to_dict(self) -> dict[str, Any]:
        data = {**self.report.to_dict(), "label_studio": self.double.to_dict()}
        data |= self.roles.to_dict()
        if self.blind is not None:
            data["blind_vs_pre_annotated"] = self.blind.to_dict()
        data["corpus"] = None if self.corpus is None else self.corpus.to_dict()
        return data


def campaign_agreement(
    campaign: Campaign, kb: KB, *, design: str = "use", bootstrap: int = 0, seed: int = 0
) -> CampaignAgreement:
    """Agreement over ``campaign``'s double tasks (its ``double`` project exported), each
    person's against the pre-annotation and the curator, the blind documents' conditions, and
    the corpus figures weighed by :func:`campaign_design` (``design``: its mode)."""
    where = campaign.titles["double"]
    documents, others, double = double_versions(campaign.of("double"), kb, where)
    report = agreement(documents, others, kb)
    roles = role_agreements(campaign.of("double"), campaign.of("curate"), kb, where)
    blind = None
    if campaign.of("blind"):
        blind = blind_agreement(
            campaign.of("primary"), campaign.of("blind"), kb, campaign.titles["blind"]
        )
    corpus = shared_corpus_agreement(
        report,
        documents,
        others,
        kb,
        lambda shared: campaign_design(campaign, [d.doc_id for d in shared], design),
        bootstrap,
        seed,
    )
    return CampaignAgreement(report, double, roles, blind, corpus)
