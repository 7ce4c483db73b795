"""``goldloop backend``: serve the Label Studio ML backend."""

from __future__ import annotations

import typer

from goldloop.errors import GoldloopError


def backend(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 inside a container)."
    ),
    port: int = typer.Option(9090, "--port", help="Port to listen on."),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Processes; more than 1 runs gunicorn with uvicorn workers."
    ),
) -> None:
    """Serve Label Studio's ML backend protocol: pre-annotation on demand, set by environment.

    GOLDLOOP_PROVIDER / GOLDLOOP_MODEL / GOLDLOOP_EFFORT (and GOLDLOOP_OTHER_* for annotator B),
    the providers' key variables, GOLDLOOP_KB, GOLDLOOP_CACHE, REDIS_URL, BASIC_AUTH_USER/PASS.
    Without a provider key the offline lexical pre-annotator answers.
    """
    try:
        from goldloop.backend.serve import serve
        from goldloop.backend.settings import BackendSettings
    except ImportError as exc:
        raise GoldloopError(
            f'the backend needs the backend extra: pip install "goldloop[backend]" ({exc})'
        ) from None
    BackendSettings.from_env()  # fail fast, on one line, before any worker starts
    serve(host=host, port=port, workers=workers)
