"""The gold set's datasheet: what it is, how its documents were drawn, who annotated them and how,
how good it is, what it cost, what it cannot say, and how to cite it.

Each section holds the report of the command that computes its figures (``stats``, ``status``,
``agree``, ``effort``, ``effect``, ``score``), made by the same library function from the same
inputs, and the figures it cites, each with where it sits in that report (``path``), its interval
and whether it describes the sample or the corpus. A section whose inputs are missing says so in
one line. Pure but for the files it is given: the door exports the campaign.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldloop import __version__
from goldloop.errors import DesignRefused, GoldloopError
from goldloop.formats.labelstudio.tasks import Campaign
from goldloop.kb import KB
from goldloop.sample.batch_record import report_path
from goldloop.sample.stats import dataset_stats
from goldloop.scoring.effect import FIGURES as EFFECT_FIGURES
from goldloop.scoring.score_files import ScoreOptions, score_files
from goldloop.studio.campaign_agreement import campaign_agreement
from goldloop.studio.campaign_effect import NoBlindDocuments, campaign_effect
from goldloop.studio.effort import IDLE_CAP_MINUTES, NO_REVIEW, effort_report, effort_rows
from goldloop.studio.status import campaign_status

SAMPLE, CORPUS, COUNT = "sample", "corpus", "count"
# Where a figure sits in a report: dotted keys, or the keys themselves.
Path_ = str | tuple[str | int, ...] | list[str | int]


@dataclass(frozen=True)
class Figure:
    """One number the datasheet cites: ``path`` is where it sits in its section's report (keys,
    and indexes into lists), ``estimates`` whether it describes the sample, the corpus, or is a
    count."""

    name: str
    value: Any
    interval: list[float | None] | None
    estimates: str
    means: str
    path: list[str | int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Section:
    """A datasheet section: the command whose report it holds, that report, the figures it
    cites, lines of prose; or one line saying what is missing."""

    key: str
    title: str
    command: str = ""
    report: Any = None
    figures: list[Figure] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    missing: str | None = None

    def figure(
        self, name: str, path: Path_, means: str, estimates: str = SAMPLE, interval: Path_ = ""
    ) -> None:
        """Cite the figure at ``path`` of the report (its interval at ``interval``)."""
        bounds = lookup(self.report, interval) if interval else None
        keys = steps(path)
        self.figures.append(Figure(name, lookup(self.report, keys), bounds, estimates, means, keys))

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "command": self.command,
            "missing": self.missing,
            "lines": self.lines,
            "figures": [f.to_dict() for f in self.figures],
            "report": self.report,
        }


@dataclass(frozen=True)
class Datasheet:
    title: str
    created: str
    sections: list[Section]

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "created": self.created,
            "goldloop": __version__,
            "sections": {s.key: s.to_dict() for s in self.sections},
        }


@dataclass(frozen=True)
class DatasheetInputs:
    """What a datasheet is made from: the exported campaign and the files, each optional."""

    kb: KB
    campaign: Campaign | None = None
    gold: Path | None = None
    sample: Path | None = None
    systems: Sequence[tuple[str, Path]] = ()
    bootstrap: int = 1000
    seed: int = 0
    cap_minutes: float = IDLE_CAP_MINUTES
    design: str = "use"
    # The surrogate part's file and the pre-annotation of the gold's documents (score's).
    surrogate: tuple[Path, Path] | None = None
    # The plan's standing on this gold, as ``status --plan`` reports it, with its line.
    plan: dict[str, Any] | None = None


def steps(path: Path_) -> list[str | int]:
    """A path's keys: a dotted string's parts (digits index a list), or the keys as given (a
    key holding a dot, such as an e-mail address)."""
    if not isinstance(path, str):
        return list(path)
    return [int(part) if part.isdigit() else part for part in path.split(".")]


def lookup(report: Any, path: Path_) -> Any:
    """The value at ``path`` of a JSON-like report."""
    value = report
    for key in steps(path):
        value = value[key]
    return value


# Each section's title, and the command whose report it holds.
TITLES = {
    "gold": ("What the gold set is", "goldloop stats"),
    "drawn": ("How the documents were drawn", "goldloop stats"),
    "annotation": ("Who annotated and how", "goldloop status"),
    "agreement": ("Agreement between annotators", "goldloop agree"),
    "quality": ("Corrections and completeness", "goldloop status"),
    "effort": ("Human effort", "goldloop effort"),
    "effect": ("What pre-annotation saved and anchored", "goldloop effect"),
    "scores": ("Systems scored on the gold", "goldloop score"),
    "ppi": ("Corpus estimates from the systems (prediction-powered)", ""),
    "plan": ("The plan's next step", ""),
    "limits": ("What the gold cannot say", ""),
    "cite": ("How to cite the numbers", ""),
}


def _section(key: str, report: Any = None, *, missing: str | None = None) -> Section:
    title, command = TITLES[key]
    return Section(key, title, command, report, missing=missing)


def make_datasheet(inputs: DatasheetInputs) -> Datasheet:
    """Every section, from the inputs given."""
    name = inputs.campaign.name if inputs.campaign is not None else None
    title = name or (inputs.gold.name if inputs.gold is not None else "gold set")
    stats = dataset_stats(inputs.kb, sample=inputs.sample, gold=inputs.gold).to_dict()
    sections = [
        _what(stats, inputs),
        _drawn(stats, inputs),
        *_campaign_sections(inputs),
        *_scores(inputs),
        _plan(inputs.plan),
    ]
    sections += [_limits(sections), _cite(stats, inputs)]
    created = datetime.now(UTC).isoformat(timespec="seconds")
    return Datasheet(f"Datasheet of the gold set {title}", created, sections)


def _what(stats: dict[str, Any], inputs: DatasheetInputs) -> Section:
    section = _section("gold", stats)
    kb = stats["kb"]
    section.lines.append(f"KB: {kb['path']} (sha256 {kb['sha256']}, {kb['rows']} relations).")
    if inputs.gold is None:
        section.missing = "no gold file given: its documents and mentions are not described"
        return section
    section.lines.append(f"Gold file: {inputs.gold}.")
    for name, path, means in (
        ("documents", "gold.documents", "verified documents in the gold"),
        ("documents without a mention", "gold.documents_without_hits", "negative documents"),
        ("mentions", "gold.hits", "verified relation mentions"),
        ("distinct relations", "gold.distinct_relations", "KB relations with a mention"),
        ("anchored share", "gold.anchored_share", "mentions whose surface is a form of the "
         "relation's label, of those whose anchoring is known"),
    ):  # fmt: skip
        section.figure(name, path, means, COUNT if "share" not in name else SAMPLE)
    return section


def _drawn(stats: dict[str, Any], inputs: DatasheetInputs) -> Section:
    section = _section("drawn", stats)
    sample = stats.get("sample")
    if inputs.sample is None or sample is None:
        section.missing = "no sample dir given: the draw is not described"
        return section
    if "by_stratum" not in sample:
        section.missing = f"{inputs.sample} is a documents file, not a sample dir: no design"
        return section
    batches = []
    for batch in sample["by_batch"]:
        path = report_path(inputs.sample, int(batch))
        try:
            batches.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise GoldloopError(f"{path}: cannot read the sampling report ({exc})") from None
    section.report = {**stats, "sampling_reports": batches}
    section.figure("documents drawn", "sample.documents", "documents in the manifest", COUNT)
    for role in sample["by_role"]:
        section.figure(f"role {role}", f"sample.by_role.{role}", ROLE_MEANS.get(role, ""), COUNT)
    section.figure("strata", "sample.by_stratum", "documents drawn per stratum", COUNT)
    for i, batch in enumerate(batches):
        section.figure(f"batch {batch['batch']}: rows read", f"sampling_reports.{i}.rows_read",
                       "corpus rows the batch read", COUNT)  # fmt: skip
        section.figure(f"batch {batch['batch']}: eligible", f"sampling_reports.{i}.eligible",
                       "rows the gate let through: the population drawn from", COUNT)  # fmt: skip
        section.figure(f"batch {batch['batch']}: dropped", f"sampling_reports.{i}.dropped",
                       "rows the gate dropped, by reason", COUNT)  # fmt: skip
    section.lines.append(
        "Each document records its stratum and p_incl (drawn / stratum size in its batch's "
        "pool): corpus figures weigh documents by 1/p_incl."
    )
    return section


ROLE_MEANS = {
    "primary": "one annotator each",
    "double": "two independent annotators each (agreement, completeness)",
    "blind": "annotated with and without candidates (what pre-annotation saves)",
    "reserve": "drawn, held back",
    "curate": "disputed tasks, one curator each",
}


def _campaign_sections(inputs: DatasheetInputs) -> list[Section]:
    if inputs.campaign is None:
        keys = ("annotation", "agreement", "quality", "effort", "effect")
        return [_section(key, missing="no campaign given: not described") for key in keys]
    campaign, kb = inputs.campaign, inputs.kb
    status = campaign_status(campaign, kb, cap_minutes=inputs.cap_minutes).to_dict()
    rows = effort_rows(campaign, kb, cap_minutes=inputs.cap_minutes)
    effort = effort_report(rows, cap_minutes=inputs.cap_minutes).to_dict()
    return [
        _annotation(status, effort),
        _agreement(inputs),
        _quality(status),
        _effort(effort),
        _effect(inputs),
    ]


def _annotation(status: dict[str, Any], effort: dict[str, Any]) -> Section:
    section = _section("annotation", status)
    for role in status["roles"]:
        section.figure(f"{role} tasks", f"roles.{role}.tasks", ROLE_MEANS.get(role, ""), COUNT)
        section.figure(f"{role} tasks annotated", f"roles.{role}.annotated",
                       "tasks with the annotations they need", COUNT)  # fmt: skip
    for person in status["annotators"]:
        section.figure(f"annotator {person}", ("annotators", person, "tasks"), "tasks annotated",
                       COUNT)  # fmt: skip
    for how in status["decided"]:
        section.figure(f"decided {how}", f"decided.{how}", DECIDED.get(how, ""), COUNT)
    section.figure("disputed tasks", "curation.disputed_tasks", "tasks whose two annotations "
                   "disagree", COUNT)  # fmt: skip
    section.figure("curated tasks", "curation.curated_tasks", "disputes a curator settled", COUNT)
    tags = [tag for tag in effort["by_pre_annotator"] if tag != NO_REVIEW]
    section.lines.append(
        "Pre-annotators (model@effort, as each review tag names them): "
        + (", ".join(tags) if tags else "none recorded")
        + ". Instructions: label_config/instructions.html (annotators), "
        "curate_instructions.html (curators), blind_instructions.html (blind documents)."
    )
    return section


DECIDED = {
    "single": "documents whose gold is one annotation",
    "agreed": "double documents whose two annotations agree",
    "curated": "double documents a curator settled",
}


def _agreement(inputs: DatasheetInputs) -> Section:
    section = _section("agreement")
    assert inputs.campaign is not None
    if "double" not in inputs.campaign.titles:
        section.missing = "no double documents: agreement cannot be measured"
        return section
    try:
        found = campaign_agreement(
            inputs.campaign, inputs.kb, design=inputs.design, bootstrap=inputs.bootstrap,
            seed=inputs.seed,
        )  # fmt: skip
    except DesignRefused as exc:
        section.missing = f"{exc.message}: agreement not described"
        return section
    section.report = found.to_dict()
    if not found.double.compared:
        section.missing = "no double document annotated by two people yet"
        return section
    for mode in ("strict", "lenient"):
        section.figure(f"span F1 {mode}", f"span_f1.{mode}.f1", SPAN_MEANS[mode],
                       interval=f"span_f1.{mode}.interval")  # fmt: skip
        section.figure(f"labelled span F1 {mode}", f"span_f1_labelled.{mode}.f1",
                       f"{SPAN_MEANS[mode]}, with the same relation",
                       interval=f"span_f1_labelled.{mode}.interval")  # fmt: skip
    section.figure("α_u spans", "alpha_u.spans", "Krippendorff's unitizing α on spans",
                   interval="alpha_u_interval.spans")  # fmt: skip
    for key, means in KAPPA_MEANS.items():
        section.figure(f"κ {key}", key, means)
    corpus = found.corpus
    if corpus is None:
        section.lines.append("No corpus figures: the tasks carry no design (p_incl).")
    else:
        for key in ("span_f1_lenient", "kappa_entity_id_folded", "kappa_direction"):
            if key in corpus.values:
                section.figure(f"corpus {key}", f"corpus.{key}", "the same, weighed by "
                               "1/p_incl", CORPUS, f"corpus.intervals.{key}")  # fmt: skip
    if found.blind is not None and found.blind.report is not None:
        section.figure("blind documents: labelled span F1 lenient (with vs without candidates)",
                       "blind_vs_pre_annotated.agreement.span_f1_labelled.lenient.f1",
                       "agreement between the two conditions",
                       interval="blind_vs_pre_annotated.agreement.span_f1_labelled.lenient."
                       "interval")  # fmt: skip
    return section


SPAN_MEANS = {
    "strict": "the two annotators' spans, matched exactly",
    "lenient": "the two annotators' spans, matched on any overlap",
}
KAPPA_MEANS = {
    "kappa_entity_id_folded": "Cohen's κ on the relation (KB-folded) of matched spans",
    "kappa_direction": "Cohen's κ on direction, over spans whose relation agrees",
}


def _quality(status: dict[str, Any]) -> Section:
    section = _section("quality", status)
    section.figure(
        "correction rate",
        "verdicts.correction_rate",
        "(fix + reject) / candidates: the share of candidates people changed",
    )
    for part in ("anchored", "paraphrase"):
        section.figure(f"correction rate ({part})", f"verdicts.{part}.correction_rate",
                       f"the same over {part} candidates")  # fmt: skip
    if status["completeness"] is None:
        section.lines.append("Completeness: no double documents annotated twice.")
        return section
    for key, means in (
        ("recall_1", "estimated share of the mentions the first annotator found"),
        ("recall_2", "the same for the second annotator"),
        ("recall_both", "estimated share of the mentions the two found together"),
    ):
        section.figure(key, f"completeness.{key}", means, interval=f"completeness.{key}_ci")
    corpus = status["completeness"].get("corpus")
    if corpus:
        section.figure("corpus recall_both", "completeness.corpus.recall_both",
                       "the same, weighed by 1/p_incl", CORPUS,
                       "completeness.corpus.intervals.recall_both")  # fmt: skip
    return section


def _effort(effort: dict[str, Any]) -> Section:
    section = _section("effort", effort)
    if not effort["overall"]["annotations"]:
        section.missing = "no completed annotation yet"
        return section
    section.figure("annotations", "overall.annotations", "completed annotations", COUNT)
    section.figure("minutes per document", "overall.minutes_per_document",
                   "mean minutes an annotation was open (capped)")  # fmt: skip
    section.figure("minutes per verified mention", "overall.minutes_per_verified_mention",
                   "minutes over the verified mentions (accepted, fixed, added or proposed)")  # fmt: skip
    for person in effort["by_annotator"]:
        section.figure(f"minutes per mention, {person}",
                       ("by_annotator", person, "minutes_per_verified_mention"),
                       "the same for one annotator")  # fmt: skip
    section.lines.append(
        f"Minutes come from Label Studio's lead_time, an annotation counted at most "
        f"{effort['idle_cap_minutes']:g} minutes (longer: the task sat idle)."
    )
    return section


def _effect(inputs: DatasheetInputs) -> Section:
    section = _section("effect")
    assert inputs.campaign is not None
    if "blind" not in inputs.campaign.titles:
        section.missing = (
            "no blind documents in the campaign: what pre-annotation saves is not measured"
        )
        return section
    try:
        effect = campaign_effect(inputs.campaign, inputs.kb, cap_minutes=inputs.cap_minutes,
                                 bootstrap=inputs.bootstrap, seed=inputs.seed)  # fmt: skip
    except (NoBlindDocuments, DesignRefused) as exc:
        section.missing = str(exc)
        return section
    section.report = effect.to_dict()
    # Weighed by 1/p_incl, the figures stand for the corpus; with equal weights, the sample.
    estimates = CORPUS if effect.report.design.weights == "1/p_incl" else SAMPLE
    for name, means in EFFECT_FIGURES.items():
        section.figure(name, f"figures.{name}.value", means, estimates,
                       f"figures.{name}.interval")  # fmt: skip
    return section


def _scores(inputs: DatasheetInputs) -> list[Section]:
    """The systems' scores, and their prediction-powered corpus figures (with a surrogate)."""
    section, ppi = _section("scores"), _section("ppi")
    if not inputs.systems or inputs.gold is None:
        section.missing = ppi.missing = "no system scored on the gold"
        return [section, ppi]
    options = ScoreOptions(bootstrap=inputs.bootstrap, seed=inputs.seed, design=inputs.design)
    _, results = score_files(
        inputs.gold, inputs.systems, inputs.kb, options, surrogate=inputs.surrogate
    )
    section.report = ppi.report = {"results": [result.to_dict() for result in results]}
    if inputs.surrogate is None:
        ppi.missing = "no surrogate part given: no prediction-powered corpus figures"
    for i, result in enumerate(results):
        system, intervals = result.system, result.figures.intervals
        for key in ("precision", "recall", "f1"):
            section.figure(f"{system} {key}", f"results.{i}.detection.{key}",
                           SCORE_MEANS[key], interval=f"results.{i}.intervals.{key}"
                           if key in intervals else "")  # fmt: skip
        if result.corpus is not None and "f1" in result.corpus.values:
            section.figure(f"{system} corpus f1", f"results.{i}.corpus.f1",
                           "F1 weighed by 1/p_incl", CORPUS,
                           f"results.{i}.corpus.intervals.f1")  # fmt: skip
        for key in ("precision", "recall", "f1"):
            if result.corpus_ppi is not None and key in result.corpus_ppi.values:
                ppi.figure(f"{system} corpus {key} (prediction-powered)",
                           f"results.{i}.corpus_ppi.{key}", f"{SCORE_MEANS[key]}, for the "
                           "corpus, the surrogate part's pre-annotation lending its documents",
                           CORPUS, f"results.{i}.corpus_ppi.intervals.{key}")  # fmt: skip
    return [section, ppi]


def _plan(plan: dict[str, Any] | None) -> Section:
    """Where the plan's corpus figure stands on this gold, and its next step (``plan``: the
    plan's standing as ``status`` reads it, its one line under ``line``)."""
    section = _section("plan", plan)
    if plan is None:
        section.missing = "no plan given"
        return section
    section.figure("corpus figure now", "value", "the planned figure (its system and metric) on "
                   "this gold, for the corpus", CORPUS)  # fmt: skip
    section.figure("anytime-valid half-width", "anytime_half_width", "the 95% interval's "
                   "half-width that holds however often one looks", CORPUS)  # fmt: skip
    section.figure("fixed-size half-width", "half_width", "the same for one look", CORPUS)
    section.figure("human documents", "n_docs", "documents of the gold the figure stands on",
                   COUNT)  # fmt: skip
    section.lines.append(plan["line"])
    return section


SCORE_MEANS = {
    "precision": "predicted spans matched to a gold span / predicted spans",
    "recall": "gold spans matched / gold spans",
    "f1": "harmonic mean of precision and recall",
}


def _limits(sections: Sequence[Section]) -> Section:
    section = _section("limits")
    section.lines += [
        "A mention that every pre-annotator and every person missed is in no gold: recall "
        "figures are against this gold, an upper bound of the true recall.",
        "Figures marked sample describe the documents annotated; those marked corpus stand for "
        "the corpus the documents were drawn from (weights 1/p_incl), with their intervals.",
    ]
    quality = next(s for s in sections if s.key == "quality")
    both = [f for f in quality.figures if f.name == "recall_both"]
    if both and both[0].value is not None:
        section.lines.append(
            f"On the double documents, the two annotators together found an estimated "
            f"{both[0].value:.3f} of the mentions (capture–recapture): the rest is in no gold."
        )
    return section


def _cite(stats: dict[str, Any], inputs: DatasheetInputs) -> Section:
    section = _section("cite")
    gold = "" if inputs.gold is None else f", gold sha256 {file_sha256(inputs.gold)}"
    section.lines += [
        f"Made by goldloop {__version__} with KB sha256 {stats['kb']['sha256']}{gold}.",
        "Cite a figure with its interval and whether it describes the sample or the corpus, "
        "never a point estimate alone; this datasheet's JSON holds each command's report.",
    ]
    return section


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def markdown(sheet: Datasheet) -> str:
    """The datasheet in Markdown: a table of figures per section, its lines, or what is
    missing."""
    out = [f"# {sheet.title}", "", f"Made {sheet.created} by goldloop {__version__}.", ""]
    for section in sheet.sections:
        out += [f"## {section.title}", ""]
        if section.command:
            out += [f"From `{section.command}`.", ""]
        if section.missing:
            out += [f"Not available: {section.missing}.", ""]
            continue
        if section.figures:
            out += ["| figure | value | 95% interval | describes | what it means |",
                    "|---|---|---|---|---|"]  # fmt: skip
            out += [
                f"| {f.name} | {fmt(f.value)} | {fmt_interval(f.interval)} | {f.estimates} "
                f"| {f.means} |"
                for f in section.figures
            ]
            out.append("")
        out += [*section.lines, ""] if section.lines else []
    return "\n".join(out).rstrip() + "\n"


def fmt(value: Any) -> str:
    """A figure as the datasheet prints it."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {fmt(v)}" for k, v in value.items()) or "none"
    return str(value)


def fmt_interval(interval: list[float | None] | None) -> str:
    if not interval or interval[0] is None or interval[1] is None:
        return ""
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]"
