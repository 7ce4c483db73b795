"""gunicorn settings for the backend container; each knob is an environment variable.

The settings themselves are :func:`goldloop.backend.serve.gunicorn_options`, shared with
``goldloop backend``; a non-loopback bind without basic auth is refused here, before any worker.
"""

import os
import sys

from goldloop.backend.app import check_exposure
from goldloop.backend.config import BackendSettings
from goldloop.backend.serve import WORKER_TIMEOUT, gunicorn_options
from goldloop.errors import GoldloopError

_HOST = os.environ.get("HOST", "0.0.0.0")
try:
    check_exposure(_HOST, BackendSettings.from_env(os.environ))
except GoldloopError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(exc.exit_code)

# Which Label Studio variables are set (never their values): the live gold needs both.
print(BackendSettings.from_env(os.environ).studio_credentials(), file=sys.stderr)

globals().update(
    gunicorn_options(
        _HOST,
        int(os.environ.get("PORT", "9090")),
        int(os.environ.get("WORKERS", "2")),
        os.environ.get("LOG_LEVEL", "info"),
        int(os.environ.get("WORKER_TIMEOUT", str(WORKER_TIMEOUT))),
    )
)
