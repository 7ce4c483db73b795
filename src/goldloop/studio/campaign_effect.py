"""The blind documents of a campaign, paired for ``goldloop effect`` (pure: exported tasks in).

A blind document has a task in ``NAME`` (with the pre-annotator's candidates) and one in
``NAME-blind`` (without). It is paired when two different people completed one each and its
final gold is settled from both (agreed, or curated: pull's rule, ``formats.labelstudio.verify``);
documents still waiting for a second annotation or for curation, or done twice by one person,
are counted and left out. The pairs weigh as a random part of each batch of the campaign's draw
(``studio.campaign_agreement.campaign_design``, as ``agree`` weighs its double documents). Minutes are effort's (``studio.effort``: ``lead_time``, capped).
The figures themselves are :mod:`goldloop.scoring.effect`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from goldloop.formats.labelstudio.studio_error import StudioError
from goldloop.formats.labelstudio.tasks import (
    Campaign,
    annotator_of,
    blind_name,
    blind_pair,
    by_doc_id,
    completed_annotations,
    doc_id_of,
)
from goldloop.formats.labelstudio.verify import read_annotation, shown_hits
from goldloop.kb import KB
from goldloop.scoring.effect import EffectReport, PairedDocument, effect_report
from goldloop.studio.campaign import verified_gold
from goldloop.studio.campaign_agreement import campaign_design
from goldloop.studio.effort import IDLE_CAP_MINUTES, effort_rows


class NoBlindDocuments(StudioError):
    """The campaign has no blind documents, or none paired yet: there is nothing to compare."""


@dataclass
class BlindDocuments:
    """The paired blind documents, and what became of the others."""

    paired: list[PairedDocument] = field(default_factory=list)
    blind_documents: int = 0
    not_annotated_both_ways: int = 0
    same_person: int = 0
    awaiting_curation: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "blind_documents": self.blind_documents,
            "paired": len(self.paired),
            "not_annotated_both_ways": self.not_annotated_both_ways,
            "same_person_both_ways": self.same_person,
            "awaiting_curation": self.awaiting_curation,
        }


def blind_documents(
    campaign: Campaign, kb: KB, *, cap_minutes: float = IDLE_CAP_MINUTES
) -> BlindDocuments:
    """Every blind document of ``campaign``, paired where it can be (see the module)."""
    blind_tasks = campaign.of("blind")
    if not blind_tasks:
        raise NoBlindDocuments(
            f"campaign {campaign.name!r} has no blind documents (no tasks in "
            f"{blind_name(campaign.name)!r}): nothing to compare"
        )
    gold = verified_gold(campaign, kb)
    settled = {d.doc_id: d for d in gold.documents}
    waiting = set(gold.awaiting_curation)
    minutes = {
        (row.task, row.annotator): row.minutes
        for row in effort_rows(campaign, kb, cap_minutes=cap_minutes)
    }
    main = by_doc_id(campaign.of("primary"))
    found = BlindDocuments(blind_documents=len(blind_tasks))
    for task in sorted(blind_tasks, key=lambda t: int(t["id"])):
        doc_id = doc_id_of(task)
        pre_task = main.get(doc_id)
        pair = blind_pair(pre_task, task)
        if pair is None:
            # Done both ways and still no pair: one person did both (blind_pair's rule).
            both = pre_task is not None and bool(completed_annotations(pre_task))
            if both and completed_annotations(task):
                found.same_person += 1
            else:
                found.not_annotated_both_ways += 1
            continue
        if doc_id in waiting:
            found.awaiting_curation += 1
            continue
        pre_email, blind_email = annotator_of(pair.pre), annotator_of(pair.blind)
        found.paired.append(
            PairedDocument(
                document=settled[doc_id],
                candidates=shown_hits(pair.pre_task, pair.pre, kb) or [],
                pre=read_annotation(pair.pre_task, pair.pre, kb)[1],
                blind=read_annotation(pair.blind_task, pair.blind, kb)[1],
                minutes_pre=minutes.get((int(pair.pre_task["id"]), pre_email)),
                minutes_blind=minutes.get((int(pair.blind_task["id"]), blind_email)),
                pre_annotator=pre_email,
                blind_annotator=blind_email,
            )
        )
    return found


@dataclass(frozen=True)
class CampaignEffect:
    """A campaign's effect report: its blind documents (paired and left out) and the figures."""

    project: str
    documents: BlindDocuments
    idle_cap_minutes: float
    report: EffectReport

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "documents": self.documents.to_dict(),
            "idle_cap_minutes": self.idle_cap_minutes,
            **self.report.to_dict(),
        }


def campaign_effect(
    campaign: Campaign,
    kb: KB,
    *,
    cap_minutes: float = IDLE_CAP_MINUTES,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CampaignEffect:
    """The effect report of ``campaign``'s paired blind documents, with what was left out."""
    found = blind_documents(campaign, kb, cap_minutes=cap_minutes)
    if not found.paired:
        counts = found.to_dict()
        raise NoBlindDocuments(
            f"campaign {campaign.name!r}: none of its {found.blind_documents} blind documents is "
            f"annotated both ways by two people and settled yet "
            f"({counts['not_annotated_both_ways']} not annotated both ways, "
            f"{counts['awaiting_curation']} awaiting curation, "
            f"{counts['same_person_both_ways']} by one person both ways)"
        )
    # The pairs weigh against the campaign's draw (every task pushed, verified or not), as
    # agree's double documents do: the settled gold would give a batch whose documents are
    # still being annotated too small a share.
    design = campaign_design(campaign, [p.document.doc_id for p in found.paired])
    report = effect_report(found.paired, kb, design=design, bootstrap=bootstrap, seed=seed)
    return CampaignEffect(campaign.name, found, cap_minutes, report)
