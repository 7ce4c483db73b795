"""The Label Studio labeling config, generated from the KB, and the names of its controls.

The template (``relations.template.xml``, bundled, linked from ``label_config/``) holds the layout;
the KB fills in the relation picker: one choice per canonical relation, its description as hint.
A choice shows its label with the other forms a text may use for it ("inhibits (inhibited by,
inhibiting)", "upregulates (upregulated by, up-regulated, up regulated)"), because Label Studio's
Taxonomy search matches the shown text only, in the config's order; its ``alias``, which Label
Studio stores instead, is the canonical label. The choices are ordered by family
(:func:`picker_order`), so that what a typed verb form matches exactly is listed first. Region
values carry canonical labels, never ids. ``instructions.html`` (bundled beside the template) is what annotators read first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from goldloop.errors import GoldloopError

# The controls' names, re-exported: the export's reader (below the workflow) owns them.
from goldloop.formats.labelstudio.controls import CONTROLS as CONTROLS
from goldloop.formats.labelstudio.controls import DIRECTION as DIRECTION
from goldloop.formats.labelstudio.controls import NOTE as NOTE
from goldloop.formats.labelstudio.controls import OBJECT as OBJECT
from goldloop.formats.labelstudio.controls import RELATION as RELATION
from goldloop.formats.labelstudio.controls import RELATION_TYPE as RELATION_TYPE
from goldloop.formats.labelstudio.controls import SPAN as SPAN
from goldloop.formats.labelstudio.controls import SPAN_LABEL as SPAN_LABEL
from goldloop.formats.labelstudio.controls import read_relation as read_relation
from goldloop.formats.labelstudio.controls import relation_value as relation_value
from goldloop.kb import KB, Relation
from goldloop.kb.verb_forms import VerbForms, verb_forms
from goldloop.settings import SPACY_MODELS

if TYPE_CHECKING:
    from label_studio_sdk.label_interface import LabelInterface

_BUNDLED = files("goldloop") / "data" / "label_config"
TEMPLATE = Path(str(_BUNDLED / "relations.template.xml"))
INSTRUCTIONS = Path(str(_BUNDLED / "instructions.html"))
CURATE_INSTRUCTIONS = Path(str(_BUNDLED / "curate_instructions.html"))
# Shown above the annotators' instructions in NAME-blind, where nothing is pre-filled.
BLIND_INSTRUCTIONS = Path(str(_BUNDLED / "blind_instructions.html"))
MARKER = "{relation_choices}"
_HINT_CHARS = 300
# A label headed by an auxiliary ("is part of", "has input") has no verb of its own to search by.
_AUXILIARIES = frozenset(("be", "have"))
# Prefixes abstracts also write hyphenated or apart ("up-regulated", "down regulated"), when the
# rest is itself the head of a relation ("regulates").
_SPLIT_PREFIXES = ("up", "down", "co", "over", "under", "trans", "auto", "cross")
_ERRORS_SHOWN = 3
# Where a region lies on the text: checked when regions are built, not by the config.
_SPAN_KEYS = frozenset(("start", "end", "text"))
_NOT_SHAPE = frozenset(("id", "value", "meta", "score"))


class LabelConfigError(GoldloopError):
    """A project's labeling config lacks a control goldloop needs."""


def render_label_config(
    kb: KB, template: Path = TEMPLATE, models: tuple[str, ...] = SPACY_MODELS
) -> str:
    """The labeling config for ``kb``: the template with one choice per canonical relation
    (its verb forms read by the first of the spaCy pipelines ``models`` with a lemmatizer)."""
    forms = verb_forms(models)
    relations = picker_order(kb.canonical_relations(), kb, forms)
    choices = "\n".join(_choice(r, picker_forms(r, kb, forms)) for r in relations)
    return template.read_text(encoding="utf-8").replace(MARKER, choices)


def render_instructions(path: Path = INSTRUCTIONS) -> str:
    """The project instructions (HTML) Label Studio shows before the first task (curators':
    ``CURATE_INSTRUCTIONS``)."""
    return path.read_text(encoding="utf-8")


def picker_order(relations: Iterable[Relation], kb: KB, forms: VerbForms) -> list[Relation]:
    """``relations`` as the picker lists them: alphabetically by family, each family's head
    first. A relation's family is the shortest label its shown text holds as whole words (or
    after a split prefix), a one-word label also by its verb forms: "upregulates", "directly
    regulates (directly regulated by)" and "capable of regulating" are of the family of
    "regulates". The Taxonomy search keeps the config's order, so typing "regulated" lists
    "regulates" first, not sixth below "directly regulates" and "downregulates"."""
    relations = list(relations)
    shown = {r.label: _shown(r, picker_forms(r, kb, forms)).casefold() for r in relations}
    prefix = "|".join(_SPLIT_PREFIXES)
    # Each head's spellings as one pattern, compiled once: a text holds the head when it holds
    # any of them as whole words (or after a split prefix).
    heads: list[tuple[Relation, str, re.Pattern[str]]] = []
    for head in sorted(relations, key=lambda r: (len(r.label), r.label.casefold())):
        label = head.label.casefold()
        spellings = (label, *forms.inflections(label)) if " " not in label else (label,)
        words = "|".join(re.escape(spelling) for spelling in spellings)
        pattern = re.compile(rf"(?:^|[\s(,]|\b(?:{prefix})-?)(?:{words})(?:$|[\s),])")
        heads.append((head, label, pattern))

    def family(relation: Relation) -> str:
        text = shown[relation.label]
        for head, label, pattern in heads:
            if head is relation or pattern.search(text) is not None:
                return label
        return relation.label.casefold()

    def key(relation: Relation) -> tuple[str, bool, str]:
        label = relation.label.casefold()
        head = family(relation)
        return head, head != label, label

    return sorted(relations, key=key)


def picker_forms(relation: Relation, kb: KB, forms: VerbForms) -> list[str]:
    """Other forms a text may use for ``relation``, by which the picker finds it: the converse
    label, then the head verb's participle and -ing form ("inhibited by", "inhibiting"), and a
    prefixed head's participle hyphenated and apart ("up-regulated", "up regulated").

    A form another one (or the label) already contains is left out: the search matches
    substrings, so "inhibited by" finds it for "inhibited" too.
    """
    found: list[str] = []
    converse = kb.converse_of(relation.entity_id)
    if converse is not None:
        found.append(converse.label)
    words = relation.label.lower().split()
    # A present-tense head ("inhibits", "binds to"); a participle head is a form already.
    if words and words[0].endswith("s") and forms.lemma(words[0]) not in _AUXILIARIES:
        found += forms.inflections(words[0])
        found += _split_participles(words[0], kb, forms)
    kept: list[str] = []
    for form in found:
        if form not in relation.label and not any(
            form in other for other in found if other != form
        ):
            kept.append(form)
    return kept


def _split_participles(head: str, kb: KB, forms: VerbForms) -> list[str]:
    """ "upregulates" → "upregulated", "up-regulated", "up regulated": the head's participle with
    a split prefix joined, hyphenated and apart, when the rest is a relation's head verb."""
    for prefix in _SPLIT_PREFIXES:
        rest = head.removeprefix(prefix)
        if rest == head or kb.lookup(rest) is None:
            continue
        participles = [f for f in forms.inflections(rest) if not f.endswith("ing")]
        return [f"{prefix}{sep}{p}" for p in participles[:1] for sep in ("", "-", " ")]
    return []


def _shown(relation: Relation, also: list[str]) -> str:
    """What the picker shows of a relation (and its search matches)."""
    return f"{relation.label} ({', '.join(also)})" if also else relation.label


def _choice(relation: Relation, also: list[str]) -> str:
    if not also:
        return f"      <Choice value={quoteattr(relation.label)}{_hint(relation.description)}/>"
    return (
        f"      <Choice value={quoteattr(_shown(relation, also))} alias={quoteattr(relation.label)}"
        f"{_hint(relation.description)}/>"
    )


def check_label_config(config: str, where: str) -> None:
    """Raise when ``config`` lacks one of goldloop's controls (name and tag type)."""
    found = {control.name: control.tag.lower() for control in _interface(config).controls or ()}
    missing = [f"{name} ({tag})" for name, tag in CONTROLS.items() if found.get(name) != tag]
    if missing:
        raise LabelConfigError(
            f"{where}: its labeling config lacks {', '.join(missing)}; "
            "regenerate it with `goldloop label-config` or use another project name"
        )


@lru_cache(maxsize=8)
def _interface(config: str) -> LabelInterface:
    # The studio extra, and 1.4 s to import: loaded only when a config is checked.
    from label_studio_sdk.label_interface import LabelInterface

    return LabelInterface(config)


def label_interface(config: str) -> LabelInterface:
    """The parsed config (cached): used to validate every result before it is sent."""
    return _interface(config)


class PredictionChecker:
    """Label Studio's own validator (``LabelInterface``) for one labeling config, item by item.

    An item's validity depends on its control, type and chosen values, not on where its span
    lies (offsets are checked against the text when regions are built), so each distinct item
    shape is validated once: a push of thousands of documents, or a backend serving a campaign,
    meets a few dozen shapes.
    """

    def __init__(self, config: str) -> None:
        self.interface = _interface(config)
        self._known: dict[tuple[Any, ...], tuple[str, ...]] = {}

    def __call__(self, prediction: dict[str, Any]) -> list[str]:
        """Why ``prediction`` does not fit the config ([] when it fits)."""
        whole: dict[str, Any] = {"result": [], "score": prediction.get("score")}
        errors = [str(e) for e in self.interface.validate_prediction(whole, return_errors=True)]
        for item in prediction["result"]:
            key = _shape(item)
            known = self._known.get(key)
            if known is None:
                found = self.interface.validate_prediction({"result": [item]}, return_errors=True)
                known = self._known[key] = tuple(str(e) for e in found)
            errors += known
        return errors

    def require(self, where: str, prediction: dict[str, Any]) -> None:
        """Raise, naming ``where`` and the prediction's model version, when it does not fit."""
        errors = self(prediction)
        if errors:
            shown = "; ".join(e[:200] for e in errors[:_ERRORS_SHOWN])
            raise LabelConfigError(
                f"{where}: prediction {prediction.get('model_version')!r} does not fit the "
                f"labeling config ({len(errors)} errors): {shown}"
            )


@lru_cache(maxsize=8)
def prediction_checker(config: str) -> PredictionChecker:
    """The checker of ``config`` (one per config text, so its verdicts are shared)."""
    return PredictionChecker(config)


def _shape(item: dict[str, Any]) -> tuple[Any, ...]:
    """What an item's validity depends on: everything but its id, meta, score value and span.

    Values enter by ``repr`` (C speed, and 1, 1.0, "1" and True stay apart); keys in the order
    given, unsorted: the review builder always writes one order, and another order only costs
    one more validation.
    """
    rest = tuple([(k, repr(v)) for k, v in item.items() if k not in _NOT_SHAPE])
    value = tuple(
        [(k, "" if k in _SPAN_KEYS else repr(v)) for k, v in item.get("value", {}).items()]
    )
    return rest, value, "score" in item


def _hint(description: str | None) -> str:
    text = " ".join((description or "").split())
    if not text:
        return ""
    if len(text) > _HINT_CHARS:
        text = text[: _HINT_CHARS - 1].rstrip() + "…"
    return f" hint={quoteattr(text)}"
