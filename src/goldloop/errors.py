"""The one exception type for problems the user can fix: bad input, bad settings, bad servers."""


class GoldloopError(Exception):
    """A user-facing error: the CLI prints its message on one line and exits 2."""
