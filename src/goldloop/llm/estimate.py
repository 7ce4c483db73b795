"""What a run will use and cost before it is sent: tokens estimated from the prompts, calibrated
on the usage the cache recorded for the same model when there is any.

Without calibration a token is taken as 4 characters and the output is unknown (the cost then
counts it at the output limit, an upper bound). With calibration the input is the prompts'
characters times the model's recorded tokens per character, and the output is its recorded mean
per answer. Prompt caching is assumed to work as goldloop asks for it: from the second request
on, the shared system prompt (the KB catalog) is read from the provider's cache when it reaches
the smallest cacheable prefix; a provider that bills writing the cache (a ``cache_write`` price)
writes it once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from goldloop.llm.base import LLMRequest
from goldloop.llm.cache import Calibration
from goldloop.llm.pricing import ModelPrice, usage_cost

CHARS_PER_TOKEN = 4
# The smallest prefix OpenAI and Anthropic's Sonnet models cache, when the table gives none.
CACHE_MIN_TOKENS = 1024


@dataclass(frozen=True)
class CostEstimate:
    """Estimated usage of the requests to send, and its cost online and in batch mode (USD;
    ``None`` when the price table has no entry for the model)."""

    requests: int
    usage: dict[str, int]
    calibrated_on: int
    output_bounded: bool
    online_usd: float | None
    batch_usd: float | None


def estimate_cost(
    pending: Sequence[LLMRequest],
    price: ModelPrice | None,
    calibration: Calibration | None,
) -> CostEstimate:
    """The usage and cost of sending ``pending`` (see the module docstring for the rule)."""
    per_char = calibration.input_tokens_per_char if calibration else 1 / CHARS_PER_TOKEN
    input_tokens = sum(math.ceil((len(r.system) + len(r.user)) * per_char) for r in pending)
    if calibration is not None:
        output = round(calibration.output_tokens_per_answer * len(pending))
    else:
        output = sum(r.max_tokens for r in pending)
    cached = written = 0
    minimum = (price.cache_min_tokens if price else None) or CACHE_MIN_TOKENS
    prefixes: dict[str, int] = {}
    for request in pending:
        prefixes[request.system] = prefixes.get(request.system, 0) + 1
    for system, count in prefixes.items():
        size = math.ceil(len(system) * per_char)
        if size >= minimum:
            cached += size * (count - 1)
            if price is not None and price.cache_write is not None:
                written += size
    usage = {
        "input_tokens": input_tokens,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": written,
        "output_tokens": output,
    }
    return CostEstimate(
        requests=len(pending),
        usage=usage,
        calibrated_on=calibration.answers if calibration else 0,
        output_bounded=calibration is None,
        online_usd=None if price is None else usage_cost(usage, price),
        batch_usd=None if price is None else usage_cost(usage, price, batch=True),
    )
