"""Label Studio users for annotators and curators, members of the organisation, able to log in.

Label Studio's API creates a user without a password (no one can log in as it), so each person
signs up as a browser would, through the organisation's invite link with a generated password:
Label Studio then makes them a member of the organisation. The form is posted with ``urllib``
(as :mod:`goldloop.studio.server` checks its server); the invite link and the check that every
user exists go through the SDK client, by :meth:`goldloop.studio.connection.Studio.call`.
"""

from __future__ import annotations

import http.cookiejar
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from goldloop.errors import GoldloopError
from goldloop.studio.connection import Studio, StudioError

SIGNUP_PATH = "/user/signup/"
FORM_TIMEOUT_S = 30.0
# One @, something before it, a domain of non-empty dotted labels, and no blank anywhere.
EMAIL = re.compile(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$")


@dataclass(frozen=True)
class StudioUser:
    """A person's login; ``password`` is None for someone who was a user already."""

    email: str
    password: str | None


def signup_emails(emails: Sequence[str]) -> list[str]:
    """The distinct addresses to sign up, lower-cased; one that is not an address (one ``@``, a
    dotted domain, no blank) is refused. It asks no server, so a door checks them first."""
    wanted = list(dict.fromkeys(email.strip().lower() for email in emails))
    for email in wanted:
        if not EMAIL.match(email):
            raise GoldloopError(f"{email!r} is not an e-mail address")
    return wanted


def add_users(studio: Studio, emails: Sequence[str]) -> list[StudioUser]:
    """Sign each e-mail up (those already users are left as they are) and check they exist."""
    wanted = signup_emails(emails)
    existing = _emails(studio)
    token = studio.call(studio.sdk.organizations.invites.get_invite_link).token
    if not token:
        raise StudioError(
            f"{studio.connection.url}: Label Studio gave no invite link to sign people up"
        )
    done = []
    for email in wanted:
        if email in existing:
            done.append(StudioUser(email, None))
            continue
        # Django refuses short, common or all-digit passwords: 16 URL-safe characters pass.
        password = secrets.token_urlsafe(12)
        _sign_up(studio.connection.url, token, email, password)
        done.append(StudioUser(email, password))
    missing = [user.email for user in done if user.email not in _emails(studio)]
    if missing:
        raise StudioError(
            f"{studio.connection.url}: Label Studio did not create {', '.join(missing)} (its "
            "sign-up form refused them)"
        )
    return done


def _emails(studio: Studio) -> set[str]:
    return {str(user.email).lower() for user in studio.call(studio.sdk.users.list)}


def _sign_up(url: str, token: str, email: str, password: str) -> None:
    """Post the sign-up form as a browser does: its page first (the CSRF cookie), then the form."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = f"{url}{SIGNUP_PATH}?{urllib.parse.urlencode({'token': token})}"
    try:
        opener.open(page, timeout=FORM_TIMEOUT_S).read()
        csrf = next((c.value for c in jar if c.name == "csrftoken"), "")
        form = urllib.parse.urlencode(
            {"email": email, "password": password, "csrfmiddlewaretoken": csrf}
        ).encode()
        request = urllib.request.Request(page, data=form, headers={"Referer": page})
        opener.open(request, timeout=FORM_TIMEOUT_S).read()
    except (urllib.error.URLError, OSError) as exc:
        raise StudioError(f"{url}: signing {email} up failed ({exc})") from exc
