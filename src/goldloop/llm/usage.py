"""Token usage in one vocabulary across providers.

``input_tokens`` counts every prompt token, cached ones included; ``cached_input_tokens`` is the
part read from the provider's prompt cache and ``cache_write_input_tokens`` the part written to
it (Anthropic bills that above the input price). ``output_tokens`` counts every billed output
token, reasoning included; ``reasoning_tokens`` is the part spent thinking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
)


def usage_dict(**counts: int | None) -> dict[str, int]:
    """The counts a provider reported; missing ones left out."""
    return {key: int(value) for key, value in counts.items() if value}


def add_usage(usages: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + int(value)
    return total
