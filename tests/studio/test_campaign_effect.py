"""Blind documents end to end in the session's real Label Studio, with a known anchoring effect.

Simulated annotators work through the SDK (their own ``completed_by`` and ``lead_time``). Every
blind document is pushed to ``NAME`` with the pre-annotator's candidates and to ``NAME-blind``
without; alice and bob are crossed (on even documents alice has the candidates and bob works
blind, on odd ones the other way round). The person with candidates accepts a true candidate
with probability P, a false one with P_FALSE, and finds a mention the pre-annotator missed with
Q_PRE; the blind person finds each mention with q_blind (by stratum). Lead times are Gamma sums
of one exponential per mention (means MU_PRE and MU_BLIND minutes). ``goldloop curate`` sends the
disputed documents to NAME-curate, where carol marks the truth. Three more blind documents are
left unpaired: one annotated only blind, one only with candidates, one by alice both ways.

``goldloop effect`` must give the figures an independent computation gives from what the test
sent (weights 1/p_incl, minutes capped as effort caps them), and each interval must hold the
population's known value.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.formats.labelstudio.tasks import blind_name, curate_name
from goldloop.kb import KB
from goldloop.studio.campaign import verify_campaign
from goldloop.studio.campaign_effect import NoBlindDocuments, blind_documents
from goldloop.studio.curate import curate
from goldloop.studio.effort import IDLE_CAP_MINUTES
from goldloop.studio.project import export_campaign, find_project
from goldloop.studio.push import Candidates, push, task_count
from goldloop.studio.review import hit_regions
from tests.conftest import Cli
from tests.studio.loop_data import ACTIVATES, BINDS

pytestmark = pytest.mark.studio

TAG = "gpt-test@low"
R, P, P_FALSE, Q_PRE = 0.7, 0.9, 0.3, 0.3
MU_PRE, MU_BLIND = 0.5, 0.8
# stratum: (p_incl, documents, the blind person's recall)
STRATA = {"a": (0.5, 20, 0.85), "b": (0.2, 20, 0.7)}
UNPAIRED = ("only-blind", "only-pre", "one-person")


@dataclass
class Sim:
    """One blind document as simulated: spans are (start, end, entity_id, direction)."""

    doc: Document
    true: list[tuple[int, int, str, str]]
    shown: list[tuple[int, int, str, str]]
    pre: list[tuple[int, int, str, str]]
    blind: list[tuple[int, int, str, str]]
    pre_seconds: float
    blind_seconds: float
    pre_person: str = ""
    blind_person: str = ""
    gold: list[tuple[int, int, str, str]] = field(default_factory=list)


def _document(
    doc_id: str, stratum: str, p_incl: float | None, n_true: int, n_false: int, batch: int = 0
) -> Document:
    text = "".join(f"A{k} activates B{k}. " for k in range(n_true))
    text += "".join(f"C{j} binds D{j}. " for j in range(n_false))
    return Document(doc_id=doc_id, text=text.strip(), role="blind", batch=batch, p_incl=p_incl,
                    stratum=stratum)  # fmt: skip


def _spans(text: str, word: str, entity_id: str, direction: str) -> list[tuple[int, int, str, str]]:
    out, start = [], text.find(word)
    while start >= 0:
        out.append((start, start + len(word), entity_id, direction))
        start = text.find(word, start + 1)
    return out


def simulate(seed: int) -> list[Sim]:
    rng = np.random.default_rng(seed)
    sims = []
    for stratum, (p_incl, n, q_blind) in STRATA.items():
        for i in range(n):
            doc = _document(f"{stratum}:{i}", stratum, p_incl, 1 + rng.poisson(3), rng.poisson(0.7))
            true = _spans(doc.text, "activates", ACTIVATES, "forward")
            false = _spans(doc.text, "binds", BINDS, "symmetric")
            proposed = [s for s in true if rng.random() < R]
            pre = [s for s in proposed if rng.random() < P]
            pre += [s for s in false if rng.random() < P_FALSE]
            pre += [s for s in true if s not in proposed and rng.random() < Q_PRE]
            blind = [s for s in true if rng.random() < q_blind]
            sims.append(Sim(
                doc, true, proposed + false, sorted(pre), blind,
                pre_seconds=60 * float(rng.gamma(len(true), MU_PRE)),
                blind_seconds=60 * float(rng.gamma(len(true), MU_BLIND)),
            ))  # fmt: skip
    return sims


def _hits(text: str, spans: list[tuple[int, int, str, str]]) -> list[Hit]:
    return [Hit(a=a, b=b, surface=text[a:b], entity_id=e, direction=d, surface_anchored=True)
            for a, b, e, d in spans]  # fmt: skip


@dataclass
class BlindCampaign:
    name: str
    sims: list[Sim]
    people: dict[str, Any]
    curated: int = 0


@pytest.fixture(scope="module")
def blind_campaign(label_studio: Any, kb: KB) -> BlindCampaign:
    studio = label_studio.studio
    name = f"eff-{uuid.uuid4().hex[:6]}"
    sims = simulate(7)
    extra = [_document(doc_id, "a", 0.5, 2, 0) for doc_id in UNPAIRED]
    primary = Document(doc_id="p:1", text="X activates Y.", role="primary", batch=0, p_incl=0.5,
                       stratum="a")  # fmt: skip
    docs = [s.doc for s in sims] + extra + [primary]
    candidates = Candidates(TAG, {s.doc.doc_id: _hits(s.doc.text, s.shown) for s in sims})
    for doc in [*extra, primary]:
        candidates.hits[doc.doc_id] = _hits(
            doc.text, _spans(doc.text, "activates", ACTIVATES, "forward")
        )
    advanced: list[int] = []
    report = push(studio, docs, name, kb, a=candidates, progress=advanced.append)
    assert {p.title: p.documents for p in report.projects} == {name: 44, blind_name(name): 43}
    # The progress advances once per task, blind documents twice: the bar's total is that count.
    assert sum(advanced) == task_count(docs, name) == 87
    people = {
        person: studio.sdk.users.create(
            email=f"{person}-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:10]
        )
        for person in ("alice", "bob", "carol")
    }
    tasks: dict[tuple[str, str], int] = {}
    for title in (name, blind_name(name)):
        project = find_project(studio, title)
        assert project is not None
        tasks |= {
            (title, t.data["doc_id"]): t.id for t in studio.sdk.tasks.list(project=project.id)
        }

    def annotate(person: str, task: int, text: str, spans: list, seconds: float) -> None:
        result = [item for hit in _hits(text, spans) for item in hit_regions(text, hit, kb)]
        studio.sdk.annotations.create(id=task, result=result, completed_by=people[person].id,
                                  lead_time=seconds)  # fmt: skip

    for k, sim in enumerate(sims):
        sim.pre_person, sim.blind_person = ("alice", "bob") if k % 2 == 0 else ("bob", "alice")
        text, doc_id = sim.doc.text, sim.doc.doc_id
        annotate(sim.pre_person, tasks[(name, doc_id)], text, sim.pre, sim.pre_seconds)
        annotate(sim.blind_person, tasks[(blind_name(name), doc_id)], text, sim.blind,
                 sim.blind_seconds)  # fmt: skip
        agreed = sorted(sim.pre) == sorted(sim.blind)
        sim.gold = sim.pre if agreed else sim.true
    only = _spans(extra[0].text, "activates", ACTIVATES, "forward")
    annotate("bob", tasks[(blind_name(name), "only-blind")], extra[0].text, only, 60.0)
    annotate("alice", tasks[(name, "only-pre")], extra[1].text, only, 60.0)
    annotate("alice", tasks[(name, "one-person")], extra[2].text, only, 60.0)
    annotate("alice", tasks[(blind_name(name), "one-person")], extra[2].text, only[:1], 60.0)
    done = curate(studio, name, kb)
    project = find_project(studio, curate_name(name))
    assert project is not None
    by_id = {s.doc.doc_id: s for s in sims}
    for task in studio.sdk.tasks.list(project=project.id, fields="all"):
        sim = by_id[task.data["doc_id"]]
        annotate("carol", task.id, sim.doc.text, sim.true, 30.0)
    disputed = sum(sorted(s.pre) != sorted(s.blind) for s in sims)
    assert (done.blind_documents, done.disputed, done.agreed) == (43, disputed, 40 - disputed)
    return BlindCampaign(name, sims, people, curated=disputed)


def _expected(sims: list[Sim]) -> dict[str, float]:
    """The figures computed here, from what was sent: Σ w·x / Σ w·y with w = 1/p_incl."""
    sums: dict[str, float] = {}

    def add(key: str, value: float, w: float) -> None:
        sums[key] = sums.get(key, 0.0) + w * value

    for s in sims:
        w = 1 / (s.doc.p_incl or 1)
        gold, shown, pre, blind = set(s.gold), set(s.shown), set(s.pre), set(s.blind)
        add("m_pre", min(s.pre_seconds / 60, IDLE_CAP_MINUTES), w)
        add("m_blind", min(s.blind_seconds / 60, IDLE_CAP_MINUTES), w)
        add("gold", len(gold), w)
        add("found_pre", len(gold & pre), w)
        add("found_blind", len(gold & blind), w)
        add("accepted", len(shown & pre), w)
        add("accepted_not_blind", len((shown & pre) - blind), w)
        add("missed", len(gold - shown), w)
        add("missed_pre", len(gold - shown - pre), w)
        add("missed_blind", len(gold - shown - blind), w)
    return {
        "minutes_per_mention_pre": sums["m_pre"] / sums["gold"],
        "minutes_per_mention_blind": sums["m_blind"] / sums["gold"],
        "time_saving": 1 - sums["m_pre"] / sums["m_blind"],
        "recall_pre": sums["found_pre"] / sums["gold"],
        "recall_blind": sums["found_blind"] / sums["gold"],
        "accepted_not_blind": sums["accepted_not_blind"] / sums["accepted"],
        "missed_too_pre": sums["missed_pre"] / sums["missed"],
        "missed_too_blind": sums["missed_blind"] / sums["missed"],
    }


def _population() -> dict[str, float]:
    """What the figures estimate in the population (N_h = n_h / p_h), gold taken as the truth."""
    sizes = {s: n / p for s, (p, n, _) in STRATA.items()}
    q_blind = sum(sizes[s] * q for s, (_, _, q) in STRATA.items()) / sum(sizes.values())
    recall_pre = R * P + (1 - R) * Q_PRE
    mentions, false = 1 + 3.0, 0.7  # per document: 1 + Poisson(3) true, Poisson(0.7) false
    accepted = sum(sizes[s] * (mentions * R * P + false * P_FALSE) for s in STRATA)
    not_blind = sum(
        sizes[s] * (mentions * R * P * (1 - q) + false * P_FALSE) for s, (_, _, q) in STRATA.items()
    )
    return {
        "time_saving": 1 - MU_PRE / MU_BLIND,
        "accepted_not_blind": not_blind / accepted,
        "recall_difference": recall_pre - q_blind,
        "missed_too_pre": 1 - Q_PRE,
        "missed_too_blind": 1 - q_blind,
    }


def test_push_status_and_pull_treat_blind_documents(
    blind_campaign: BlindCampaign, label_studio: Any, kb: KB, tmp_path, cli: Cli
) -> None:
    studio = label_studio.studio
    name = blind_campaign.name
    blind = find_project(studio, blind_name(name))
    assert blind is not None and blind.model_version in (None, "")
    # Its annotators read first that nothing is pre-filled there, then the usual instructions.
    assert blind.instructions.startswith("<h3>Mark every mention yourself</h3>")
    assert "<h3>Check the marked mentions</h3>" in blind.instructions
    main = find_project(studio, name)
    assert main is not None and main.instructions.startswith("<h3>Check the marked mentions</h3>")
    exported = export_campaign(studio, name)
    assert all(not t.get("predictions") for t in exported.of("blind"))
    assert all(t.get("predictions") for t in exported.of("primary"))
    out = tmp_path / "status.json"
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    done = cli("status", "--project", name, "-o", out, env=env)
    assert done.returncode == 0, done.stderr
    roles = json.loads(out.read_text())["roles"]
    assert roles["blind"] == {"tasks": 43, "annotated": 42, "partly_annotated": 0, "skipped": 0,
                              "annotations": 42, "annotations_needed": 1,
                              "without_prediction": 43}  # by design: nothing shown  # fmt: skip
    assert f"{blind_name(name)} (blind)" in done.out
    gold = {d.doc_id: d for d in verify_campaign(exported, kb).documents}
    # Only the annotation without candidates: the document's, every hit added by a person.
    alone = gold["only-blind"].ground_truth
    assert [(h.source, h.decided, h.verdict) for h in alone] == [("human", "single", "added")] * 2
    assert {h.annotator for h in alone} == {blind_campaign.people["bob"].email}
    for sim in blind_campaign.sims:
        hits = gold[sim.doc.doc_id].ground_truth
        assert sorted((h.a, h.b, h.entity_id, h.direction) for h in hits) == sorted(sim.gold)
        assert {h.decided for h in hits} <= {"agreed" if sim.gold is sim.pre else "curated"}


def test_effect_recovers_the_known_effect(
    blind_campaign: BlindCampaign, label_studio: Any, kb: KB, tmp_path, cli: Cli
) -> None:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token,
           "COLUMNS": "200"}  # fmt: skip
    report_path, png = tmp_path / "effect.json", tmp_path / "effect.png"
    done = cli("effect", "--project", blind_campaign.name, "--json", report_path, "--png", png,
               "--bootstrap", 500, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(report_path.read_text())
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list(report)[:4] == ["project", "documents", "idle_cap_minutes", "paired_documents"]
    assert report["documents"] == {"blind_documents": 43, "paired": 40, "not_annotated_both_ways": 2,
                                   "same_person_both_ways": 1, "awaiting_curation": 0}  # fmt: skip
    assert report["design"]["weights"] == "1/p_incl" and report["timed_pairs"] == 40
    figures = report["figures"]
    for name, value in _expected(blind_campaign.sims).items():
        assert figures[name]["value"] == pytest.approx(value, abs=1e-9), name
    for name, value in _population().items():
        low, high = figures[name]["interval"]
        assert low <= value <= high, (name, value, figures[name])
    for line in ("time_saving", "recall_difference", "accepted_not_blind", "missed_too_pre"):
        assert line in done.out
    # alice and bob each worked both ways: crossed, no warning.
    assert report["crossing"] == {"crossed": True, "only_with_candidates": [],
                                  "only_without_candidates": []}  # fmt: skip
    assert "not crossed" not in done.out
    assert f"{figures['time_saving']['value']:.3f}" in done.out
    # The same figures from the library, straight from the export.
    exported = export_campaign(label_studio.studio, blind_campaign.name)
    paired = blind_documents(exported, kb).paired
    assert {p.document.doc_id for p in paired} == {s.doc.doc_id for s in blind_campaign.sims}


def test_effect_writes_both_files_by_default_as_effort_names_its_own(
    blind_campaign: BlindCampaign, label_studio: Any, tmp_path, cli: Cli, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token,
           "COLUMNS": "200"}  # fmt: skip
    name = blind_campaign.name
    done = cli("effect", "--project", name, "--bootstrap", 50, env=env)
    assert done.returncode == 0, done.stderr
    report_path, png = tmp_path / f"{name}.effect.json", tmp_path / f"{name}.effect.png"
    assert json.loads(report_path.read_text())["project"] == name
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([report_path.name, png.name])
    assert f"report: {report_path.name}; chart: {png.name}" in done.out
    # A run that fails (a campaign that does not exist) leaves the good pair as it was.
    before = (report_path.read_bytes(), png.read_bytes())
    done = cli("effect", "--project", f"{name}-gone", "--json", report_path, "--png", png,
               env=env)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (report_path.read_bytes(), png.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([report_path.name, png.name])


def test_effect_without_blind_documents_says_so_and_writes_nothing(
    label_studio: Any, kb: KB, tmp_path, cli: Cli, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    name = f"nob-{uuid.uuid4().hex[:6]}"
    doc = Document(doc_id="p:1", text="X activates Y.", role="primary", batch=0, p_incl=0.5)
    push(label_studio.studio, [doc], name, kb)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    # A good pair from before (the default names) stays as it was.
    kept = {tmp_path / f"{name}.effect.json": b"{}\n", tmp_path / f"{name}.effect.png": b"png"}
    for path, content in kept.items():
        path.write_bytes(content)
    for options in ((), ("--json", tmp_path / "effect.json", "--png", tmp_path / "effect.png")):
        done = cli("effect", "--project", name, *options, env=env)
        assert done.returncode == 2
        assert done.stderr.strip().count("\n") == 0 and "no blind documents" in done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
        assert {path: path.read_bytes() for path in kept} == kept
        assert sorted(tmp_path.iterdir()) == sorted(kept)
    with pytest.raises(NoBlindDocuments):
        blind_documents(export_campaign(label_studio.studio, name), kb)


def _annotated_both_ways(
    label_studio: Any,
    kb: KB,
    prefix: str,
    docs: list[Document],
    people_of: Callable[[int], tuple[str, str]],
    *,
    seconds_of: Callable[[int], tuple[float, float]] = lambda i: (60.0, 60.0),
    unannotated: Sequence[Document] = (),
) -> tuple[str, dict[str, Any]]:
    """A new campaign of the blind documents ``docs`` and the primary documents ``unannotated``,
    every mention a candidate; blind document ``i`` annotated by ``people_of(i)`` (with
    candidates, without), both marking every mention (agreed: nothing to curate), taking
    ``seconds_of(i)`` seconds each; the primary documents drawn and never annotated."""
    studio = label_studio.studio
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    every = [*docs, *unannotated]
    spans = {d.doc_id: _spans(d.text, "activates", ACTIVATES, "forward") for d in every}
    candidates = Candidates(TAG, {d.doc_id: _hits(d.text, spans[d.doc_id]) for d in every})
    push(studio, every, name, kb, a=candidates)
    people = {
        person: studio.sdk.users.create(
            email=f"{person}-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:10]
        )
        for person in sorted({p for i in range(len(docs)) for p in people_of(i)})
    }
    index = {d.doc_id: i for i, d in enumerate(docs)}
    for title, condition in ((name, 0), (blind_name(name), 1)):
        project = find_project(studio, title)
        assert project is not None
        for task in studio.sdk.tasks.list(project=project.id):
            if task.data["doc_id"] not in index:
                continue
            i = index[task.data["doc_id"]]
            doc = docs[i]
            result = [item for hit in _hits(doc.text, spans[doc.doc_id])
                      for item in hit_regions(doc.text, hit, kb)]  # fmt: skip
            studio.sdk.annotations.create(id=task.id, result=result,
                                      completed_by=people[people_of(i)[condition]].id,
                                      lead_time=seconds_of(i)[condition])  # fmt: skip
    return name, people


def test_effect_weighs_pairs_against_the_campaigns_draw_not_the_settled_gold(
    label_studio: Any, kb: KB, tmp_path, cli: Cli
) -> None:
    """Batch 0: two blind documents (p_incl 0.5, one mention, 1 minute with candidates and 2
    without). Batch 1: two blind documents (p_incl 0.25, two mentions, 1 minute both ways) and
    four primary documents nobody has annotated yet. The pairs weigh as agree's double documents
    do (studio.campaign_agreement.campaign_design), against all 8 drawn documents, not the 4 settled."""
    docs = [_document(f"e0:{i}", "a", 0.5, 1, 0) for i in range(2)]
    docs += [_document(f"e1:{i}", "a", 0.25, 2, 0, batch=1) for i in range(2)]
    waiting = [
        _document(f"q1:{i}", "a", 0.25, 1, 0, batch=1).model_copy(update={"role": "primary"})
        for i in range(4)
    ]
    name, _ = _annotated_both_ways(
        label_studio, kb, "drw", docs,
        lambda i: ("alice", "bob") if i % 2 == 0 else ("bob", "alice"),
        seconds_of=lambda i: (60.0, 120.0) if i < 2 else (60.0, 60.0),
        unannotated=waiting,
    )  # fmt: skip
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    report_path = tmp_path / "effect.json"
    done = cli("effect", "--project", name, "--json", report_path, "--png",
               tmp_path / "effect.png", "--bootstrap", 20, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(report_path.read_text())
    assert report["documents"]["paired"] == 4 and report["timed_pairs"] == 4
    # By hand: the draw's batch shares are α_0 = 2/8, α_1 = 6/8, so a drawn document weighs
    # α_0/0.5 + α_1 = 1.25 in batch 0 and α_1/0.25 = 3 in batch 1; the pairs stand for their
    # batch: 1.25 · 2/2 in batch 0, 3 · 6/2 = 9 in batch 1 (Σ 20.5 = the draw's Σ w).
    w0, w1 = 1.25, 9.0
    gold = 2 * w0 * 1 + 2 * w1 * 2
    pre, blind = (2 * w0 * 1 + 2 * w1 * 1) / gold, (2 * w0 * 2 + 2 * w1 * 1) / gold
    figures = report["figures"]
    assert figures["minutes_per_mention_pre"]["value"] == pytest.approx(pre, abs=1e-12)
    assert figures["minutes_per_mention_blind"]["value"] == pytest.approx(blind, abs=1e-12)
    assert figures["time_saving"]["value"] == pytest.approx(1 - pre / blind, abs=1e-12)
    assert report["design"]["population_docs"] == pytest.approx(20.5, abs=1e-9)
    assert report["design"]["weights"] == "1/p_incl" and report["design"]["n_docs"] == 4
    # The settled gold alone (the 4 pairs, α = 1/2 each) would weigh 1.5 and 2: 7/11 minutes.
    assert abs(figures["minutes_per_mention_pre"]["value"] - 7 / 11) > 0.05


def test_effect_warns_when_people_are_not_crossed(
    label_studio: Any, kb: KB, tmp_path, cli: Cli
) -> None:
    """alice annotates every blind document with candidates and bob every one without: what
    differs between them and what the candidates do cannot be told apart."""
    docs = [_document(f"u:{i}", "a", 0.5, 2, 0) for i in range(3)]
    name, people = _annotated_both_ways(label_studio, kb, "unx", docs, lambda i: ("alice", "bob"))
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token,
           "COLUMNS": "200"}  # fmt: skip
    report_path = tmp_path / "effect.json"
    done = cli("effect", "--project", name, "--json", report_path, "--png",
               tmp_path / "effect.png", "--bootstrap", 20, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    alice, bob = people["alice"].email, people["bob"].email
    assert json.loads(report_path.read_text())["crossing"] == {
        "crossed": False, "only_with_candidates": [alice], "only_without_candidates": [bob],
    }  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if "not crossed" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: people are not crossed")
    assert done.out.count("not crossed") == 1
    assert (
        f"({alice} only with candidates; {bob} only without): the effect of the person" in done.out
    )


def test_effect_on_a_gold_mixing_documents_without_p_incl_says_so_in_its_own_words(
    label_studio: Any, kb: KB, tmp_path, cli: Cli
) -> None:
    # effect has no --design option: the refusal names the document and what to mend, not an
    # option it does not have.
    docs = [_document(f"m:{i}", "a", 0.5, 2, 0) for i in range(3)]
    docs[1] = docs[1].model_copy(update={"p_incl": None})
    name, _ = _annotated_both_ways(label_studio, kb, "mix", docs, lambda i: ("alice", "bob"))
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    done = cli("effect", "--project", name, "--json", tmp_path / "effect.json", "--png",
               tmp_path / "effect.png", "--bootstrap", 20, env=env)  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "'m:1'" in line and "has no p_incl" in line and "every task" in line
    assert "--design" not in line and "ignore" not in line and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []
