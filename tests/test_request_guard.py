"""A database that goes away never gives an HTML 500: a restart is survived (connections are
health-checked) and a database that is down is 503 with Retry-After. (NUL and deep JSON:
tests/test_bad_input.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from core.actors import SystemActor
from reviews.api_tokens import api_token_create
from tests.conftest import is_postgres
from tests.fixtures_mail import free_port
from tests.fixtures_servers import QuireServer
from wiki.models import Page

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
ACCEPT = "application/json, text/event-stream"
MakePage = Callable[..., Page]
DEEP = b"[" * 50_000 + b"]" * 50_000


@pytest.fixture
def api(reader: User) -> Client:
    client = Client()
    client.force_login(reader)
    return client


@pytest.mark.postgres
def test_it_survives_a_database_restart_without_an_error(
    quire_servers: Callable[..., QuireServer], make_page: MakePage, reader: User
) -> None:
    if not is_postgres():
        pytest.skip("a restart drops PostgreSQL connections; SQLite has none")
    page = make_page("Refunds")
    token = _api_token(reader)
    # gunicorn keeps its database connection between requests, as in production.
    server = quire_servers(env={"REDIS_URL": ""})
    url = f"{server.url}/api/v1/pages/{page.public_id}/"
    headers = {"Authorization": f"Token {token}"}
    assert httpx.get(url, headers=headers).status_code == 200

    # What a restart does to the server's open connections: every one of them is dropped.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        [(dropped,)] = cursor.fetchall()

    assert dropped >= 1
    assert httpx.get(url, headers=headers).status_code == 200


def _api_token(user: User) -> str:
    return api_token_create(actor=SystemActor("tests"), user=user)


@pytest.fixture
def server_without_database(tmp_path: Path) -> Iterator[str]:
    """Quire under gunicorn, pointed at a PostgreSQL port where nothing listens."""
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "a-test-secret-that-is-long-enough-for-this-test",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/quire",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    env.pop("REDIS_URL", None)
    log = (tmp_path / "gunicorn.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            "1",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(base + "/login/", timeout=1)
            break
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError((tmp_path / "gunicorn.log").read_text()) from None
            time.sleep(0.2)
    yield base
    process.terminate()
    process.wait(timeout=15)


def test_it_answers_503_with_retry_after_when_the_database_is_down(
    server_without_database: str,
) -> None:
    api = httpx.get(
        server_without_database + "/api/v1/pages/", headers={"Authorization": "Token abc"}
    )
    mcp = httpx.post(
        server_without_database + "/mcp",
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        headers={
            "Authorization": "Bearer qa_x",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        },
    )
    health = httpx.get(server_without_database + "/healthz")

    assert (api.status_code, api.headers["Retry-After"]) == (503, "5")
    assert api.json()["error"]["code"] == "unavailable"
    assert (mcp.status_code, mcp.headers["Retry-After"]) == (503, "5")
    assert mcp.json()["error"]["message"].startswith("The database is unavailable for a moment")
    assert health.status_code == 503
    assert health.json()["checks"]["database"] == "error: OperationalError"
