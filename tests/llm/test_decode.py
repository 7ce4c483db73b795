"""Decoding the model's items per the LLM contract, with the real KB and real spaCy."""

from __future__ import annotations

from typing import Any

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.llm import LLMError, LLMResponse
from goldloop.llm.decode import DocumentResult, Rejection, decode_answer, nearest_occurrence

TEXT = (
    "IL-6 is activated by TNF in macrophages. TNF binds to TNFR1 and increases apoptosis, whereas "
    "the activation of STAT3 was rare. STAT3 increases survival and leads to relapse."
)


def decode(
    items: list[dict[str, Any]] | str,
    kb: KB,
    nlp: Any,
    *,
    verbal_only: bool = True,
    text: str = TEXT,
) -> DocumentResult:
    import json

    answer = items if isinstance(items, str) else json.dumps({"mentions": items})
    document = Document(doc_id="pmid:1", text=text)
    return decode_answer(
        document,
        LLMResponse(answer, False, {"output_tokens": 9}),
        nlp(text),
        kb,
        "m@low",
        verbal_only,
    )


def item(
    surface: str, label: str, direction: str = "forward", occurrence: int = 1, **extra: Any
) -> dict[str, Any]:
    return {
        "surface": surface,
        "occurrence": occurrence,
        "label": label,
        "direction": direction,
        **extra,
    }


def hits_of(result: DocumentResult) -> list[dict[str, Any]]:
    assert result.document is not None
    return [hit.to_json() for hit in result.document.ground_truth]


def reasons_of(result: DocumentResult) -> list[list[str]]:
    return [r.reasons for r in result.rejections]


def test_converse_label_maps_to_canonical_with_direction_flipped(kb: KB, nlp: Any) -> None:
    result = decode(
        [item("activated by", "Activated By", subject_text="IL-6", object_text="TNF")], kb, nlp
    )
    [hit] = hits_of(result)
    assert hit["entity_id"] == kb.lookup("activates").entity_id
    assert hit["label"] == "activated by"
    assert hit["direction"] == "inverse"
    assert hit["label_canonicalized"] is True
    assert (hit["a"], hit["b"], hit["surface"]) == (8, 20, "activated by")
    # the arguments are rewritten in the canonical reading: TNF activates IL-6
    assert (hit["subject_text"], hit["subject_span"]) == ("TNF", [21, 24])
    assert (hit["object_text"], hit["object_span"]) == ("IL-6", [0, 4])
    assert hit["annotator"] == "m@low" and hit["source"] == "llm"


def test_symmetric_relation_is_coerced_and_flagged(kb: KB, nlp: Any) -> None:
    [hit] = hits_of(decode([item("binds to", "binds to", "forward")], kb, nlp))
    assert hit["direction"] == "symmetric" and hit["direction_coerced"] is True


def test_na_is_allowed_on_any_relation(kb: KB, nlp: Any) -> None:
    [hit] = hits_of(decode([item("increases", "increases", "na")], kb, nlp))
    assert hit["direction"] == "na"
    assert "direction_coerced" not in hit


def test_bad_directions_are_rejected(kb: KB, nlp: Any) -> None:
    result = decode(
        [
            item("increases", "increases", "symmetric"),
            item("increases", "increases", "upward", occurrence=2),
            item("leads to", "causes", None),
        ],  # type: ignore[arg-type]
        kb,
        nlp,
    )
    assert hits_of(result) == []
    assert reasons_of(result) == [["bad_direction"], ["bad_direction"], ["bad_direction"]]


def test_unknown_label_is_rejected_with_the_item(kb: KB, nlp: Any) -> None:
    result = decode([item("increases", "upregulates strongly")], kb, nlp)
    assert hits_of(result) == []
    assert [r.to_dict() for r in result.rejections] == [
        {
            **item("increases", "upregulates strongly"),
            "doc_id": "pmid:1",
            "reasons": ["unknown_label"],
        }
    ]


def test_every_reason_of_an_item_is_reported(kb: KB, nlp: Any) -> None:
    result = decode([item("decreases", "lowers", "up")], kb, nlp)
    assert reasons_of(result) == [["unknown_label", "bad_direction", "surface_not_found"]]


def test_nested_span_is_dropped(kb: KB, nlp: Any) -> None:
    result = decode(
        [
            item("activated", "activates", "inverse"),
            item("is activated by", "activates", "inverse"),
        ],
        kb,
        nlp,
    )
    [hit] = hits_of(result)
    assert hit["surface"] == "is activated by"
    assert reasons_of(result) == [["nested_in_longer_span"]]


def test_repeated_surfaces_claim_occurrences_in_order(kb: KB, nlp: Any) -> None:
    items = [
        item("increases", "increases", occurrence=2),
        item("increases", "increases"),
        item("increases", "increases"),
    ]
    result = decode(items, kb, nlp)
    spans = [(h["a"], h["b"]) for h in hits_of(result)]
    first, second = TEXT.index("increases"), TEXT.index("increases", TEXT.index("increases") + 1)
    assert spans == [(first, first + 9), (second, second + 9)]
    assert reasons_of(result) == [["duplicate_occurrence"]]


def test_occurrence_beyond_the_count_falls_back_and_is_flagged(kb: KB, nlp: Any) -> None:
    [hit] = hits_of(decode([item("increases", "increases", occurrence=7)], kb, nlp))
    assert hit["occurrence_fallback"] is True and hit["a"] == TEXT.index("increases")


def test_surface_not_verbatim_is_not_found(kb: KB, nlp: Any) -> None:
    result = decode([item("Increases", "increases"), item("increase", "increases")], kb, nlp)
    assert reasons_of(result) == [["surface_not_found"], ["surface_not_found"]]


def test_malformed_items_are_reported(kb: KB, nlp: Any) -> None:
    result = decode([42, {"label": "increases", "direction": "forward"}], kb, nlp)  # type: ignore[list-item]
    assert result.items == 2
    assert result.rejections[0].to_dict() == {
        "item": 42,
        "doc_id": "pmid:1",
        "reasons": ["malformed_item", "unknown_label", "bad_direction"],
    }
    assert reasons_of(result)[1] == ["malformed_item"]


def test_non_verbal_is_rejected_unless_switched_off(kb: KB, nlp: Any) -> None:
    items = [item("activation", "activates")]
    assert reasons_of(decode(items, kb, nlp)) == [["non_verbal"]]
    [hit] = hits_of(decode(items, kb, nlp, verbal_only=False))
    assert hit["surface"] == "activation"


def test_anchored_versus_paraphrase(kb: KB, nlp: Any) -> None:
    result = decode([item("increases", "increases"), item("leads to", "causes")], kb, nlp)
    anchored = {h["surface"]: h["surface_anchored"] for h in hits_of(result)}
    assert anchored == {"increases": True, "leads to": False}


def test_confidence_is_kept_when_numeric(kb: KB, nlp: Any) -> None:
    result = decode(
        [
            item("increases", "increases", confidence=0.75),
            item("leads to", "causes", confidence="high"),
        ],
        kb,
        nlp,
    )
    assert [h.get("confidence") for h in hits_of(result)] == [0.75, None]


def test_unparsable_truncated_and_failed_answers_fail_the_document(kb: KB, nlp: Any) -> None:
    document = Document(doc_id="d", text=TEXT)
    doc = nlp(TEXT)
    unparsable = decode_answer(
        document, LLMResponse("Sure! Here are the mentions", False), doc, kb, "m"
    )
    truncated = decode_answer(
        document, LLMResponse('{"mentions": [', True), doc, kb, "m", max_tokens=10
    )
    failed = decode_answer(document, LLMError("gemini m: HTTP 500"), doc, kb, "m")
    for result, reason in (
        (unparsable, "unparsable"),
        (truncated, "truncated"),
        (failed, "failed"),
    ):
        assert result.document is None and result.failure is not None
        assert result.failure.reason == reason and result.items == 0
    # The report rows: an unparsable answer's start after the reason and the detail.
    assert unparsable.failure is not None and truncated.failure is not None
    assert unparsable.failure.to_dict() == {
        "reason": "unparsable",
        "detail": unparsable.failure.detail,
        "answer": "Sure! Here are the mentions",
    }
    assert list(unparsable.failure.to_dict()) == ["reason", "detail", "answer"]
    assert truncated.failure.to_dict() == {
        "reason": "truncated",
        "detail": "the answer stopped at the token limit (10)",
    }


def test_nearest_occurrence_picks_the_closest_to_the_mention() -> None:
    text = "TNF here. IL-6 is activated by TNF."
    mention = text.index("activated by")
    assert nearest_occurrence(text, "TNF", mention, mention + 12) == (31, 34)
    assert nearest_occurrence(text, "absent", 0, 1) is None
    assert nearest_occurrence("TNFR1 binds TNF", "TNF", 6, 11) == (12, 15)  # not inside TNFR1
    assert nearest_occurrence(text, None, 0, 1) is None


def test_unicode_surfaces_resolve_on_code_points(kb: KB, nlp: Any) -> None:
    text = "𝛼-synuclein 🧪 increases TNF\u00a0levels and TNF increases 𝛽 levels."
    result = decode(
        [item("increases", "increases", occurrence=2), item("TNF levels", "increases")],
        kb,
        nlp,
        text=text,
    )
    [hit] = hits_of(result)
    assert text[hit["a"] : hit["b"]] == "increases" and hit["a"] == text.rindex("increases")
    assert reasons_of(result) == [["surface_not_found"]]  # a non-breaking space is not a space


def test_a_rejection_keeps_the_items_keys_first_its_own_doc_id_and_reasons_last() -> None:
    rejection = Rejection.of_item({"label": "x", "surface": "y"}, "pmid:1", ["unknown_label"])
    assert list(rejection.to_dict()) == ["label", "surface", "doc_id", "reasons"]
    # An item naming a doc_id keeps the key where it wrote it, holding the document's.
    clash = Rejection.of_item({"doc_id": "other", "label": "x"}, "pmid:1", ["r"]).to_dict()
    assert clash == {"doc_id": "pmid:1", "label": "x", "reasons": ["r"]}
    assert list(clash) == ["doc_id", "label", "reasons"]
