"""What tokens cost: the price table, the cost of a run's usage, and when an explicit cache pays.

The table is data (``goldloop/data/prices/prices.json``, with its date and source URLs), never
facts the code relies on: ``GOLDLOOP_PRICES`` or an explicit path replaces it with the user's own
file of the same shape. Prices are per million tokens; ``batch_discount`` is the fraction a
provider's batch API takes off every token price.

A model is found by its exact name, else by the longest table name it starts with, so a dated
snapshot (``gpt-5-mini-2025-08-07``) is priced as its family.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.settings import PRICES_ENV

PRICES_VARIABLE = PRICES_ENV  # named once, where every variable is
BUNDLED_PRICES = Path(str(files("goldloop") / "data" / "prices" / "prices.json"))
# An explicit (Gemini) context cache is sized for a run of up to this long: storage is billed
# by the hour while the cache exists, and goldloop deletes it when the run ends.
EXPLICIT_CACHE_HOURS = 1.0


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens of one model, and its provider's batch discount."""

    input: float
    cached_input: float
    output: float
    batch_discount: float = 0.0
    cache_write: float | None = None
    cache_storage: float | None = None
    cache_min_tokens: int | None = None


@dataclass(frozen=True)
class PriceTable:
    date: str
    sources: dict[str, str]
    path: Path
    models: dict[tuple[str, str], ModelPrice]

    def price(self, provider: str, model: str) -> ModelPrice | None:
        """The model's prices: its own entry, else the longest entry its name starts with."""
        exact = self.models.get((provider, model))
        if exact is not None:
            return exact
        prefixes = [name for p, name in self.models if p == provider and model.startswith(name)]
        return self.models[(provider, max(prefixes, key=len))] if prefixes else None


def prices_path(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The table to use: ``path``, else ``GOLDLOOP_PRICES`` in ``env`` (the environment a door
    read), else the shipped one."""
    chosen = path or (env or {}).get(PRICES_VARIABLE) or BUNDLED_PRICES
    return Path(chosen)


def load_prices(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> PriceTable:
    """The price table at :func:`prices_path`; a malformed one is an error naming the file.

    A table is read once per version of its file (the ML backend prices every request)."""
    where = prices_path(path, env)
    try:
        stamp = where.stat().st_mtime_ns
    except OSError as exc:
        raise GoldloopError(f"{where}: cannot read the price table: {exc.strerror}") from exc
    return _read_prices(where, stamp)


@functools.lru_cache(maxsize=8)
def _read_prices(where: Path, _stamp: int) -> PriceTable:
    try:
        data = jsonl.loads(where.read_text(encoding="utf-8"))
        models = {
            (provider, name): _model_price(entry, spec.get("batch_discount", 0.0))
            for provider, spec in data["providers"].items()
            for name, entry in spec["models"].items()
        }
        return PriceTable(str(data.get("date", "")), dict(data.get("sources", {})), where, models)
    except OSError as exc:
        raise GoldloopError(f"{where}: cannot read the price table: {exc.strerror}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GoldloopError(
            f"{where}: not a price table ({type(exc).__name__}: {exc}); see the shipped "
            f"{BUNDLED_PRICES.name} for its shape"
        ) from exc


def _model_price(entry: dict[str, Any], batch_discount: float) -> ModelPrice:
    def number(key: str) -> float | None:
        value = entry.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{key} must be a non-negative number, not {value!r}")
        return float(value)

    input_price, output = number("input"), number("output")
    if input_price is None or output is None:
        raise KeyError("input and output prices")
    cached = number("cached_input")
    minimum = number("cache_min_tokens")
    discount = float(entry.get("batch_discount", batch_discount))
    if not 0 <= discount < 1:
        raise ValueError(f"batch_discount must be in [0, 1), not {discount!r}")
    return ModelPrice(
        input=input_price,
        cached_input=input_price if cached is None else cached,
        output=output,
        batch_discount=discount,
        cache_write=number("cache_write"),
        cache_storage=number("cache_storage"),
        cache_min_tokens=None if minimum is None else int(minimum),
    )


def usage_cost(usage: Mapping[str, int], price: ModelPrice, *, batch: bool = False) -> float:
    """USD for ``usage`` (the vocabulary of :mod:`goldloop.llm.usage`): uncached input at the
    input price, cache reads at the cached price, cache writes at the write price (the input
    price when the provider has none), output (reasoning included) at the output price; less the
    batch discount for a batch run."""
    total_input = usage.get("input_tokens", 0)
    cached = usage.get("cached_input_tokens", 0)
    written = usage.get("cache_write_input_tokens", 0)
    fresh = max(0, total_input - cached - written)
    write_price = price.input if price.cache_write is None else price.cache_write
    dollars = (
        fresh * price.input
        + cached * price.cached_input
        + written * write_price
        + usage.get("output_tokens", 0) * price.output
    ) / 1e6
    return dollars * (1 - price.batch_discount) if batch else dollars


def explicit_cache_min_requests(
    price: ModelPrice, hours: float = EXPLICIT_CACHE_HOURS
) -> int | None:
    """The fewest requests for which an explicit cache of a prefix costs less than sending it
    each time: creating it bills the prefix once at the input price and storing it bills
    ``cache_storage`` per hour, against ``input - cached_input`` saved per request. ``None`` when
    the table gives no storage price or caching saves nothing."""
    if price.cache_storage is None or price.input <= price.cached_input:
        return None
    return math.ceil(
        (price.input + price.cache_storage * hours) / (price.input - price.cached_input)
    )
