"""Which Label Studio to talk to, and :class:`Studio`: the one way to talk to it.

A URL (``LABEL_STUDIO_URL``, or the command's own) and ``LABEL_STUDIO_API_KEY`` (a legacy token
or a personal access token: the SDK tells them apart) name an operator's own server; without
them, the running embedded server is used. Errors name the server and never the key: a server
that does not answer, or answers 5xx, is a :class:`~goldloop.errors.ServiceError` (exit 4); one
that is not Label Studio, or refuses the key, is the user's to fix (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from goldloop.errors import ServiceError
from goldloop.files import jsonl
from goldloop.formats.labelstudio.studio_error import (
    StudioError as StudioError,  # re-exported: callers catch it here
)
from goldloop.settings import STUDIO_KEY_ENV, STUDIO_URL_ENV, Settings
from goldloop.studio import server

# label_studio_sdk (the studio extra) is imported in the functions that use it, so this module
# imports without it.
if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio

URL_ENV = STUDIO_URL_ENV
KEY_ENV = STUDIO_KEY_ENV
T = TypeVar("T")


@dataclass(frozen=True)
class Connection:
    url: str
    api_key: str

    def __repr__(self) -> str:  # the key never reaches logs
        return f"Connection(url={self.url!r})"


def resolve_connection(
    url: str | None = None,
    api_key: str | None = None,
    home: Path | None = None,
    *,
    settings: Settings,
) -> Connection:
    """Explicit values, then ``settings`` (what the door read), then the running embedded server
    (in ``home``, by default the settings' :func:`~goldloop.studio.server.studio_home`)."""
    url = url or settings.studio_url
    api_key = api_key or settings.studio_api_key
    if url:
        if not api_key:
            raise StudioError(
                f"Label Studio at {url}: set {KEY_ENV} (a legacy token or a personal access token)"
            )
        return Connection(url.rstrip("/"), api_key)
    state = server.status(home or server.studio_home(settings))
    if state is None:
        raise StudioError(
            f"no Label Studio: set {URL_ENV} and {KEY_ENV}, or run `goldloop studio start`"
        )
    return Connection(state.url, api_key or state.token)


@dataclass(frozen=True)
class Studio:
    """A Label Studio server whose key was checked (:func:`connect`): its address and the SDK
    client for it. Every request goes through :meth:`call`, :meth:`call_once` or
    :meth:`call_delete`, which map errors and decide what is retried; ``sdk`` gives the SDK's
    resources to call (``studio.call(studio.sdk.projects.get, id=7)``)."""

    connection: Connection
    sdk: LabelStudio = field(repr=False)

    def call(self, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Call an SDK method, mapping errors; retried (four tries in all, 3.5 s of waits) on
        timeouts, lost connections and answers 5xx, 408 or 429."""
        with _mapped_errors(self.connection):
            return _retrying(fn, *args, **kwargs)

    def call_once(self, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Call an SDK method whose request must reach the server at most once (it creates or
        adds something), mapping errors; retried like :meth:`call` only while it could not be
        sent."""
        with _mapped_errors(self.connection):
            return _retrying_unsent(fn, *args, **kwargs)

    def call_delete(self, fn: Callable[..., object], *args: object, **kwargs: object) -> None:
        """Call an SDK method that deletes something, retried like :meth:`call`; an answer 404
        counts as done (a retry after a lost answer finds the thing already gone)."""
        from label_studio_sdk.core.api_error import ApiError

        with _mapped_errors(self.connection):
            try:
                _retrying(fn, *args, **kwargs)
            except ApiError as exc:
                if exc.status_code != 404:
                    raise

    def read_json(self, path: str, params: dict[str, object]) -> Any:
        """``GET path`` for an endpoint the SDK does not wrap, through the SDK's own HTTP client
        (its base URL and key); not retried here (pass it to :meth:`call`)."""
        return _checked(
            self.sdk._client_wrapper.httpx_client.request(
                path, method="GET", params=params, request_options={"max_retries": 0}
            )
        ).json()

    def post_json(self, path: str, body: bytes, *, params: dict[str, object] | None = None) -> Any:
        """``POST path`` with a JSON ``body`` already encoded, through the SDK's own HTTP client;
        not retried here (pass it to :meth:`call_once`). The answer's JSON (None if it has
        none)."""
        response = _checked(
            self.sdk._client_wrapper.httpx_client.request(
                path, method="POST", params=params or {}, content=body,
                headers={"content-type": "application/json"}, request_options={"max_retries": 0},
            )
        )  # fmt: skip
        try:
            return jsonl.loads(response.content) if response.content else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None


def connect(connection: Connection, *, timeout: float = 120.0) -> Studio:
    """The server at ``connection``, its key checked against it (``whoami``)."""
    try:
        from label_studio_sdk import LabelStudio
        from label_studio_sdk.core.api_error import ApiError
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise StudioError(
            'the Label Studio loop needs the studio extra: pip install "goldloop[studio]"'
        ) from exc
    try:
        # Retries live in ``Studio.call`` alone: the SDK's own, inside each of ours, made an
        # unreachable server take 16 s to report and could repeat a request that must go once.
        sdk = LabelStudio(
            base_url=connection.url, api_key=connection.api_key, timeout=timeout, max_retries=0
        )
    except ApiError as exc:  # a malformed or expired personal access token is refused here
        raise StudioError(
            f"Label Studio at {connection.url}: the API key is not usable: {_detail(exc)}"
        ) from None
    studio = Studio(connection, sdk)
    studio.call(sdk.users.whoami)
    return studio


def _checked(response: httpx.Response) -> httpx.Response:
    """``response``, or the SDK's own error for an answer 4xx/5xx (mapped like any SDK call's)."""
    from label_studio_sdk.core.api_error import ApiError

    if response.status_code >= 400:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        raise ApiError(status_code=response.status_code, headers=dict(response.headers), body=body)
    return response


class StudioUnreachable(StudioError, ServiceError):
    """The request did not get an answer (the server is down, restarting or too slow), or it
    failed on the server (5xx) after retries."""


@contextmanager
def _mapped_errors(connection: Connection) -> Iterator[None]:
    from label_studio_sdk.core.api_error import ApiError

    try:
        yield
    except httpx.TransportError as exc:
        raise StudioUnreachable(
            f"cannot reach Label Studio at {connection.url}: {exc.__class__.__name__}: {exc}"
        ) from None
    except ApiError as exc:
        if exc.status_code in (401, 403):
            raise StudioError(
                f"Label Studio at {connection.url} refused the API key (HTTP {exc.status_code}): "
                f"{_detail(exc)}; check {KEY_ENV}"
            ) from None
        if not isinstance(exc.body, dict) and (exc.status_code or 0) < 500:
            # An answer Label Studio's API never gives (an HTML page, a 200 that is not JSON).
            raise StudioError(
                f"{connection.url} is not a Label Studio server: it answered HTTP "
                f"{exc.status_code} with {_kind(exc.body)} where Label Studio's API answers JSON"
            ) from None
        error = StudioUnreachable if (exc.status_code or 0) >= 500 else StudioError
        raise error(
            f"Label Studio at {connection.url} answered HTTP {exc.status_code}: {_detail(exc)}"
        ) from None


def _transient(exc: BaseException) -> bool:
    """No answer, a dropped connection, or a server that is overloaded or failing."""
    from label_studio_sdk.core.api_error import ApiError

    if isinstance(exc, ApiError):
        return (exc.status_code or 0) >= 500 or exc.status_code in (408, 429)
    return isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError)


def _unsent(exc: BaseException) -> bool:
    """No connection was made, so the server never saw the request: safe to send again."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


_STOP, _WAIT = stop_after_attempt(4), wait_exponential(multiplier=0.5, max=8)


@retry(retry=retry_if_exception(_transient), stop=_STOP, wait=_WAIT, reraise=True)
def _retrying(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    return fn(*args, **kwargs)


# A timeout, a dropped connection or a 5xx may come after the server acted: sending again could
# create a second project, webhook or view, or a task's prediction twice.
@retry(retry=retry_if_exception(_unsent), stop=_STOP, wait=_WAIT, reraise=True)
def _retrying_unsent(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    return fn(*args, **kwargs)


def _kind(body: object) -> str:
    text = str(body or "").lstrip()[:200].lower()
    if not text:
        return "an empty body"
    return "an HTML page" if text.startswith(("<!doctype", "<html", "<")) else "text"


def _detail(exc: Exception) -> str:
    """The server's reason, on one line and short (an HTML error page must not flood the terminal)."""
    body = getattr(exc, "body", None)
    text = str(body.get("detail") or body) if isinstance(body, dict) else str(body or exc)
    return " ".join(text.split())[:300]
