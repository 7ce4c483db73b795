"""The ML backend over HTTP: Label Studio's protocol on FastAPI, a thin door onto the predictor."""

from __future__ import annotations

import logging
import secrets
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials

from goldloop import __version__
from goldloop.backend.predictor import Predictor
from goldloop.backend.protocol import (
    BadRequest,
    PredictRequest,
    SetupRequest,
    WebhookEvent,
    parse_body,
)
from goldloop.backend.settings import BackendSettings

log = logging.getLogger("goldloop.backend")
# Module level: FastAPI resolves the (string) annotations of dependencies in module globals.
_BASIC = HTTPBasic(auto_error=False)


def create_app(
    settings: BackendSettings | None = None, predictor: Predictor | None = None
) -> FastAPI:
    """The app; without arguments everything comes from the environment (uvicorn, gunicorn)."""
    settings = settings or BackendSettings.from_env()
    predictor = predictor or Predictor.from_settings(settings)
    app = FastAPI(title="goldloop ML backend", version=__version__, docs_url=None, redoc_url=None)
    guard = _basic_auth(settings.basic_auth)

    @app.exception_handler(BadRequest)
    async def _bad_request(_: Request, exc: BadRequest) -> JSONResponse:
        return JSONResponse({"status": "error", "message": str(exc)}, status_code=400)

    # /health stays open so load balancers and compose health checks need no secret.
    @app.get("/health")
    @app.get("/")
    async def health() -> dict[str, Any]:
        return {"status": "UP", "model_class": "goldloop", "model_version": predictor.model_version}

    @app.post("/setup", dependencies=[Depends(guard)])
    async def setup(request: Request) -> dict[str, Any]:
        body = parse_body(await request.body(), SetupRequest)
        log.info("setup for project %s from %s", body.project, body.hostname)
        return {"model_version": predictor.model_version}

    @app.post("/predict", dependencies=[Depends(guard)])
    async def predict(request: Request) -> dict[str, Any]:
        body = parse_body(await request.body(), PredictRequest)
        results = await predictor.predict(body.tasks, body.label_config)
        return {"results": results, "model_version": predictor.model_version}

    @app.post("/webhook", dependencies=[Depends(guard)])
    async def webhook(request: Request) -> dict[str, Any]:
        # Pre-annotation learns nothing from annotations: acknowledge, so Label Studio moves on.
        event = parse_body(await request.body(), WebhookEvent)
        log.info("webhook %s", event.action)
        return {"status": "ok", "action": event.action}

    return app


def _basic_auth(credentials: tuple[str, str] | None) -> Any:
    async def guard(given: Annotated[HTTPBasicCredentials | None, Depends(_BASIC)]) -> None:
        if credentials is None:
            return
        user, password = credentials
        ok = given is not None and (
            secrets.compare_digest(given.username.encode(), user.encode())
            & secrets.compare_digest(given.password.encode(), password.encode())
        )
        if not ok:
            raise HTTPException(
                401, "basic authentication required", headers={"WWW-Authenticate": "Basic"}
            )

    return guard
