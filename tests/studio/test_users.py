"""``goldloop studio users`` against the session's real Label Studio: each person can log in with
the password given once, is a member of the admin's organisation, and a re-run changes nothing."""

from __future__ import annotations

import json
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_goldloop, signed_in


def _login(url: str, email: str, password: str) -> dict[str, Any]:
    """Log in through Label Studio's own login form, then ask who is logged in."""
    with signed_in(url, email, password) as client:
        whoami = client.get("/api/current-user/whoami")
    assert whoami.status_code == 200, (email, whoami.status_code)
    return dict(whoami.json())


def test_users_log_in_as_members_of_the_organisation(label_studio, tmp_path: Path) -> None:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    tag = uuid.uuid4().hex[:6]
    alice, bob = f"alice-{tag}@lab.example", f"Bob-{tag}@lab.example"
    logins = tmp_path / "logins.json"
    result = run_goldloop(["studio", "users", alice, bob, "--out", logins], env)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(logins.stat().st_mode) == 0o600
    written = json.loads(logins.read_text())
    assert [row["email"] for row in written] == [alice, bob.lower()]
    for row in written:
        assert row["password"] not in result.stdout  # written, not printed
    admin = label_studio.studio.sdk.users.whoami()
    for row in written:
        me = _login(label_studio.url, row["email"], row["password"])
        assert me["email"] == row["email"]
        assert me["active_organization"] == admin.active_organization
    members = {u.email for u in label_studio.studio.sdk.users.list()}
    assert {alice, bob.lower()} <= members

    # Printed once when no file is given; people who exist are left as they are.
    carol = f"carol-{tag}@lab.example"
    again = run_goldloop(["studio", "users", alice, carol], env)
    assert again.returncode == 0, again.stderr
    assert f"{alice}: a user already (password unchanged)" in again.stdout.splitlines()
    (line,) = [x for x in again.stdout.splitlines() if x.startswith(f"{carol}: password ")]
    password = line.removeprefix(f"{carol}: password ")
    assert _login(label_studio.url, carol, password)["email"] == carol
    assert _login(label_studio.url, alice, written[0]["password"])["email"] == alice


@pytest.mark.parametrize("email", ["not-an-email", "a@b"])
def test_a_bad_address_is_refused_before_anyone_is_created(label_studio, email: str) -> None:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    before = len(label_studio.studio.sdk.users.list())
    result = run_goldloop(["studio", "users", f"ok-{uuid.uuid4().hex[:6]}@lab.example", email], env)
    assert result.returncode == 2
    assert result.err == f"error: {email!r} is not an e-mail address"
    assert len(label_studio.studio.sdk.users.list()) == before


@pytest.mark.parametrize(
    "email", ["a@@lab.example", "a b@lab.example", "a@lab..example", "a@.example", "@lab.example"]
)
def test_an_address_is_checked_without_a_server(email: str) -> None:
    """Issue 44, item 9: one @, a dotted domain of non-empty labels, no blank; no server asked."""
    from goldloop.errors import GoldloopError
    from goldloop.studio.users import signup_emails

    with pytest.raises(GoldloopError, match="is not an e-mail address"):
        signup_emails(["ok@lab.example", email])
    assert signup_emails([" Bob@Lab.example", "bob@lab.example"]) == ["bob@lab.example"]
