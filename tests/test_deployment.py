"""The production files: docker-compose.yml, the Dockerfile and the entrypoint.

Docker itself is not available where the tests run, so the compose file is checked as data
and the entrypoint is run directly with the project's Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.urls import resolve

from tests.fixtures_mail import free_port

# Each test runs Quire in processes of its own, with settings and a database of its own.
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent
APP_SERVICES = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_it_declares_every_service_with_a_healthcheck(compose: dict[str, Any]) -> None:
    services = compose["services"]

    assert set(services) == {
        *("migrate", "web", "worker", "beat", "postgres", "redis", "mailpit"),
        "postgres-replica",  # optional: `--profile replica` (docs/operating.md)
    }
    assert services["postgres-replica"]["profiles"] == ["replica"]
    for name, service in services.items():
        if name == "migrate":  # a one-off step that exits
            continue
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    assert services["postgres"]["image"] == "pgvector/pgvector:pg16"
    assert services["redis"]["image"] == "redis:7"
    assert services["mailpit"]["ports"][0].endswith(":8025")


def test_it_runs_the_web_role_on_port_8000_checked_through_healthz(
    compose: dict[str, Any],
) -> None:
    web = compose["services"]["web"]

    assert web["command"] == ["web"]
    assert web["ports"][0].endswith(":8000")
    check = " ".join(web["healthcheck"]["test"])
    assert "http://127.0.0.1:8000/healthz" in check
    assert resolve("/healthz").url_name == "healthz"
    assert compose["services"]["worker"]["command"] == ["worker"]
    assert compose["services"]["beat"]["command"] == ["beat"]


def test_it_configures_the_app_services_from_the_environment(compose: dict[str, Any]) -> None:
    for name in APP_SERVICES:
        service = compose["services"][name]
        env = service["environment"]
        assert env["SECRET_KEY"].startswith("${SECRET_KEY:?"), name
        assert (
            env["DATABASE_URL"].startswith("postgres://")
            and "@postgres:5432/" in env["DATABASE_URL"]
        )
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert env["EMAIL_HOST"] == "${EMAIL_HOST:-mailpit}"
        assert env["EMAIL_PORT"] == "${EMAIL_PORT:-1025}"
        assert "QUIRE_BASE_URL" in env and "ALLOWED_HOSTS" in env
        assert env["DEBUG"] == "0"
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert "media:/app/var/media" in service["volumes"]
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]


def test_it_builds_a_slim_image_that_runs_as_a_normal_user() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()

    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    assert "pip install -r requirements.txt" in dockerfile
    users = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")]
    assert users and users[-1] not in {"root", "0"}
    assert 'ENTRYPOINT ["/app/docker/entrypoint.sh"]' in dockerfile


def test_it_migrates_once_as_its_own_step_before_the_app_starts(compose: dict[str, Any]) -> None:
    script = (ROOT / "docker" / "entrypoint.sh").read_text()
    migrate = script.split("    migrate)", 1)[1].split(";;", 1)[0]
    web = script.split("    web)", 1)[1].split(";;", 1)[0]
    services = compose["services"]

    assert subprocess.run(["sh", "-n", str(ROOT / "docker" / "entrypoint.sh")]).returncode == 0
    assert migrate.index("wait_for_database") < migrate.index("migrate --noinput")
    assert "migrate" not in web
    assert web.index("collectstatic --noinput") < web.index("exec gunicorn config.wsgi:application")
    assert services["migrate"]["command"] == ["migrate"]
    assert services["migrate"]["restart"] == "no"
    for name in APP_SERVICES:
        after = services[name]["depends_on"]["migrate"]
        assert after == {"condition": "service_completed_successfully"}, name


def test_it_applies_the_migrations_with_the_migrate_role(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'quire.sqlite3'}"

    result = entrypoint("migrate", DATABASE_URL=database)
    again = entrypoint("manage", "migrate", "--check", DATABASE_URL=database)

    assert result.returncode == 0, result.stderr
    assert again.returncode == 0, again.stdout + again.stderr


def entrypoint(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["sh", str(ROOT / "docker" / "entrypoint.sh"), *args],
        cwd=ROOT,
        env={"PATH": path, "SECRET_KEY": "entrypoint-test", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_runs_manage_py_once_the_database_answers(tmp_path: Path) -> None:
    result = entrypoint("manage", "check", DATABASE_URL=f"sqlite:///{tmp_path / 'quire.sqlite3'}")

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_it_gives_up_waiting_for_an_unreachable_database_with_a_message() -> None:
    result = entrypoint(
        "manage",
        "check",
        DATABASE_URL=f"postgres://quire@127.0.0.1:{free_port()}/quire",
        DB_WAIT_SECONDS="1",
    )

    assert result.returncode != 0
    assert "The database is still unreachable" in result.stderr
    assert "DATABASE_URL" in result.stderr
