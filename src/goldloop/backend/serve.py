"""Run the backend: uvicorn for one process, gunicorn with uvicorn workers for several."""

from __future__ import annotations

from typing import Any

import uvicorn
from gunicorn.app.base import BaseApplication

APP_FACTORY = "goldloop.backend.app:create_app"
# Label Studio waits up to ML_TIMEOUT_PREDICT (100 s) for /predict; a worker may run a bit longer.
WORKER_TIMEOUT = 120
WORKER_CLASS = "uvicorn_worker.UvicornWorker"


def serve(
    host: str = "127.0.0.1", port: int = 9090, workers: int = 1, log_level: str = "info"
) -> None:
    """Serve until interrupted; the configuration comes from the environment."""
    if workers <= 1:
        uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, log_level=log_level)
        return
    _Gunicorn(
        {
            "bind": f"{host}:{port}",
            "workers": workers,
            "worker_class": WORKER_CLASS,
            "timeout": WORKER_TIMEOUT,
            "loglevel": log_level,
        }
    ).run()


class _Gunicorn(BaseApplication):
    """gunicorn driven from Python, each worker building its own app from the environment."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from goldloop.backend.app import create_app

        return create_app()
