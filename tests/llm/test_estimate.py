"""Token and cost estimates before a run, with and without calibration."""

from __future__ import annotations

import math

import pytest

from goldloop.llm import LLMRequest
from goldloop.llm.cache import Calibration
from goldloop.llm.estimate import estimate_cost
from goldloop.llm.pricing import ModelPrice

SYSTEM = "x" * 8000  # 2,000 tokens at 4 characters a token
REQUESTS = [LLMRequest(SYSTEM, "Abstract:\n" + "y" * 390, {}, 500) for _ in range(10)]
PRICE = ModelPrice(input=1.0, cached_input=0.1, output=4.0, batch_discount=0.5)


def test_without_calibration_tokens_are_four_characters_and_output_is_at_its_limit() -> None:
    estimate = estimate_cost(REQUESTS, PRICE, None)
    assert estimate.usage["input_tokens"] == 10 * 2100
    assert estimate.usage["cached_input_tokens"] == 9 * 2000  # the catalog, from request 2 on
    assert estimate.usage["output_tokens"] == 10 * 500 and estimate.output_bounded
    expected = (10 * 2100 - 9 * 2000) * 1.0 / 1e6 + 9 * 2000 * 0.1 / 1e6 + 5000 * 4.0 / 1e6
    assert estimate.online_usd == pytest.approx(expected)
    assert estimate.batch_usd == pytest.approx(expected / 2)


def test_calibration_uses_the_recorded_ratio_and_mean_output() -> None:
    calibration = Calibration(answers=7, input_tokens_per_char=0.3, output_tokens_per_answer=42.5)
    estimate = estimate_cost(REQUESTS, PRICE, calibration)
    assert estimate.usage["input_tokens"] == 10 * math.ceil(8400 * 0.3)
    assert estimate.usage["cached_input_tokens"] == 9 * 2400
    assert estimate.usage["output_tokens"] == 425
    assert estimate.calibrated_on == 7 and not estimate.output_bounded


def test_a_short_or_varying_system_prompt_is_not_counted_as_cached() -> None:
    short = [LLMRequest("s" * 400, "u", {}, 10)] * 5
    assert estimate_cost(short, PRICE, None).usage["cached_input_tokens"] == 0
    varying = [LLMRequest(f"{k}" + SYSTEM, "u", {}, 10) for k in range(5)]
    assert estimate_cost(varying, PRICE, None).usage["cached_input_tokens"] == 0


def test_a_provider_billing_cache_writes_writes_the_catalog_once_and_no_price_no_cost() -> None:
    anthropic_like = ModelPrice(input=1.0, cached_input=0.1, output=4.0, cache_write=1.25)
    estimate = estimate_cost(REQUESTS, anthropic_like, None)
    assert estimate.usage["cache_write_input_tokens"] == 2000
    unpriced = estimate_cost(REQUESTS, None, None)
    assert unpriced.online_usd is None and unpriced.batch_usd is None
