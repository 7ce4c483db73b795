"""The ML backend over HTTP: Label Studio's protocol on FastAPI, a thin door onto the predictor."""

from __future__ import annotations

import ipaddress
import logging
import secrets
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from goldloop import __version__
from goldloop.backend.config import BackendSettings
from goldloop.backend.live import LiveGold
from goldloop.backend.predictor import Predictor
from goldloop.backend.protocol import (
    BadRequest,
    Health,
    PredictRequest,
    SetupRequest,
    WebhookEvent,
    parse_body,
)
from goldloop.errors import GoldloopError
from goldloop.files.csvfile import TRUE_WORDS
from goldloop.settings import Settings
from goldloop.studio.connection import Connection

log = logging.getLogger("goldloop.backend")
INSECURE_ENV = "GOLDLOOP_INSECURE"
# Module level: FastAPI resolves the (string) annotations of dependencies in module globals.
_BASIC = HTTPBasic(auto_error=False)


def create_app(
    settings: BackendSettings | None = None, predictor: Predictor | None = None
) -> FastAPI:
    """The app; without arguments everything comes from the environment, read here once: this
    is the door uvicorn and gunicorn's workers open."""
    if settings is None:
        settings = BackendSettings.from_settings(Settings.from_env())
    predictor = predictor or Predictor.from_settings(settings)
    live = live_gold(settings, predictor)
    app = FastAPI(title="goldloop ML backend", version=__version__, docs_url=None, redoc_url=None)
    app.state.live = live
    # Without basic auth the routes carry no dependency at all: solving one costs every request.
    guard = [Depends(_basic_auth(settings.basic_auth))] if settings.basic_auth is not None else []

    if settings.basic_auth is None and not insecure_mode(settings.environment.environ):
        app.add_middleware(_LoopbackOnly)

    @app.exception_handler(BadRequest)
    async def _bad_request(_: Request, exc: BadRequest) -> JSONResponse:
        return JSONResponse({"status": "error", "message": str(exc)}, status_code=400)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        message = f"internal error ({type(exc).__name__}); the backend's log has the details"
        return JSONResponse({"status": "error", "message": message}, status_code=500)

    # /health stays open so load balancers and compose health checks need no secret.
    @app.get("/health")
    @app.get("/")
    async def health() -> dict[str, Any]:
        return Health(predictor.model_version).to_dict()

    @app.post("/setup", dependencies=guard)
    async def setup(request: Request) -> dict[str, Any]:
        body = parse_body(await request.body(), SetupRequest)
        log.info("setup for project %s from %s", body.project, body.hostname)
        return {"model_version": predictor.model_version}

    @app.post("/predict", dependencies=guard)
    async def predict(request: Request) -> JSONResponse:
        body = parse_body(await request.body(), PredictRequest)
        # Label Studio sends the region an annotator drew (interactive mode) in params.context.
        context = body.params.get("context") or (body.model_extra or {}).get("context")
        results = await predictor.predict(body.tasks, body.label_config, context)
        # Plain JSON already: a Response skips FastAPI's jsonable_encoder walk (0.3 ms a task).
        return JSONResponse({"results": results, "model_version": predictor.model_version})

    @app.post("/webhook", dependencies=guard)
    async def webhook(request: Request) -> dict[str, Any]:
        # Label Studio waits 1 s and never retries: queue the change, answer at once.
        event = parse_body(await request.body(), WebhookEvent)
        outcome = live.accept(event.model_dump()) if live else "ignored: no live gold is set"
        log.info("webhook %s: %s", event.action, outcome)
        return {"status": "ok", "action": event.action, "live_gold": outcome}

    return app


class _LoopbackOnly:
    """Serve loopback peers only (the app without basic auth); a plain ASGI middleware, as
    ``BaseHTTPMiddleware`` costs every request a task group and memory streams."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The start-up check cannot see every way of serving the app (``gunicorn _wsgi:app
        # --bind ...``): without basic auth, only this machine may spend the provider key.
        peer = scope["client"][0] if scope["type"] == "http" and scope.get("client") else None
        if peer is None or is_loopback(peer):
            await self.app(scope, receive, send)
            return
        log.warning("refused %s: no basic auth is set, so only loopback clients are served", peer)
        message = f"no basic auth is set, so only loopback clients are served: {EXPOSURE_FIX}"
        await JSONResponse({"status": "error", "message": message}, status_code=403)(
            scope, receive, send
        )


def live_gold(settings: BackendSettings, predictor: Predictor) -> LiveGold | None:
    """The live gold of the campaigns in ``settings.gold`` (None when none is set)."""
    log.info("%s", settings.studio_credentials())
    if not settings.gold:
        return None
    connection = None
    if settings.studio_url and settings.studio_api_key:
        connection = Connection(settings.studio_url.rstrip("/"), settings.studio_api_key)
    else:
        log.warning("live gold is set but Label Studio is not: its events will be ignored")
    return LiveGold(
        dict(settings.gold), predictor.kb, connection, settings.redis_url, predictor.parsing
    )


EXPOSURE_FIX = (
    "set BASIC_AUTH_USER and BASIC_AUTH_PASS, and the same pair in Label Studio's connection to "
    f"the backend, or set {INSECURE_ENV}=1 to serve without authentication"
)


def insecure_mode(env: Mapping[str, str]) -> bool:
    """Serving a non-loopback interface without basic auth was asked for explicitly (in the
    environment a door read)."""
    return env.get(INSECURE_ENV, "").strip().casefold() in TRUE_WORDS


def is_loopback(host: str) -> bool:
    """``host`` (an address or ``localhost``) can only be reached from this machine."""
    if host.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, settings: BackendSettings) -> None:
    """Refuse to listen beyond loopback without basic auth, unless insecure mode was asked for."""
    if (
        is_loopback(host)
        or settings.basic_auth is not None
        or insecure_mode(settings.environment.environ)
    ):
        return
    raise GoldloopError(
        f"refusing to serve {host} without basic auth: anyone who reaches it could spend the "
        f"provider key; {EXPOSURE_FIX}"
    )


def _basic_auth(credentials: tuple[str, str]) -> Any:
    user, password = credentials

    async def guard(given: Annotated[HTTPBasicCredentials | None, Depends(_BASIC)]) -> None:
        ok = given is not None and (
            secrets.compare_digest(given.username.encode(), user.encode())
            & secrets.compare_digest(given.password.encode(), password.encode())
        )
        if not ok:
            raise HTTPException(
                401, "basic authentication required", headers={"WWW-Authenticate": "Basic"}
            )

    return guard
