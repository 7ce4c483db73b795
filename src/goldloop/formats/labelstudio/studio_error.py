"""The error of the Label Studio loop, importable without the network client."""

from __future__ import annotations

from goldloop.errors import GoldloopError


class StudioError(GoldloopError):
    """Label Studio is unreachable, refuses the key, or holds something goldloop cannot use."""
