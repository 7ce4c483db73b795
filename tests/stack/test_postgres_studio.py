"""Label Studio on PostgreSQL (``goldloop studio start --database``): push and pull for real, the
tasks in PostgreSQL's own tables; the database URL read and refused as documented."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.studio.review import review_tag
from goldloop.studio.server import Database, StudioServerError
from tests.backend.conftest import free_port, wait_for_port
from tests.conftest import Cli, LabelStudioServer, in_ci
from tests.stack.conftest import SessionDatabase
from tests.studio.chromium import browser_missing, chromium
from tests.studio.loop_data import ACTIVATES, INHIBITS, TAG_A, TAG_B, write_inputs

pytestmark = pytest.mark.studio


def test_push_and_pull_against_label_studio_on_postgres(
    kb: KB,
    studio_on_postgres: LabelStudioServer,
    postgres_database: SessionDatabase,
    tmp_path: Path,
    cli: Cli,
) -> None:
    studio, database = studio_on_postgres, postgres_database
    assert studio.state.database == database.url
    env = {"LABEL_STUDIO_URL": studio.url, "LABEL_STUDIO_API_KEY": studio.token}
    documents, gold_a, gold_b = write_inputs(tmp_path)
    name = f"pg-{uuid.uuid4().hex[:6]}"
    pushed = cli("push", "--sample", documents, "--project", name, "--candidates", gold_a,
                 "--other", gold_b, env=env)  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    # The tasks are rows of PostgreSQL's task table, not of a SQLite file.
    count = database.query(
        f"SELECT count(*) FROM task t JOIN project p ON t.project_id = p.id WHERE p.title = '{name}'"
    )
    assert count == "7"
    assert not list(Path(studio.state.data_dir).glob("*.sqlite3"))
    client = studio.studio.sdk
    project = next(p for p in client.projects.list() if p.title == name)
    tasks = {t.data["doc_id"]: t for t in client.tasks.list(project=project.id, fields="all")}
    review = review_tag(TAG_A, TAG_B)
    for doc_id in ("pmid:1", "pmid:4"):  # the annotator accepts the review prediction
        prediction: Any = next(p for p in tasks[doc_id].predictions if p.model_version == review)
        client.annotations.create(id=tasks[doc_id].id, result=prediction.result)
    out_path = tmp_path / "gold.verified.json"
    pulled = cli("pull", "--project", name, "--out", out_path, env=env)
    assert pulled.returncode == 0, pulled.stderr
    gold = read_gold(out_path, kb)
    got = sorted(
        (d.doc_id, h.surface, h.entity_id, h.direction, h.verdict)
        for d in gold.documents
        for h in d.ground_truth
    )
    assert got == [
        ("pmid:1", "activates", ACTIVATES, "forward", "accept"),
        ("pmid:4", "activates", ACTIVATES, "forward", "accept"),
        ("pmid:4", "inhibited by", INHIBITS, "inverse", "accept"),
    ]
    annotations = database.query(
        f"SELECT count(*) FROM task_completion c JOIN project p ON c.project_id = p.id"
        f" WHERE p.title = '{name}'"
    )
    assert annotations == "2"


def test_database_url_is_read_and_its_password_never_kept() -> None:
    db = Database.from_url("postgresql://ls:s3cr%40t@db.example:6543/label_studio", "not-this")
    assert (db.user, db.password, db.host, db.port, db.name) == (
        "ls", "s3cr@t", "db.example", 6543, "label_studio",
    )  # fmt: skip
    assert db.url == "postgresql://ls@db.example:6543/label_studio"
    assert db.environment() == {
        "DJANGO_DB": "default", "POSTGRE_NAME": "label_studio", "POSTGRE_USER": "ls",
        "POSTGRE_HOST": "db.example", "POSTGRE_PORT": "6543", "POSTGRE_PASSWORD": "s3cr@t",
    }  # fmt: skip
    # A URL without a password takes PGPASSWORD as the door read it.
    assert Database.from_url("postgres://127.0.0.1/x", "from-env").password == "from-env"
    assert Database.from_url("postgres://127.0.0.1/x").password is None
    assert Database.from_url("postgres://127.0.0.1/x").user == "postgres"
    with pytest.raises(StudioServerError, match=r"mysql://u:\*\*\*@h/x: only PostgreSQL"):
        Database.from_url("mysql://u:pw@h/x")
    with pytest.raises(StudioServerError, match="no database name"):
        Database.from_url("postgresql://127.0.0.1:5432/")


def test_cli_refuses_a_bad_database_url_in_one_line(tmp_path: Path, cli: Cli) -> None:
    env = {"GOLDLOOP_HOME": str(tmp_path), "GOLDLOOP_STUDIO_DATABASE": "sqlite:///x.db"}
    result = cli("studio", "start", env=env)
    assert result.returncode == 2
    assert "sqlite:///x.db: only PostgreSQL is supported" in result.err
    assert not (tmp_path / "studio" / "server.json").exists()


def _how_to_command(program: str) -> str:
    """The how-to's command line for ``program``, as docs/how-to/team-campaign.md writes it."""
    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "team-campaign.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if line.startswith(f"{program} "))


def test_the_team_how_to_a_second_person_logs_in_from_another_address(
    studio_on_postgres: LabelStudioServer, tmp_path: Path, cli: Cli
) -> None:
    """docs/how-to/team-campaign.md as written: Label Studio on PostgreSQL, a login made by
    `goldloop studio users`, the server's port forwarded from another address of the machine by
    the page's own socat line; a second person logs in there in a real browser and is signed in
    as themselves. (127.0.0.2 stands for the server's public address: loopback, this machine.)"""
    reason = browser_missing() or (None if shutil.which("socat") else "socat is not installed")
    if reason:
        if in_ci():
            pytest.fail(f"the team how-to must run in CI: {reason}")
        pytest.skip(reason)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    studio = studio_on_postgres
    env = {"LABEL_STUDIO_URL": studio.url, "LABEL_STUDIO_API_KEY": studio.token}
    email = f"alice-{uuid.uuid4().hex[:6]}@lab.example"
    logins = tmp_path / "logins.json"
    made = cli("studio", "users", email, "-o", logins, env=env)
    assert made.returncode == 0, made.stderr
    password = {row["email"]: row["password"] for row in json.loads(logins.read_text())}[email]
    # The page's forwarder with this machine's ports: the server's own, and a free one outside.
    port, outside = studio.url.rsplit(":", 1)[1], free_port()
    line = _how_to_command("socat").removesuffix(" &").replace("SERVER_ADDRESS", "127.0.0.2")
    line = line.replace("LISTEN:8080", f"LISTEN:{outside}").replace(":8080", f":{port}")
    forwarder = subprocess.Popen(line.split(), stdout=subprocess.DEVNULL)
    try:
        wait_for_port(outside, forwarder, host="127.0.0.2")
        with chromium("1280,900") as driver:
            url = f"http://127.0.0.2:{outside}"
            driver.get(f"{url}/user/login/")
            driver.find_element(By.NAME, "email").send_keys(email)
            driver.find_element(By.NAME, "password").send_keys(password)
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            # Signed in: Label Studio leaves the login page for its home page, at the same address.
            WebDriverWait(driver, 60).until_not(expected_conditions.url_contains("/user/login"))
            assert driver.current_url.startswith(f"{url}/"), driver.current_url
            # Signed in as that person, through the other address: the API says who it is.
            driver.get(f"{url}/api/current-user/whoami")
            assert email in driver.page_source
    finally:
        forwarder.terminate()
        forwarder.wait(timeout=10)
