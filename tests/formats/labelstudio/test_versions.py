"""When two annotators' versions agree: span, relation and direction only."""

from __future__ import annotations

from goldloop.formats.labelstudio.versions import versions_agree
from tests.formats.labelstudio.conftest import ACTIVATES, INHIBITS, REGULATES, hit


def test_versions_agree_on_span_relation_and_direction_only() -> None:
    one = [hit("inhibits", INHIBITS), hit("regulates", REGULATES)]
    assert versions_agree(one, list(reversed(one)))
    assert not versions_agree(
        one, [hit("inhibits", INHIBITS), hit("regulates", REGULATES, "inverse")]
    )
    assert not versions_agree(one, [hit("inhibits", INHIBITS), hit("regulates", ACTIVATES)])
    assert not versions_agree(one, [hit("inhibits STAT3", INHIBITS), hit("regulates", REGULATES)])
    assert not versions_agree(one, one[:1])
