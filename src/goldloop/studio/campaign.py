"""A campaign's gold and its sidecar sections, from the exports of its three projects.

Pure (no network client). The gold takes, per document, the curated annotation, else the agreed
double annotations, else the primary rule (``goldloop.formats.labelstudio.verify``); the sidecar adds κ between
the two annotators of the double tasks before curation, and the human effort
(``goldloop.studio.effort``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import Campaign, double_name
from goldloop.formats.labelstudio.verify import PullResult, verify
from goldloop.kb import KB
from goldloop.scoring.agreement import AgreementReport, agreement, corpus_agreement
from goldloop.scoring.completeness import Completeness
from goldloop.scoring.design import CorpusFigures
from goldloop.studio.campaign_agreement import (
    DoubleTasks,
    double_completeness,
    double_versions,
    shared_design,
)
from goldloop.studio.effort import IDLE_CAP_MINUTES, EffortReport, effort_report, effort_rows

# Resamples of the corpus κ's interval: as many as the completeness section's.
CORPUS_BOOTSTRAP = 1000


def verify_campaign(
    campaign: Campaign,
    kb: KB,
    *,
    annotator: str | None = None,
    cap_minutes: float = IDLE_CAP_MINUTES,
) -> PullResult:
    """The verified gold of the campaign (one person's with ``annotator``) and its sections."""
    result = verified_gold(campaign, kb, annotator=annotator)
    result.sections = campaign_sections(campaign, kb, cap_minutes=cap_minutes)
    return result


def verified_gold(campaign: Campaign, kb: KB, *, annotator: str | None = None) -> PullResult:
    """The verified gold of the campaign (one person's with ``annotator``), without the
    sections (:func:`campaign_sections`)."""
    result = verify(
        campaign.of("primary") + campaign.of("double"), kb, annotator=annotator,
        curated=() if annotator else campaign.of("curate"), where=double_title(campaign),
        blind=campaign.of("blind"),
    )  # fmt: skip
    result.projects = list(campaign.titles.values())
    return result


@dataclass(frozen=True)
class CampaignSections:
    """What a campaign's sidecar adds to pull's counts: the human effort, and with a double
    project κ before curation and the double annotations' completeness."""

    effort: EffortReport
    agreement_before_curation: KappaSection | None = None
    completeness: Completeness | None = None

    def to_dict(self) -> dict[str, Any]:
        """The sidecar's sections; the double project's two only when there is one."""
        double = (
            {}
            if self.agreement_before_curation is None or self.completeness is None
            else {
                "agreement_before_curation": self.agreement_before_curation.to_dict(),
                "completeness": self.completeness.to_dict(),
            }
        )
        return {**double, "effort": self.effort.to_dict()}


def campaign_sections(
    campaign: Campaign, kb: KB, *, cap_minutes: float = IDLE_CAP_MINUTES
) -> CampaignSections:
    """``effort``, and ``agreement_before_curation`` and ``completeness`` when there is a double
    project."""
    effort = effort_report(effort_rows(campaign, kb, cap_minutes=cap_minutes),
                           cap_minutes=cap_minutes)  # fmt: skip
    if "double" not in campaign.titles:
        return CampaignSections(effort)
    first, second, double = double_versions(campaign.of("double"), kb, double_title(campaign))
    return CampaignSections(
        effort,
        agreement_before_curation=kappa_section(first, second, double, kb, campaign),
        completeness=double_completeness(first, second, campaign),
    )


@dataclass(frozen=True)
class KappaSection:
    """The sidecar's ``agreement_before_curation``: the two annotators' agreement report (its
    confusion left out), which double tasks were compared, and the corpus figures (``None``
    without a design)."""

    report: AgreementReport
    double: DoubleTasks
    corpus: CorpusFigures | None

    def to_dict(self) -> dict[str, Any]:
        data = self.report.to_dict()
        data.pop("confusion")
        corpus = None if self.corpus is None else self.corpus.to_dict()
        return {**data, **self.double.to_dict(), "corpus": corpus}


def kappa_section(
    first: Sequence[Document],
    second: Sequence[Document],
    double: DoubleTasks,
    kb: KB,
    campaign: Campaign,
) -> KappaSection:
    """κ between the two annotators of the double tasks, with which tasks were compared, and the
    corpus κ when the campaign's tasks carry the design (``shared_design``: the double
    documents as a part of each batch of the campaign's draw)."""
    report = agreement(first, second, kb)
    shared, design = shared_design(first, second, campaign)
    corpus = None
    if design is not None:
        doc_ids = [d.doc_id for d in shared]
        by_id = {d.doc_id: d for d in second}
        pairs = [(d, by_id[d.doc_id]) for d in shared]
        corpus = corpus_agreement(report, doc_ids, kb, design, CORPUS_BOOTSTRAP, 0, shared=pairs)
    return KappaSection(report, double, corpus)


def double_title(campaign: Campaign) -> str:
    return campaign.titles.get("double", double_name(campaign.name))
