"""The typed errors the library raises; each carries the exit code the CLI gives it.

| code | meaning |
|---|---|
| 0 | done |
| 1 | a check ran and found problems (:class:`CheckFailed`) |
| 2 | bad input or usage: a file, a value, an option (:class:`GoldloopError`) |
| 3 | partial: some requests failed, output written for the rest (:class:`PartialRun`) |
| 4 | a service failed after retries (:class:`ServiceError`) |
| 5 | submitted and still pending (:class:`Pending`) |
| 130 | interrupted: Ctrl-C (:class:`Interrupted`) |

The library never names a CLI flag in a message; the doors word options themselves. Every
message masks the password of any URL it quotes (:func:`mask_credentials`).
"""

import re

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_PARTIAL = 3
EXIT_SERVICE = 4
EXIT_PENDING = 5
EXIT_INTERRUPTED = 130


# The user-info part of a URL (scheme://user:password@): the password is what is masked.
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s'\"]*:)[^/\s'\"]*@")


def mask_credentials(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***`` (a refused URL is
    repeated in its error, and errors reach logs)."""
    return _URL_PASSWORD.sub(r"\g<head>***@", text)


class GoldloopError(Exception):
    """A problem the user can fix (bad input, bad settings): one line, exit 2."""

    exit_code = EXIT_BAD_INPUT

    def __str__(self) -> str:
        return mask_credentials(super().__str__())


class SettingError(GoldloopError):
    """A setting's value is refused; ``setting`` is its Python name (``n_primary``), which a door
    words as its own option (``--n-primary``) or variable."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(f"{setting}: {message}")
        self.setting = setting
        self.message = mask_credentials(message)


class DesignRefused(SettingError):
    """A gold's design (``p_incl``) is refused: mixed with documents without it, or outside
    [1e-12, 1] (``scoring.design.MIN_P_INCL``). The message names the document; what the user can do about it is the door's to say
    (a command with a design option can score with equal weights, ``effect`` cannot)."""

    def __init__(self, message: str) -> None:
        super().__init__("design", message)


class CheckFailed(GoldloopError):
    """A check ran to the end and found problems (the report says which): exit 1. Raised without
    a message when the report printed is all there is to say."""

    exit_code = EXIT_CHECK_FAILED


class ServiceError(GoldloopError):
    """A service (Label Studio, a provider, Redis, PostgreSQL) failed after retries: exit 4."""

    exit_code = EXIT_SERVICE


class PartialRun(GoldloopError):
    """Some requests failed; the output holds the rest and the report lists the failed: exit 3."""

    exit_code = EXIT_PARTIAL


class Pending(GoldloopError):
    """Work was submitted and is not finished yet (provider batch mode): exit 5."""

    exit_code = EXIT_PENDING


class Interrupted(GoldloopError):
    """Ctrl-C stopped the run; the message says what was kept: exit 130."""

    exit_code = EXIT_INTERRUPTED
