"""docker/compose.yaml brought up for real with Docker: every image built on this machine (no
registry is reachable) by docker/test/build-images.sh — the backend from docker/Dockerfile, the
public images' stand-ins from Debian's and PyPI's packages — and swapped in by
docker/test/compose.images.yaml, which changes only the ``image:`` lines.

One scenario, in order, as an operator runs it: ``up --scale backend=2`` and every health check;
``goldloop push`` from the host; the backend connected by its service name with basic auth;
Label Studio's "Retrieve predictions" pre-annotating through it while one replica is killed (the
other answers the retrieve the operator repeats); a second project of the same texts served from
Redis; annotations through the SDK and ``goldloop pull`` equal to them; ``down -v`` leaving
nothing behind. The LLM is the fake provider server, listening on the host's Docker bridge.

Outside CI a missing Docker engine, compose plugin or debootstrap skips it with the reason; in CI
(``CI=true``) it fails.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.studio.connection import Connection, connect
from goldloop.studio.server import free_port
from tests.conftest import REPO, Cli, signed_in
from tests.fakes.llm_server import FAKE_KEY, FakeLLMServer
from tests.stack.conftest import retrieve_predictions, surfaces, unavailable, verbs_answer
from tests.studio.loop_data import DOCS, write_inputs

pytestmark = [pytest.mark.studio, pytest.mark.slow]

DOCKER = REPO / "docker"
COMPOSE_FILES = (DOCKER / "compose.yaml", DOCKER / "test" / "compose.images.yaml")
BUILD_IMAGES = DOCKER / "test" / "build-images.sh"
BUILD_TIMEOUT_S = 3600  # cold: debootstrap and every image; a rerun takes seconds
UP_TIMEOUT_S = 900  # Label Studio's first start runs its migrations on PostgreSQL
ADMIN = "admin@example.com"


def run(args: list[str], timeout: float = 300, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr[-4000:]}")
    return done.stdout


def docker_problem() -> str | None:
    """Why no Docker stack can run here, or None."""
    if shutil.which("docker") is None:
        return "docker is not installed (Debian package docker.io)"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if info.returncode != 0:
        return f"no Docker engine answers: {info.stderr.strip()[-300:]}"
    compose = subprocess.run(
        ["docker", "compose", "version"], capture_output=True, text=True, check=False
    )
    if compose.returncode != 0:
        return "the docker compose plugin is not installed (docker/test/install-compose.sh)"
    if shutil.which("debootstrap") is None:
        base = subprocess.run(
            ["docker", "image", "inspect", "goldloop-test/bookworm"],
            capture_output=True,
            check=False,
        )
        if base.returncode != 0:
            return "debootstrap is not installed (Debian package debootstrap)"
    return None


def bridge_address() -> str:
    """The host's address on Docker's default bridge: every container reaches it."""
    shown = run(["ip", "-4", "-o", "addr", "show", "dev", "docker0"])
    return shown.split(" inet ", 1)[1].split("/", 1)[0]


@dataclass
class ComposeStack:
    project: str
    env_file: Path
    llm: FakeLLMServer
    url: str
    basic_auth: tuple[str, str]
    token: str = ""
    egress: EgressGuard | None = None

    def compose(self, *args: str, timeout: float = 300) -> str:
        files = [arg for path in COMPOSE_FILES for arg in ("-f", str(path))]
        return run(
            ["docker", "compose", "-p", self.project, *files, "--env-file", str(self.env_file),
             *args],
            timeout=timeout,
        )  # fmt: skip

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).split()

    def address(self, container: str) -> str:
        return run(
            ["docker", "inspect", "--format",
             "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", container]
        ).strip()  # fmt: skip

    def left_behind(self) -> list[str]:
        """Containers, volumes and networks of this project that Docker still has."""
        label = f"label=com.docker.compose.project={self.project}"
        found = []
        for kind in (["ps", "-a"], ["volume", "ls"], ["network", "ls"]):
            found += run(["docker", *kind, "--filter", label, "-q"]).split()
        return found


class EgressGuard:
    """Counts (and drops) every packet a compose network sends off this machine: a DNS lookup
    or a connection to any address but the containers' own and the host's. Docker routes what a
    container sends beyond the host through its DOCKER-USER chain; what goes to the host itself
    (the fake provider on the bridge address) does not pass there. Compose networks are bridges
    named br-*; the image builds run on docker0 and are not counted."""

    def __init__(self, project: str) -> None:
        self.comment = f"goldloop-egress-{project}"
        self.rule = ["DOCKER-USER", "-i", "br-+", "!", "-o", "br-+", "-m", "comment",
                     "--comment", self.comment, "-j", "DROP"]  # fmt: skip
        self.installed = False

    def install(self) -> None:
        if shutil.which("iptables") is None:
            unavailable("iptables is not installed: the stack test counts what leaves the machine")
        run(["iptables", "-I", *self.rule])
        self.installed = True

    def packets(self) -> int:
        listing = run(["iptables", "-L", "DOCKER-USER", "-v", "-n", "-x"])
        line = next(row for row in listing.splitlines() if self.comment in row)
        return int(line.split()[0])

    def remove(self) -> None:
        if self.installed:
            run(["iptables", "-D", *self.rule])
            self.installed = False


def api_token(url: str, password: str) -> str:
    """The admin's API token, as a person gets it: sign in, then Account & Settings."""
    with signed_in(url, ADMIN, password, timeout=60) as client:
        reply = client.get("/api/current-user/token")
        reply.raise_for_status()
        return str(reply.json()["token"])


@pytest.fixture(scope="module")
def docker_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeStack]:
    problem = docker_problem()
    if problem:
        unavailable(problem)
    run([str(BUILD_IMAGES)], timeout=BUILD_TIMEOUT_S)
    workdir = tmp_path_factory.mktemp("docker-stack")
    llm = FakeLLMServer(verbs_answer, host=bridge_address()).start()
    password = secrets.token_urlsafe(12)
    basic_auth = ("label-studio", secrets.token_urlsafe(12))
    port = free_port()
    env_file = workdir / "stack.env"
    env_file.write_text(
        "".join(
            f"{k}={v}\n"
            for k, v in {
                "POSTGRES_PASSWORD": secrets.token_urlsafe(12),
                "LABEL_STUDIO_PORT": port,
                "LABEL_STUDIO_HOST": f"http://127.0.0.1:{port}",
                "LABEL_STUDIO_USERNAME": ADMIN,
                "LABEL_STUDIO_PASSWORD": password,
                "GOLDLOOP_PROVIDER": "openai",
                "GOLDLOOP_MODEL": "gpt-test",
                "GOLDLOOP_BASE_URL": llm.base_url("openai"),
                "OPENAI_API_KEY": FAKE_KEY,
                "BASIC_AUTH_USER": basic_auth[0],
                "BASIC_AUTH_PASS": basic_auth[1],
            }.items()
        )
    )
    stack = ComposeStack(
        f"goldloop-test-{uuid.uuid4().hex[:8]}", env_file, llm, f"http://127.0.0.1:{port}",
        basic_auth,
    )  # fmt: skip
    guard = EgressGuard(stack.project)
    try:
        guard.install()
        stack.compose("up", "--detach", "--scale", "backend=2", "--wait", "--wait-timeout",
                      str(UP_TIMEOUT_S), timeout=UP_TIMEOUT_S + 60)  # fmt: skip
        stack.token = api_token(stack.url, password)
        stack.egress = guard
        yield stack
    except AssertionError:
        print(stack.compose("logs", "--no-color", "--tail", "60"))
        raise
    finally:
        stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "20")
        guard.remove()
        llm.close()


def connect_backend(
    client: Any, project_id: int, stack: ComposeStack, url: str = "http://backend:9090"
) -> None:
    """Settings → Model → Connect model: the service name (or one replica's address), Basic
    Authentication."""
    user, password = stack.basic_auth
    client.ml.create(
        project=project_id,
        url=url,
        title="goldloop in docker",
        auth_method="BASIC_AUTH",
        basic_auth_user=user,
        basic_auth_pass=password,
    )


def predictions(client: Any, task_id: int) -> list[dict[str, Any]]:
    """Stored predictions; never ``tasks.get``, which would ask the backend for a missing one."""
    return [p.dict() for p in client.predictions.list(task=task_id)]


def predicts_served(container: str) -> int:
    """The /predict calls a replica answered, from gunicorn's access log (its stdout)."""
    return run(["docker", "logs", container]).count('"POST /predict HTTP/1.1" 200')


def push(cli: Cli, stack: ComposeStack, documents: Path, name: str) -> tuple[int, dict[str, int]]:
    env = {"LABEL_STUDIO_URL": stack.url, "LABEL_STUDIO_API_KEY": stack.token}
    pushed = cli("push", "--sample", documents, "--project", name, "--roles", "primary", env=env)
    assert pushed.returncode == 0, pushed.stderr
    client = connect(Connection(stack.url, stack.token)).sdk
    project = next(p for p in client.projects.list() if p.title == name)
    tasks = {t.data["doc_id"]: t.id for t in client.tasks.list(project=project.id)}
    return project.id, tasks


def unpredicted(cli: Cli, stack: ComposeStack, name: str, tmp_path: Path) -> int:
    """The tasks `goldloop status` reports no pre-annotation reached."""
    env = {"LABEL_STUDIO_URL": stack.url, "LABEL_STUDIO_API_KEY": stack.token}
    out = tmp_path / f"{name}.status.json"
    done = cli("status", "--project", name, "-o", out, env=env)
    assert done.returncode == 0, done.stderr
    return int(json.loads(out.read_text())["roles"]["primary"]["without_prediction"])


def expected_hits(result: list[dict[str, Any]], kb: KB) -> list[tuple[str, str, str]]:
    """(surface, entity id, direction) of each region an annotation holds, read from its own
    result items: the region's text, its relation's label through the KB, its direction."""
    by_id: dict[str, dict[str, Any]] = {}
    for item in result:
        by_id.setdefault(item["id"], {})[item["from_name"]] = item["value"]
    hits = []
    for values in by_id.values():
        relation = kb.lookup(values["relation"]["taxonomy"][0][-1])
        assert relation is not None
        hits.append(
            (values["mention"]["text"], relation.entity_id, values["direction"]["choices"][0])
        )
    return sorted(hits)


def test_the_compose_stack_pre_annotates_survives_a_replica_and_pulls_what_people_did(
    docker_stack: ComposeStack, tmp_path: Path, cli: Cli, kb: KB
) -> None:
    stack, llm = docker_stack, docker_stack.llm
    assert len(stack.containers("backend")) == 2
    for service in ("postgres", "label-studio", "redis", "backend"):
        for container in stack.containers(service):  # `up --wait` waited for each health check
            health = run(["docker", "inspect", "--format", "{{.State.Health.Status}}", container])
            assert health.strip() == "healthy", (service, health)
    # Label Studio runs as `goldloop studio start` runs it: nothing reported off the machine.
    (studio,) = stack.containers("label-studio")
    variables = run(["docker", "inspect", "--format", "{{json .Config.Env}}", studio])
    assert '"SENTRY_DSN="' in variables and '"FRONTEND_SENTRY_DSN="' in variables
    client = connect(Connection(stack.url, stack.token)).sdk
    documents, _, _ = write_inputs(tmp_path)
    name = f"docker-{uuid.uuid4().hex[:6]}"
    primary = [d for d in DOCS if d["role"] == "primary"]

    # Both replicas serve, and share Redis across containers: the same texts in two projects,
    # each connected to one replica by its own address; the second costs the provider nothing.
    first, second = stack.containers("backend")
    shared_docs = [{**d, "text": d["text"] + " Redis keeps the answer."} for d in primary]
    shared, _, _ = write_inputs(tmp_path / "shared", shared_docs)
    served: dict[str, list[str]] = {}
    for replica in (first, second):
        project, replica_tasks = push(cli, stack, shared, f"{name}-{replica[:6]}")
        connect_backend(client, project, stack, f"http://{stack.address(replica)}:9090")
        asked, before = llm.request_count, predicts_served(replica)
        retrieve_predictions(client, project, list(replica_tasks.values()))
        assert predicts_served(replica) > before, replica  # this replica answered
        if replica == second:
            assert llm.request_count == asked  # ...from the answers the first one stored
        served[replica] = [
            json.dumps(sorted(surfaces(predictions(client, t)[0]))) for t in replica_tasks.values()
        ]
    assert served[first] == served[second]
    assert int(stack.compose("exec", "-T", "redis", "redis-cli", "dbsize").strip()) >= 1
    project_id, tasks = push(cli, stack, documents, name)
    assert sorted(tasks) == sorted(d["doc_id"] for d in primary)
    connect_backend(client, project_id, stack)

    # Pre-annotation through the backend, a replica killed while it holds a /predict.
    llm.latency_s = 2.0
    ids = list(tasks.values())
    errors: list[str] = []

    def retrieve(group: list[int]) -> None:
        try:
            retrieve_predictions(client, project_id, group)
        except Exception as exc:  # the action fails when its replica dies; the operator sees it
            errors.append(repr(exc))

    threads = [threading.Thread(target=retrieve, args=(ids[i::3],), daemon=True) for i in range(3)]
    for thread in threads:
        thread.start()
    addresses = {stack.address(c): c for c in stack.containers("backend")}
    deadline = time.monotonic() + 120
    while not any(n > 0 and a in addresses for a, n in llm.in_flight_from.items()):
        assert time.monotonic() < deadline, "no backend replica asked the provider"
        time.sleep(0.05)
    busy = next(a for a, n in llm.in_flight_from.items() if n > 0 and a in addresses)
    run(["docker", "kill", addresses[busy]])
    for thread in threads:
        thread.join(timeout=300)
    llm.latency_s = 0.0
    (survivor,) = stack.containers("backend")  # the killed one is not running
    assert survivor != addresses[busy]
    missing = [t for t in ids if not predictions(client, t)]
    assert missing, f"the kill should have cost the predictions it held ({errors})"
    # Label Studio counts that retrieve as done; `goldloop status` reports what it cost.
    assert unpredicted(cli, stack, name, tmp_path) == len(missing)
    served_before = predicts_served(survivor)
    retrieve_predictions(client, project_id, missing)  # the operator retrieves again
    assert predicts_served(survivor) > served_before  # the other replica answered it
    assert set(llm.in_flight_from) <= set(addresses)  # every provider call came from a replica
    assert unpredicted(cli, stack, name, tmp_path) == 0
    for doc in primary:
        (prediction,) = predictions(client, tasks[doc["doc_id"]])  # exactly one per task
        expected = ["activates"] if "activates" in doc["text"] else []
        assert surfaces(prediction) == expected, doc["doc_id"]

    # Redis holds the answers: the same texts in a second project cost the provider nothing.
    keys = int(stack.compose("exec", "-T", "redis", "redis-cli", "dbsize").strip())
    assert keys >= 1
    asked = llm.request_count
    second_id, second_tasks = push(cli, stack, documents, f"{name}-again")
    connect_backend(client, second_id, stack)
    retrieve_predictions(client, second_id, list(second_tasks.values()))
    assert llm.request_count == asked
    for doc_id, task_id in second_tasks.items():
        (prediction,) = predictions(client, task_id)
        assert surfaces(prediction) == surfaces(predictions(client, tasks[doc_id])[0])

    # People annotate through the SDK; pull from the host says exactly what they did.
    results = {}
    for doc in primary:
        (prediction,) = predictions(client, tasks[doc["doc_id"]])
        result = prediction["result"]
        if doc["doc_id"] == "pmid:3":  # one annotator removes a region: "activates" stays out
            result = [i for i in result if i["id"] != result[0]["id"]]
        results[doc["doc_id"]] = result
        client.annotations.create(id=tasks[doc["doc_id"]], result=result)
    out = tmp_path / "gold.verified.json"
    env = {"LABEL_STUDIO_URL": stack.url, "LABEL_STUDIO_API_KEY": stack.token}
    pulled = cli("pull", "--project", name, "--out", out, env=env)
    assert pulled.returncode == 0, pulled.stderr
    gold = {d.doc_id: d for d in read_gold(out, kb).documents}
    assert sorted(gold) == sorted(results)
    for doc_id, result in results.items():
        got = sorted((h.surface, h.entity_id, h.direction) for h in gold[doc_id].ground_truth)
        assert got == expected_hits(result, kb), doc_id
    assert sum(len(d.ground_truth) for d in gold.values()) == 2  # pmid:1 and pmid:4

    # Nothing left the machine: no lookup, no connection beyond the host (Sentry, analytics,
    # version checks, anything a service would fetch).
    assert stack.egress is not None and stack.egress.packets() == 0

    # Down with its volumes: nothing of the stack is left.
    stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "20")
    assert stack.left_behind() == []
