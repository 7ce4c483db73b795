"""``goldloop backend``: serve the Label Studio ML backend."""

from __future__ import annotations

from typing import Annotated

import typer

from goldloop.errors import GoldloopError


def backend(
    host: Annotated[
        str, typer.Option("--host", help="Interface to listen on (0.0.0.0 inside a container).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")
    ] = 9090,
    workers: Annotated[
        int,
        typer.Option(
            "--workers", min=1, help="Processes; more than 1 runs gunicorn with uvicorn workers."
        ),
    ] = 1,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Serve a non-loopback interface without basic auth (also GOLDLOOP_INSECURE=1).",
        ),
    ] = False,
) -> None:
    """Serve Label Studio's ML backend protocol: pre-annotation on demand, interactive
    suggestions, and the live gold, set by environment.

    GOLDLOOP_PROVIDER / GOLDLOOP_MODEL / GOLDLOOP_EFFORT (and GOLDLOOP_OTHER_* for annotator B),
    the providers' key variables, GOLDLOOP_KB, GOLDLOOP_CACHE, REDIS_URL, BASIC_AUTH_USER/PASS,
    GOLDLOOP_PROPOSE_OCCURRENCES=0 (suggest for the drawn region only); for the live gold GOLDLOOP_GOLD (NAME=path;...), LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY.
    Without a provider key the offline lexical pre-annotator answers. Beyond loopback, basic auth
    is required unless --insecure.
    """
    try:
        from goldloop.backend.serve import serve  # FastAPI, uvicorn, gunicorn: the backend extra
    except ImportError as exc:
        raise GoldloopError(
            f'the backend needs the backend extra: pip install "goldloop[backend]" ({exc})'
        ) from None
    serve(host=host, port=port, workers=workers, insecure=insecure)
