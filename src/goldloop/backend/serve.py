"""Run the backend: uvicorn for one process, gunicorn with uvicorn workers for several.

The gunicorn settings live in :func:`gunicorn_options`, used by ``goldloop backend`` and by the
container's ``backend/gunicorn.conf.py`` alike.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from typing import Any

import uvicorn
from gunicorn.app.base import BaseApplication

from goldloop.backend.app import INSECURE_ENV, check_exposure, create_app
from goldloop.backend.config import BackendSettings
from goldloop.errors import GoldloopError
from goldloop.settings import Settings

APP_FACTORY = "goldloop.backend.app:create_app"
# Label Studio waits up to ML_TIMEOUT_PREDICT (100 s) for /predict; a worker may run a bit longer.
WORKER_TIMEOUT = 120
WORKER_CLASS = "uvicorn_worker.UvicornWorker"


def gunicorn_options(
    host: str, port: int, workers: int, log_level: str = "info", timeout: int = WORKER_TIMEOUT
) -> dict[str, Any]:
    """gunicorn's settings for the backend, by gunicorn's own names."""
    return {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": WORKER_CLASS,
        "timeout": timeout,
        "loglevel": log_level,
        "accesslog": "-",
    }


def check_port_free(host: str, port: int) -> None:
    """Refuse early, in one line, when another process already listens on ``host:port``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise GoldloopError(
                    f"{host}:{port} is already in use by another process: choose another port"
                ) from None
            raise GoldloopError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def serve(
    host: str = "127.0.0.1",
    port: int = 9090,
    workers: int = 1,
    log_level: str = "info",
    *,
    insecure: bool = False,
) -> None:
    """Serve until interrupted; the configuration comes from the environment.

    Refuses to start (``GoldloopError``) on a bad configuration, a port in use, or a non-loopback
    interface without basic auth unless ``insecure``.
    """
    if insecure:
        # Workers build their app from the environment: that is how the choice reaches them
        # (a variable set for the worker processes, read back by Settings.from_env).
        os.environ[INSECURE_ENV] = "1"
    settings = BackendSettings.from_settings(Settings.from_env())
    check_exposure(host, settings)
    check_port_free(host, port)
    print(settings.studio_credentials(), file=sys.stderr)
    if workers <= 1:
        uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, log_level=log_level)
        return
    _Gunicorn(gunicorn_options(host, port, workers, log_level)).run()


class _Gunicorn(BaseApplication):
    """gunicorn driven from Python, each worker building its own app from the environment."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return create_app()
