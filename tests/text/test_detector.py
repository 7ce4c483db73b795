"""The lexical mention detector on real sentences with real spaCy: voice, sites, and the
detected spans passing the checks decoding applies."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import spacy
from spacy.language import Language

from goldloop.kb import KB
from goldloop.text.detector import DetectedMention, detect_many, detect_mentions
from goldloop.text.nlp import (
    is_verb_predicate_label,
    parse_many,
    pipeline_of,
    span_has_verb,
    surface_anchored,
)
from goldloop.text.parsing import Parsing


def found(nlp: Language, kb: KB, text: str) -> list[tuple[str, str, str, str]]:
    mentions = detect_mentions(nlp(text), kb)
    for m in mentions:
        assert text[m.a : m.b] == m.surface
    return [(m.surface, m.entity_id, m.label, m.direction) for m in mentions]


SENTENCES = [
    pytest.param(
        "In hepatocytes, IL-6 activates STAT3, which in turn upregulates SOCS3.",
        [
            ("activates", "PEL.000000", "activates", "forward"),
            ("upregulates", "PEL.000037", "upregulates", "forward"),
        ],
        id="active voice: canonical label, forward",
    ),
    pytest.param(
        "IL-6 was shown to be regulated by TNF and increases expression of STAT3.",
        [
            ("regulated by", "RO.0002211", "regulated by", "inverse"),
            ("increases expression of", "RO.0003003", "increases expression of", "forward"),
        ],
        id="passive voice: converse label folded, inverse",
    ),
    pytest.param(
        "Caspase-8 activates caspase-3, and caspase-3 is activated by caspase-8.",
        [
            ("activates", "PEL.000000", "activates", "forward"),
            ("activated by", "PEL.000000", "activated by", "inverse"),
        ],
        id="both voices of one verb share the canonical id",
    ),
    pytest.param(
        # "expressed in" is the converse of the canonical "expresses".
        "The transporter is expressed in renal proximal tubules.",
        [("expressed in", "RO.0002292", "expressed in", "inverse")],
        id="converse flip of a non-by passive",
    ),
    pytest.param(
        "The cargo is transported by kinesin along microtubules.",
        [("transported", "RO.0002020", "transports", "inverse")],
        id="passive without a converse label: active label, inverse",
    ),
    pytest.param(
        "TNF has regulated IL-6 and has been regulated by NF-kB.",
        [
            ("regulated", "RO.0002211", "regulates", "forward"),
            ("regulated by", "RO.0002211", "regulated by", "inverse"),
        ],
        id="perfect tense is active",
    ),
    pytest.param(
        "The receptor interacts with beta-arrestin and binds directly to ubiquitin.",
        [
            ("interacts with", "RO.0002434", "interacts with", "symmetric"),
            ("binds directly to", "PEL.000003", "binds to", "symmetric"),
        ],
        id="symmetric labels coerced",
    ),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCES)
def test_voice_decides_the_label(
    nlp: Language, kb: KB, text: str, expected: list[tuple[str, str, str, str]]
) -> None:
    assert found(nlp, kb, text) == expected


def test_one_label_per_site_longest_wins(nlp: Language, kb: KB) -> None:
    text = "IL-6 is negatively regulated by SOCS3 in macrophages."
    mentions = detect_mentions(nlp(text), kb)
    assert [(m.surface, m.label, m.entity_id, m.direction) for m in mentions] == [
        ("negatively regulated by", "negatively regulated by", "RO.0002212", "inverse")
    ]


def test_mentions_never_share_a_token(nlp: Language, kb: KB) -> None:
    text = (
        "Phosphorylation of STAT3 was inhibited by AG490. Caspase-3 is degraded by the "
        "proteasome and regulates levels of PARP; the complex has a part in DNA repair and "
        "is associated with disease. Mutations are positively correlated with tumour size."
    )
    mentions = detect_mentions(nlp(text), kb)
    assert len(mentions) >= 5
    for first, second in itertools.pairwise(mentions):
        assert first.b <= second.a
    assert {m.label for m in mentions} >= {
        "inhibited by",
        "degraded by",
        "regulates levels of",
        "has part",
        "associated with",
        "positively correlated with",
    }


def test_nouns_do_not_match_verb_labels(nlp: Language, kb: KB) -> None:
    text = "An increase in IL-6 and the inhibition of JAK2 followed the regulation of STAT3."
    assert found(nlp, kb, text) == []


def test_noun_labels_match_by_lemma_window(nlp: Language, kb: KB) -> None:
    text = "Aspirin is an agonist of the receptor, and the complex has parts in the nucleus."
    mentions = detect_mentions(nlp(text), kb)
    assert [(m.surface, m.entity_id, m.verbal) for m in mentions] == [
        ("is an agonist of", "RO.0018027", False),
        ("has parts", "BFO.0000051", False),
    ]


def test_a_noun_label_word_modifying_another_noun_is_no_mention(nlp: Language, kb: KB) -> None:
    # "has host" would read "has a host"; here "host" only modifies "range".
    assert found(nlp, kb, "The virus has a host range that includes primates.") == []


def test_adjectival_participle_is_a_passive_site(nlp: Language, kb: KB) -> None:
    text = "Smoking-induced damage was reduced in mice."
    labels = [
        (m.surface, m.label, m.entity_id, m.direction) for m in detect_mentions(nlp(text), kb)
    ]
    assert ("induced", "induced by", "PEL.000017", "inverse") in labels
    assert ("reduced", "reduced by", "PEL.000029", "inverse") in labels


def test_mentions_are_frozen_dataclasses(nlp: Language, kb: KB) -> None:
    (mention,) = detect_mentions(nlp("TNF induces apoptosis."), kb)
    assert mention == DetectedMention(4, 11, "induces", "PEL.000017", "induces", "forward", True)
    with pytest.raises(AttributeError):
        mention.a = 0  # type: ignore[misc]


def test_detect_many_equals_detect_one_by_one(nlp: Language, kb: KB) -> None:
    texts = [
        "TNF induces apoptosis and is inhibited by IL-10.",
        "",
        "No relation is stated here.",
        "𝛼-synuclein is degraded by autophagy; TNF-α activates NF-κB.",
    ]
    many = detect_many(texts, kb, batch_size=2)
    assert many == [detect_mentions(nlp(t), kb) for t in texts]
    assert [len(m) for m in many][:3] == [2, 0, 0]
    astral = many[3]
    assert [(texts[3][m.a : m.b], m.label) for m in astral] == [
        ("degraded by", "degraded by"),
        ("activates", "activates"),
    ]


def test_detected_mentions_are_anchored_and_verbal_ones_have_verbs(nlp: Language, kb: KB) -> None:
    text = (
        "Interleukin-6 (IL-6) is a pleiotropic cytokine whose expression is tightly controlled "
        "by transcription factors. IL-6 activates STAT3, which upregulates SOCS3 and is "
        "negatively regulated by PIAS3. The protein binds to DNA and is associated with tumour "
        "growth."
    )
    doc = nlp(text)
    mentions = detect_mentions(doc, kb)
    assert len(mentions) == 6
    for m in mentions:
        relation = kb.get(m.entity_id)
        assert relation is not None
        assert surface_anchored(doc, m.a, m.b, relation)
        assert span_has_verb(doc, m.a, m.b) is m.verbal


def test_a_doc_is_read_with_the_pipeline_that_parsed_it(
    nlp: Language, kb: KB, tmp_path: Path
) -> None:
    # The same package loaded from its directory is a second pipeline (its own vocabulary and
    # name): its docs, parsed directly or served by the parse cache, are analysed with it.
    directory = str(Path(nlp.path)) if nlp.path else pytest.skip("pipeline without a path")
    text = "TNF induces apoptosis, and IL-6 is regulated by TNF."
    other = Parsing(models=(directory,), cache_path=tmp_path / "p.sqlite")
    parsed = [next(parse_many([text], other)) for _ in range(2)]  # parsed, then from the cache
    assert {pipeline_of(doc) for doc in parsed} == {directory}
    assert pipeline_of(nlp(text)) != directory
    assert pipeline_of(spacy.blank("en")("x")) == pipeline_of(nlp(text))  # another vocabulary
    expected = detect_mentions(nlp(text), kb)
    assert len(expected) == 2 and all(detect_mentions(doc, kb) == expected for doc in parsed)
    assert is_verb_predicate_label("regulated by", directory)
