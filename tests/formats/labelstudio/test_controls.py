"""The labeling config's control names and the relation control's value, as an export holds them."""

from __future__ import annotations

import re

from goldloop.formats.labelstudio.controls import CONTROLS, RELATION, read_relation, relation_value
from goldloop.kb import KB
from goldloop.studio.label_config import render_label_config


def test_a_picked_relation_reads_back() -> None:
    value = relation_value("inhibits")
    assert value == {"taxonomy": [["inhibits"]]}
    assert read_relation(value) == "inhibits"
    assert read_relation({}) is None
    assert read_relation({"taxonomy": [[]]}) is None


def test_the_generated_config_has_each_control_under_its_name(kb: KB) -> None:
    config = render_label_config(kb)
    for name, tag in CONTROLS.items():
        assert re.search(rf'<{tag} [^>]*name="{name}"', config, re.IGNORECASE), (name, tag)
    assert CONTROLS[RELATION] == "taxonomy"
