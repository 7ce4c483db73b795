"""Interactive suggestions: the KB first, the LLM for the rest, through a real Label Studio too."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from goldloop.backend.config import AnnotatorSpec, BackendSettings
from goldloop.backend.interactive import KB_SCORE, LLM_SCORE, Suggester, drawn_region
from goldloop.backend.predictor import Predictor
from goldloop.backend.protocol import Task
from goldloop.kb import KB
from goldloop.studio.label_config import render_label_config
from goldloop.text.lexical import LexicalAnnotator
from goldloop.text.parsing import Parsing
from tests.backend.conftest import RunningBackend, llm_settings, running_backend, span_of
from tests.conftest import environment_parsing
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, llm_server

__all__ = ["llm_server"]

# Astral characters before every region: Label Studio counts code points, so must we.
TEXT = (
    "𝛼-Synuclein activates TNF 😀, and IL-6 boosts IL-8. 🧬 Aspirin activates IL-6 and boosts TNF."
)
_titles = itertools.count()


def drawn(text: str, surface: str, rid: str = "drawn-1", nth: int = 0) -> dict[str, Any]:
    """The context Label Studio sends when an annotator draws a region over ``surface``."""
    start = [i for i in range(len(text)) if text.startswith(surface, i)][nth]
    return {"result": [{
        "id": rid, "from_name": "mention", "to_name": "text", "type": "labels", "origin": "manual",
        "value": {"start": start, "end": start + len(surface), "text": surface, "labels": ["Predicate"]},
    }]}  # fmt: skip


def predicted(
    text: str, surface: str, relation: str, direction: str, nth: int = 0
) -> list[dict[str, Any]]:
    """A pre-annotated region as the editor holds it in a context: its span, relation and
    direction items under one id (the review prediction's ``m{a}_{b}``)."""
    start = [i for i in range(len(text)) if text.startswith(surface, i)][nth]
    end = start + len(surface)
    common = {"id": f"m{start}_{end}", "to_name": "text", "origin": "prediction"}
    span = {"start": start, "end": end, "text": surface}
    return [
        {**common, "from_name": "mention", "type": "labels", "value": {**span, "labels": ["Predicate"]}},
        {**common, "from_name": "relation", "type": "taxonomy", "value": {**span, "taxonomy": [[relation]]}},
        {**common, "from_name": "direction", "type": "choices", "value": {**span, "choices": [direction]}},
    ]  # fmt: skip


def editor_context(
    text: str, *regions: list[dict[str, Any]], new: str | None = None
) -> dict[str, Any]:
    """What Label Studio 1.23.2's editor sends with Auto-Annotation on: every region of the task
    with goldloop's label, pre-annotated ones first with their per-region results, the region just
    drawn (``new``) last; without ``new``, the context of a deletion or of Submit's teardown."""
    items = [item for region in regions for item in region]
    if new is not None:
        items += drawn(text, new)["result"]
    return {"result": items}


def regions(items: list[dict[str, Any]]) -> dict[tuple[str, int, int], dict[str, Any]]:
    """Items by (region id, start, end): each region's relation, direction and score."""
    out: dict[tuple[str, int, int], dict[str, Any]] = {}
    for item in items:
        key = (item["id"], item["value"]["start"], item["value"]["end"])
        entry = out.setdefault(key, {})
        entry["score"] = item["score"]
        if item["from_name"] == "relation":
            entry["relation"] = item["value"]["taxonomy"][0][0]
        if item["from_name"] == "direction":
            entry["direction"] = item["value"]["choices"][0]
        if item["from_name"] == "mention":
            entry["source"] = item["meta"]["source"]
    return out


def answer_boosts(request: FakeRequest) -> str:
    assert "Phrase: boosts" in request.user and "Sentence:" in request.user
    return json.dumps({"label": "upregulates", "direction": "forward"})


def test_a_kb_match_keeps_the_drawn_id_and_suggests_the_other_occurrences(kb: KB) -> None:
    items = Suggester(kb, Parsing()).suggest(
        Task(id=1, data={"text": TEXT}), drawn(TEXT, "activates")
    )
    first, second = (
        span_of(TEXT, "activates"),
        (TEXT.rindex("activates"), TEXT.rindex("activates") + 9),
    )
    assert regions(items) == {
        ("drawn-1", *first): {"relation": "activates", "direction": "forward", "score": KB_SCORE, "source": "kb"},
        (f"m{second[0]}_{second[1]}", *second): {
            "relation": "activates", "direction": "forward", "score": KB_SCORE, "source": "kb"
        },
    }  # fmt: skip


def test_a_proposal_is_marked_as_a_predictions_region_and_can_be_turned_off(kb: KB) -> None:
    """The other occurrence's items say ``origin: "prediction"``: Label Studio marks the region
    as a prediction's and ``pull`` records it as ``proposed`` while untouched
    (test_interactive_editor shows both in the real editor); the drawn region's items carry no
    origin, so the editor keeps the drawn region's own."""
    task, context = Task(id=1, data={"text": TEXT}), drawn(TEXT, "activates")
    items = Suggester(kb, Parsing()).suggest(task, context)
    assert {(item["id"], item.get("origin")) for item in items} == {
        ("drawn-1", None), (f"m{TEXT.rindex('activates')}_{TEXT.rindex('activates') + 9}", "prediction"),
    }  # fmt: skip
    alone = Suggester(kb, Parsing(), proposals=False).suggest(task, context)
    assert {item["id"] for item in alone} == {"drawn-1"} and len(alone) == 3


def test_every_item_carries_its_global_offsets(kb: KB) -> None:
    """Label Studio 1.23.2's editor copies an accepted suggestion onto the drawn region without
    computing its offsets: without ``globalOffsets`` the region's next redraw throws and the next
    region drawn on the page is never finished (see test_interactive_editor)."""
    items = Suggester(kb, Parsing()).suggest(
        Task(id=1, data={"text": TEXT}), drawn(TEXT, "activates")
    )
    assert len(items) == 6
    for item in items:
        value = item["value"]
        assert value["globalOffsets"] == {"start": value["start"], "end": value["end"]}


def test_a_converse_label_is_folded_to_the_canonical_relation_inverse(kb: KB) -> None:
    text = "IL-6 is inhibited by aspirin."
    items = Suggester(kb, Parsing()).suggest(
        Task(id=1, data={"text": text}), drawn(text, "inhibited by")
    )
    assert regions(items)[("drawn-1", *span_of(text, "inhibited by"))] == {
        "relation": "inhibits", "direction": "inverse", "score": KB_SCORE, "source": "kb"
    }  # fmt: skip


def test_an_occurrence_already_in_a_region_gets_no_suggestion(kb: KB) -> None:
    a, b = TEXT.rindex("activates"), TEXT.rindex("activates") + 9
    review = {"model_version": "review:x", "result": [{
        "id": "p1", "from_name": "mention", "to_name": "text", "type": "labels",
        "value": {"start": a, "end": b, "text": "activates", "labels": ["Predicate"]},
    }]}  # fmt: skip
    task = Task(id=1, data={"text": TEXT}, predictions=[review])
    items = Suggester(kb, Parsing()).suggest(task, drawn(TEXT, "activates"))
    assert {key[0] for key in regions(items)} == {"drawn-1"}


def test_the_drawn_region_is_the_new_one_after_the_pre_annotated_regions(kb: KB) -> None:
    """The editor sends the pre-annotated regions first: the answer names the drawn region only,
    never an id the annotator already has (the editor would replace that region)."""
    text = "TNF activates IL-6, and aspirin inhibits IL-8, while IL-1 activates TNF."
    context = editor_context(
        text,
        predicted(text, "activates", "activates", "forward"),
        predicted(text, "inhibits", "inhibits", "na"),
        new="activates",  # the first occurrence is taken: drawn over the second
    )
    context["result"][-1]["value"] = {
        **context["result"][-1]["value"], "start": text.rindex("activates"),
        "end": text.rindex("activates") + 9,
    }  # fmt: skip
    items = Suggester(kb, Parsing()).suggest(Task(id=1, data={"text": text}), context)
    second = text.rindex("activates")
    assert regions(items) == {
        ("drawn-1", second, second + 9): {
            "relation": "activates", "direction": "forward", "score": KB_SCORE, "source": "kb"
        }
    }  # fmt: skip
    assert drawn_region(text, context) is not None


def test_a_context_without_a_new_region_gets_an_empty_answer(kb: KB) -> None:
    """A deletion and Submit's teardown send the regions left, each with its relation."""
    text = "TNF activates IL-6, and aspirin inhibits IL-8."
    left = editor_context(
        text,
        predicted(text, "activates", "activates", "forward"),
        predicted(text, "inhibits", "inhibits", "na"),
    )
    assert drawn_region(text, left) is None
    assert Suggester(kb, Parsing()).suggest(Task(id=1, data={"text": text}), left) == []
    assert Suggester(kb, Parsing()).suggest(Task(id=1, data={"text": text}), {"result": []}) == []


def test_a_drawn_region_that_got_its_relation_is_not_new_any_more(kb: KB) -> None:
    """After the annotator picked a relation for the drawn region, a later call (another
    deletion) must not answer for it again and undo the choice."""
    text = "TNF activates IL-6, and aspirin inhibits IL-8."
    context = editor_context(text, predicted(text, "inhibits", "inhibits", "na"), new="activates")
    context["result"].append(
        {"id": "drawn-1", "from_name": "relation", "to_name": "text", "type": "taxonomy",
         "origin": "manual", "value": {"taxonomy": [["regulates"]]}}
    )  # fmt: skip
    assert drawn_region(text, context) is None


def test_without_a_manual_origin_the_last_region_without_a_relation_is_drawn(kb: KB) -> None:
    text = "TNF activates IL-6, and aspirin inhibits IL-8, and IL-1 activates it."
    context = editor_context(text, predicted(text, "inhibits", "inhibits", "na"))
    for rid, nth in (("first", 0), ("second", 1)):
        (item,) = drawn(text, "activates", rid=rid, nth=nth)["result"]
        del item["origin"]
        context["result"].append(item)
    chosen = drawn_region(text, context)
    assert chosen is not None and chosen.id == "second"


def test_an_occurrence_whose_id_the_editor_holds_gets_no_suggestion(kb: KB) -> None:
    """A region the annotator moved keeps its old id: a new region under that id would replace it."""
    text = "TNF activates IL-6, and IL-1 activates TNF."
    second = text.rindex("activates")
    moved = [{"id": f"m{second}_{second + 9}", "from_name": "mention", "to_name": "text",
              "type": "labels", "value": {"start": 0, "end": 3, "text": "TNF", "labels": ["Predicate"]}},
             {"id": f"m{second}_{second + 9}", "from_name": "relation", "to_name": "text",
              "type": "taxonomy", "value": {"start": 0, "end": 3, "taxonomy": [["regulates"]]}}]  # fmt: skip
    context = editor_context(text, moved, new="activates")
    items = Suggester(kb, Parsing()).suggest(Task(id=1, data={"text": text}), context)
    assert {key[0] for key in regions(items)} == {"drawn-1"}


@pytest.mark.parametrize(
    "context",
    [
        None,
        "a string",
        {"result": "not a list"},
        {"result": [{"from_name": "other", "value": {"start": 12, "end": 21}}]},
        {"result": [{"from_name": "mention", "value": {"start": 21, "end": 12}}]},
        {"result": [{"from_name": "mention", "value": {"start": 12, "end": 9999}}]},
        {"result": [{"from_name": "mention", "value": {"start": "12", "end": 21}}]},
        # the editor's text differs from the task's: nothing can be said about it
        {
            "result": [
                {"from_name": "mention", "value": {"start": 12, "end": 21, "text": "inhibits"}}
            ]
        },
    ],
)
def test_an_unusable_context_gets_an_empty_result(kb: KB, context: object) -> None:
    assert drawn_region(TEXT, context) is None
    assert Suggester(kb, Parsing()).suggest(Task(id=1, data={"text": TEXT}), context) == []


def test_the_llm_names_what_the_kb_cannot_and_its_answer_is_cached(
    kb: KB, nlp: Any, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.answer = answer_boosts
    settings = llm_settings(llm_server, tmp_path / "cache.sqlite")
    predictor = Predictor.from_settings(settings)
    task = Task(id=1, data={"text": TEXT})
    items = predictor.suggester.suggest(task, drawn(TEXT, "boosts"))
    tag = predictor.annotator.tag
    a = TEXT.index("boosts")
    b = TEXT.rindex("boosts")
    assert regions(items) == {
        ("drawn-1", a, a + 6): {"relation": "upregulates", "direction": "forward", "score": LLM_SCORE, "source": tag},
        (f"m{b}_{b + 6}", b, b + 6): {
            "relation": "upregulates", "direction": "forward", "score": LLM_SCORE, "source": tag
        },
    }  # fmt: skip
    # one short request per sentence, each holding only its sentence
    assert llm_server.request_count == 2
    assert sorted("IL-8" in r.user for r in llm_server.requests) == [False, True]
    assert not any("IL-8" in r.user and "Aspirin" in r.user for r in llm_server.requests)
    assert predictor.suggester.suggest(task, drawn(TEXT, "boosts")) == items
    assert llm_server.request_count == 2  # both answers came from the cache


def test_an_llm_label_outside_the_kb_suggests_nothing(
    kb: KB, nlp: Any, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.answer = lambda _: json.dumps({"label": "teleports", "direction": "forward"})
    predictor = Predictor.from_settings(llm_settings(llm_server, tmp_path / "cache.sqlite"))
    assert predictor.suggester.suggest(Task(id=1, data={"text": TEXT}), drawn(TEXT, "boosts")) == []


def test_an_unparsable_llm_answer_is_not_cached_and_is_asked_again(
    kb: KB, nlp: Any, llm_server: FakeLLMServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.answer = lambda _: "upregulates, forward"  # not JSON
    predictor = Predictor.from_settings(llm_settings(llm_server, tmp_path / "cache.sqlite"))
    task, context = Task(id=1, data={"text": TEXT}), drawn(TEXT, "boosts")
    with caplog.at_level("INFO", logger="goldloop.backend"):
        assert predictor.suggester.suggest(task, context) == []
    tag = predictor.suggester.provider.tag if predictor.suggester.provider else None
    assert f"suggestions from {tag}: {llm_server.request_count} unparsable" in caplog.text
    asked = llm_server.request_count
    llm_server.answer = answer_boosts
    assert predictor.suggester.suggest(task, context) != []
    assert llm_server.request_count == 2 * asked  # asked again, not served from the cache


# ---------------------------------------------------------------------------------------------
# Through Label Studio's interactive-annotating endpoint


@pytest.fixture(scope="module")
def lexical_backend(kb: KB) -> Iterator[RunningBackend]:
    predictor = Predictor(kb, LexicalAnnotator(kb), parsing=environment_parsing())
    with running_backend(BackendSettings(annotator=AnnotatorSpec("lexical")), predictor) as backend:
        yield backend


def interactive_project(label_studio: Any, kb: KB, backend: RunningBackend) -> tuple[int, int]:
    """A project with TEXT as its task, the backend connected as interactive: (ml id, task id)."""
    studio = label_studio.studio
    project = studio.sdk.projects.create(
        title=f"interactive-{next(_titles)}", label_config=render_label_config(kb)
    )
    imported = studio.sdk.projects.import_tasks(
        id=project.id, request=[{"data": {"text": TEXT, "doc_id": "d1"}}], return_task_ids=True
    )
    ml = studio.sdk.ml.create(
        project=project.id, url=backend.url, title=backend.predictor.model_version,
        is_interactive=True,
    )  # fmt: skip
    return ml.id, imported.task_ids[0]


def ask_interactive(label_studio: Any, ml_id: int, task_id: int, context: object) -> dict[str, Any]:
    """The raw answer of ``/api/ml/{id}/interactive-annotating`` (the SDK's method drops it)."""
    response = httpx.post(
        f"{label_studio.url}/api/ml/{ml_id}/interactive-annotating",
        json={"task": task_id, "context": context},
        headers={"Authorization": f"Token {label_studio.token}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.studio
def test_label_studio_gets_the_suggestion_on_the_drawn_regions_offsets(
    label_studio: Any, kb: KB, lexical_backend: RunningBackend
) -> None:
    ml_id, task_id = interactive_project(label_studio, kb, lexical_backend)
    # The task already holds the backend's review prediction: a context must not be skipped.
    label_studio.studio.sdk.predictions.create(
        task=task_id, result=[], model_version=lexical_backend.predictor.model_version
    )
    context = drawn(TEXT, "activates", rid="xYz12")
    body = ask_interactive(label_studio, ml_id, task_id, context)
    assert "errors" not in body
    found = regions(body["data"]["result"])
    start, end = span_of(TEXT, "activates")
    assert found[("xYz12", start, end)]["relation"] == "activates"
    assert TEXT[start:end] == "activates" and start > 0 and TEXT[:start].count("𝛼") == 1
    # a region over something the KB does not know, without an LLM: an empty answer, no error
    body = ask_interactive(label_studio, ml_id, task_id, drawn(TEXT, "boosts"))
    assert "errors" not in body and body["data"]["result"] == []
    body = ask_interactive(label_studio, ml_id, task_id, {"result": [{"from_name": "x"}]})
    assert "errors" not in body and body["data"]["result"] == []


@pytest.mark.studio
def test_label_studio_gets_an_llm_suggestion_after_astral_characters(
    label_studio: Any, kb: KB, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.answer = answer_boosts
    settings = llm_settings(llm_server, tmp_path / "cache.sqlite")
    with running_backend(settings, Predictor.from_settings(settings)) as backend:
        ml_id, task_id = interactive_project(label_studio, kb, backend)
        body = ask_interactive(label_studio, ml_id, task_id, drawn(TEXT, "boosts", nth=1))
    assert "errors" not in body
    found = regions(body["data"]["result"])
    second = TEXT.rindex("boosts")
    first = TEXT.index("boosts")
    assert found[("drawn-1", second, second + 6)]["relation"] == "upregulates"
    assert found[(f"m{first}_{first + 6}", first, first + 6)]["direction"] == "forward"
    assert TEXT[:second].count("🧬") == 1


def test_an_ambiguous_kb_match_goes_to_the_llm(
    kb: KB, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    # two KB mentions under one drawn region: the KB cannot pick, the LLM does
    text = "TNF activates or inhibits IL-6 depending on the dose."
    llm_server.answer = lambda _: json.dumps({"label": "regulates", "direction": "forward"})
    predictor = Predictor.from_settings(llm_settings(llm_server, tmp_path / "cache.sqlite"))
    items = predictor.suggester.suggest(
        Task(id=1, data={"text": text}), drawn(text, "activates or inhibits")
    )
    (region,) = regions(items).values()
    assert region["source"] == predictor.annotator.tag and region["score"] == LLM_SCORE
    assert region["relation"] == "regulates" and llm_server.request_count == 1
    assert "Phrase: activates or inhibits" in llm_server.requests[0].user
