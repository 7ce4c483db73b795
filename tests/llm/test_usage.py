"""Token usage in one vocabulary across providers."""

from __future__ import annotations

from goldloop.llm.usage import USAGE_KEYS, add_usage, usage_dict


def test_usage_keeps_only_the_reported_counts() -> None:
    usage = usage_dict(input_tokens=120, output_tokens=7, reasoning_tokens=None,
                       cached_input_tokens=0)  # fmt: skip
    assert usage == {"input_tokens": 120, "output_tokens": 7}
    assert set(usage) <= set(USAGE_KEYS)


def test_usages_add_up_key_by_key() -> None:
    total = add_usage([{"input_tokens": 120, "output_tokens": 7},
                       {"input_tokens": 30, "cached_input_tokens": 20}, {}])  # fmt: skip
    assert total == {"input_tokens": 150, "output_tokens": 7, "cached_input_tokens": 20}
