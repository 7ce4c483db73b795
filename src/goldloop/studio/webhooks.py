"""Label Studio's webhooks to the backend's ``/webhook``: one per project of a campaign.

Connecting an ML backend makes Label Studio 1.23 create ``<backend>/webhook`` for every action,
without authentication, unless a webhook with that URL already exists in the project. So the
campaign's webhook takes that URL: an existing one is updated (duplicates deleted), otherwise one
is created, and each event reaches the backend once, with the backend's basic-auth header.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from goldloop.errors import SettingError
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio, StudioError

ACTIONS = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED")


@dataclass(frozen=True)
class Registered:
    """The webhook of one project and whether it was ``created`` or ``updated``."""

    title: str
    project_id: int
    webhook_id: int
    outcome: str


def webhook_url(backend_url: str) -> str:
    """The backend's ``/webhook``; a backend URL that is not http(s) with a host is refused
    (``setting`` ``url``) before anything is pulled or registered."""
    try:
        parts = urlsplit(backend_url.strip())
        host = parts.hostname
        parts.port  # noqa: B018 (a port out of range or not a number raises here)
    except ValueError as exc:
        raise SettingError("url", f"{backend_url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise SettingError("url", f"{backend_url!r} is not an http(s) URL with a host")
    return backend_url.strip().rstrip("/") + "/webhook"


def basic_auth_header(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def register_webhooks(
    studio: Studio,
    titles: list[str],
    backend_url: str,
    headers: dict[str, str] | None = None,
) -> list[Registered]:
    """Point each existing project of ``titles`` (one must exist) at the backend."""
    found = projects.find_projects(studio, titles)
    if not found:
        named = " or ".join(repr(title) for title in titles)
        raise StudioError(f"{studio.connection.url}: no Label Studio project titled {named}")
    url = webhook_url(backend_url)
    settings: dict[str, Any] = {
        "url": url, "actions": list(ACTIONS), "headers": headers or {}, "is_active": True,
        "send_payload": True, "send_for_all_actions": False,
    }  # fmt: skip
    done = []
    for title, project in found.items():
        hooks = studio.call(studio.sdk.webhooks.list, project=str(project.id))
        same = sorted(
            (h for h in hooks if h.project == project.id and (h.url or "").rstrip("/") == url),
            key=lambda h: h.id,
        )
        for duplicate in same[1:]:
            studio.call_delete(studio.sdk.webhooks.delete, id=duplicate.id)
        if same:
            studio.call(studio.sdk.webhooks.update, id=same[0].id, **settings)
            done.append(Registered(title, project.id, same[0].id, "updated"))
        else:
            created = studio.call_once(studio.sdk.webhooks.create, project=project.id, **settings)
            done.append(Registered(title, project.id, created.id, "created"))
    return done
