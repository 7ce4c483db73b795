"""Cost arithmetic on a price table of the tests' own (never the shipped prices)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.llm import DEFAULT_MODELS
from goldloop.llm.pricing import (
    BUNDLED_PRICES,
    ModelPrice,
    explicit_cache_min_requests,
    load_prices,
    usage_cost,
)

TABLE = {
    "date": "2000-01-01",
    "sources": {"acme": "https://example.org/prices"},
    "providers": {
        "anthropic": {
            "batch_discount": 0.5,
            "models": {
                "c-1": {"input": 4.0, "cached_input": 0.4, "cache_write": 5.0, "output": 20.0},
                "c-1-long": {"input": 8.0, "output": 40.0, "batch_discount": 0.25},
            },
        },
        "gemini": {
            "models": {
                "g": {"input": 2.0, "cached_input": 0.5, "output": 8.0, "cache_storage": 3.0}
            }
        },
    },
}


@pytest.fixture
def table_path(tmp_path: Path) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(TABLE))
    return path


def test_the_table_prices_models_by_name_and_by_family(table_path: Path) -> None:
    table = load_prices(table_path)
    assert (table.date, table.path, table.sources["acme"]) == (
        "2000-01-01",
        table_path,
        "https://example.org/prices",
    )
    c1 = table.price("anthropic", "c-1")
    assert c1 == ModelPrice(4.0, 0.4, 20.0, batch_discount=0.5, cache_write=5.0)
    assert table.price("anthropic", "c-1-20250101") == c1  # a dated snapshot: its family
    assert table.price("anthropic", "c-1-long-2") == table.price("anthropic", "c-1-long")
    long = table.price("anthropic", "c-1-long")
    assert long is not None and long.cached_input == 8.0 and long.batch_discount == 0.25
    assert table.price("anthropic", "d-1") is None and table.price("openai", "c-1") is None


def test_usage_cost_prices_each_kind_of_token() -> None:
    price = ModelPrice(
        input=4.0, cached_input=0.4, output=20.0, batch_discount=0.5, cache_write=5.0
    )
    usage = {
        "input_tokens": 1_000_000,  # of which 600k read from the cache and 100k written to it
        "cached_input_tokens": 600_000,
        "cache_write_input_tokens": 100_000,
        "output_tokens": 50_000,
        "reasoning_tokens": 20_000,  # part of the output: not billed twice
    }
    online = 0.3 * 4.0 + 0.6 * 0.4 + 0.1 * 5.0 + 0.05 * 20.0
    assert usage_cost(usage, price) == pytest.approx(online)
    assert usage_cost(usage, price, batch=True) == pytest.approx(online / 2)
    assert usage_cost({}, price) == 0
    no_write_price = ModelPrice(input=2.0, cached_input=0.2, output=1.0)
    assert usage_cost({"input_tokens": 10, "cache_write_input_tokens": 10}, no_write_price) == (
        pytest.approx(10 * 2.0 / 1e6)
    )


def test_an_explicit_cache_pays_from_a_documented_number_of_requests() -> None:
    price = ModelPrice(input=2.0, cached_input=0.5, output=8.0, cache_storage=3.0)
    # (2.0 to create it + 3.0 an hour to keep it) / 1.5 saved per request = 3.33: from 4.
    assert explicit_cache_min_requests(price) == 4
    assert explicit_cache_min_requests(price, hours=0.5) == 3
    assert explicit_cache_min_requests(ModelPrice(2.0, 0.5, 8.0)) is None  # no storage price
    assert explicit_cache_min_requests(ModelPrice(2.0, 2.0, 8.0, cache_storage=1.0)) is None


def test_the_environment_names_the_users_table(table_path: Path) -> None:
    assert load_prices(env={"GOLDLOOP_PRICES": str(table_path)}).path == table_path
    assert load_prices(env={}).path == BUNDLED_PRICES
    assert load_prices().path == BUNDLED_PRICES  # no door's environment: the shipped table


def test_the_shipped_table_has_its_date_sources_and_the_default_models() -> None:
    table = load_prices(BUNDLED_PRICES)
    assert table.date and set(table.sources) == set(DEFAULT_MODELS)
    for provider, model in DEFAULT_MODELS.items():
        price = table.price(provider, model)
        assert price is not None and 0 < price.batch_discount < 1
        assert price.cached_input < price.input


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not a price table"),
        ('{"providers": {"openai": {"models": {"m": {"input": 1}}}}}', "input and output"),
        (
            '{"providers": {"openai": {"models": {"m": {"input": -1, "output": 1}}}}}',
            "non-negative",
        ),
        (
            '{"providers": {"openai": {"batch_discount": 1.5, "models": {"m": {"input": 1, "output": 1}}}}}',
            "batch_discount",
        ),
    ],
)
def test_a_malformed_table_is_one_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(GoldloopError, match=message) as raised:
        load_prices(path)
    assert str(path) in str(raised.value)
    with pytest.raises(GoldloopError, match="cannot read"):
        load_prices(tmp_path / "missing.json")
