"""Token usage in one vocabulary across providers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

USAGE_KEYS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens")


def usage_dict(**counts: int | None) -> dict[str, int]:
    """The counts a provider reported; missing ones left out."""
    return {key: int(value) for key, value in counts.items() if value}


def add_usage(usages: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + int(value)
    return total
