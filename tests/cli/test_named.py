"""goldloop.cli.named: NAME=PATH values, parsed in one place for score, pool and the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.cli.named import named_files, parse_named
from goldloop.errors import GoldloopError


def test_split_at_the_first_equals_and_a_bare_path_has_no_name() -> None:
    assert parse_named(["a=x/p.json", "q/r.csv", "b=c=d.json"], "--opt") == [
        ("a", Path("x/p.json")),
        (None, Path("q/r.csv")),
        ("b", Path("c=d.json")),
    ]


@pytest.mark.parametrize("value", ["=p.json", "name="])
def test_an_empty_side_is_refused_naming_the_option(value: str) -> None:
    with pytest.raises(GoldloopError, match=f"--opt '{value}': give NAME=PATH"):
        parse_named([value], "--opt")


def test_named_files_name_a_bare_path_by_its_stem_and_refuse_a_name_twice() -> None:
    assert named_files(["runs/lexical.jsonl", "llm=x.json"], "run") == [
        ("lexical", Path("runs/lexical.jsonl")),
        ("llm", Path("x.json")),
    ]
    with pytest.raises(GoldloopError, match="run: the name 'lexical' is given twice"):
        named_files(["lexical=a.json", "b/lexical.jsonl"], "run")
