"""Odd input and a database that goes away never give an HTML 500.

A NUL in a query parameter and JSON nested past the limit are 400 with a JSON error on the
REST API and /mcp; a database restart is survived (connections are health-checked) and a
database that is down is 503 with Retry-After.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from config.middleware import json_depth
from core.actors import SystemActor
from reviews.api_tokens import api_token_create
from tests.fixtures_mail import free_port
from tests.fixtures_mcp import MCP, AgentKey
from tests.fixtures_servers import QuireServer, start_server
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki.models import Page, Version

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


def test_it_measures_json_depth_outside_strings() -> None:
    assert json_depth(b'{"a": [1, {"b": "[[[{{{"}]}') == 3
    assert json_depth(b'"\\"[[["') == 0
    assert json_depth(DEEP) == 50_000


def test_it_refuses_a_nul_in_an_api_query_parameter_with_a_json_400(api: Client) -> None:
    response = api.get("/api/v1/pages/", {"q": "refunds\x00"})

    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "code": "invalid_argument",
            "message": "The query string holds a NUL character (%00). Remove it and send the "
            "request again.",
        }
    }


def test_it_refuses_a_nul_in_a_web_query_parameter_with_a_400(api: Client) -> None:
    response = api.get("/search/", {"q": "a\x00b"})

    assert response.status_code == 400
    assert "NUL" in response.content.decode()


def test_it_refuses_json_nested_too_deep_on_the_api(
    api: Client, make_page: MakePage, reader: User, reviewer: User
) -> None:
    page = make_page("Refunds")
    reviewer_client = Client()
    reviewer_client.force_login(reviewer)

    response = reviewer_client.post(
        f"/api/v1/pages/{page.public_id}/versions/1/approve",
        data=DEEP,
        content_type="application/json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_argument"
    assert "more than 64 levels deep" in response.json()["error"]["message"]


def test_it_refuses_json_nested_too_deep_and_a_nul_on_mcp(
    live_server: Any, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    key = make_agent("docs-bot", can_edit=True, pages=(make_page("Refunds"),))
    url = live_server.url + "/mcp"
    headers = {
        "Authorization": f"Bearer {key.token}",
        "Accept": ACCEPT,
        "Content-Type": "application/json",
    }
    before = (Page.objects.count(), Version.objects.count())

    deep = httpx.post(url, content=DEEP, headers=headers, timeout=HTTP_TIMEOUT, verify=TLS)
    nul = httpx.post(
        url + "?session=%00", content=b"{}", headers=headers, timeout=HTTP_TIMEOUT, verify=TLS
    )

    assert deep.status_code == 400
    assert deep.json()["error"]["code"] == -32600
    assert "more than 64 levels deep" in deep.json()["error"]["message"]
    assert nul.status_code == 400
    assert "NUL" in nul.json()["error"]["message"]
    assert (Page.objects.count(), Version.objects.count()) == before


def test_it_answers_a_nul_in_a_search_query_as_invalid_argument(
    live_server: Any, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    key = make_agent("support-bot", pages=(make_page("Refunds"),))

    error = MCP(live_server.url).error(key, "search_pages", query="refunds\x00policy")

    assert error.startswith("invalid_argument: query has U+0000 NULL at position 8")


# A restart drops PostgreSQL connections; SQLite has none.
@pytest.mark.postgres
def test_it_survives_a_database_restart_without_an_error(
    quire_servers: Callable[..., QuireServer], make_page: MakePage, reader: User
) -> None:
    page = make_page("Refunds")
    token = _api_token(reader)
    # gunicorn keeps its database connection between requests, as in production.
    server = quire_servers(env={"REDIS_URL": ""})
    url = f"{server.url}/api/v1/pages/{page.public_id}/"
    headers = {"Authorization": f"Token {token}"}
    assert httpx.get(url, headers=headers, verify=TLS, timeout=HTTP_TIMEOUT).status_code == 200

    # What a restart does to the server's open connections: every one of them is dropped,
    # and the server is back once they are gone (the timeout waits for each to end: a
    # request sent while one is still ending may get a retryable 503).
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        [(dropped,)] = cursor.fetchall()

    assert dropped >= 1
    assert httpx.get(url, headers=headers, verify=TLS, timeout=HTTP_TIMEOUT).status_code == 200


def _api_token(user: User) -> str:
    return api_token_create(actor=SystemActor("tests"), user=user)


@pytest.fixture
def server_without_database(tmp_path: Path) -> Iterator[str]:
    """Quire under gunicorn, pointed at a PostgreSQL port where nothing listens."""
    server = start_server(
        tmp_path,
        env={
            "SECRET_KEY": "a-test-secret-that-is-long-enough-for-this-test",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/quire",
            "ALLOWED_HOSTS": "127.0.0.1",
            "REDIS_URL": "",
        },
    )
    yield server.url
    server.stop()


def test_it_answers_503_with_retry_after_when_the_database_is_down(
    server_without_database: str,
) -> None:
    api = httpx.get(
        server_without_database + "/api/v1/pages/",
        headers={"Authorization": "Token abc"},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    mcp = httpx.post(
        server_without_database + "/mcp",
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        headers={
            "Authorization": "Bearer qa_x",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        },
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    health = httpx.get(server_without_database + "/healthz", verify=TLS, timeout=HTTP_TIMEOUT)

    assert (api.status_code, api.headers["Retry-After"]) == (503, "5")
    assert api.json()["error"]["code"] == "unavailable"
    assert (mcp.status_code, mcp.headers["Retry-After"]) == (503, "5")
    assert mcp.json()["error"]["message"].startswith("The database is unavailable for a moment")
    assert health.status_code == 503
    assert health.json()["checks"]["database"] == "error: OperationalError"
