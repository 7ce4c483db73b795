"""docker/compose.yaml runs the stack these tests run: the same services and variables."""

from __future__ import annotations

from pathlib import Path

import yaml

from goldloop.studio.server import QUIET, Database
from tests.fakes.llm_server import FakeLLMServer
from tests.stack.conftest import REPLICA_WORKERS, REPLICAS, replica_env

COMPOSE = Path(__file__).resolve().parents[2] / "docker" / "compose.yaml"
# Process basics, not configuration: the container image sets them itself.
PROCESS = {"PATH", "HOME", "GOLDLOOP_HOME"}


def test_compose_gives_the_backend_every_variable_the_stack_tests_set() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    backend = services["backend"]
    with FakeLLMServer() as llm:
        tested = set(replica_env(llm, "redis://127.0.0.1:1/0", Path("/tmp"))) - PROCESS
    assert tested <= set(backend["environment"]), tested - set(backend["environment"])
    assert backend["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert backend["deploy"]["replicas"] == len(REPLICAS)
    assert backend["environment"]["WORKERS"] == f"${{BACKEND_WORKERS:-{REPLICA_WORKERS}}}"


def test_compose_puts_label_studio_on_postgres_as_studio_start_does() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    environment = services["label-studio"]["environment"]
    ours = Database.from_url("postgresql://labelstudio:pw@postgres:5432/labelstudio").environment()
    assert set(ours) <= set(environment)
    assert {k: environment[k] for k in ("DJANGO_DB", "POSTGRE_HOST", "POSTGRE_NAME", "POSTGRE_USER")} == {
        k: ours[k] for k in ("DJANGO_DB", "POSTGRE_HOST", "POSTGRE_NAME", "POSTGRE_USER")
    }  # fmt: skip
    assert str(environment["POSTGRE_PORT"]) == ours["POSTGRE_PORT"]


def test_compose_switches_off_what_studio_start_switches_off() -> None:
    """Label Studio 1.23.2 reports to HumanSignal's Sentry by default (server and pages): the
    stack's Label Studio gets the embedded server's settings, the empty DSNs included."""
    environment = yaml.safe_load(COMPOSE.read_text())["services"]["label-studio"]["environment"]
    assert {key: environment.get(key) for key in QUIET} == QUIET


def test_the_project_is_named_goldloop_and_its_secrets_stay_out_of_images() -> None:
    assert yaml.safe_load(COMPOSE.read_text())["name"] == "goldloop"
    ignored = (COMPOSE.parents[1] / ".dockerignore").read_text().splitlines()
    assert "docker/.env" in ignored  # the build context is the repository root
