"""/healthz: the database (and Redis when configured) as JSON, for load balancers."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings

from tests.fixtures_mail import free_port
from tests.prerequisites import reachable

pytestmark = pytest.mark.django_db

LOCAL_REDIS = "redis://127.0.0.1:6379/0"


@override_settings(REDIS_URL="")
def test_it_reports_the_database_in_one_query(
    client: Client, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(1):
        response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok"},
        "search": {"model": "none", "mode": "keyword-only"},
    }


def test_it_reports_an_unreachable_redis_as_degraded_not_down(client: Client) -> None:
    # Quire keeps serving without Redis, so a load balancer must keep sending it traffic.
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0"):
        response = client.get("/healthz")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("error: ")


def test_it_reports_a_reachable_redis_as_ok(client: Client, settings: Any) -> None:
    url = settings.REDIS_URL or LOCAL_REDIS
    if not reachable(url):
        pytest.skip(f"no Redis at {url}")
    with override_settings(REDIS_URL=url):
        response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "ok"},
        "search": {"model": "none", "mode": "keyword-only"},
    }


def test_it_answers_without_a_login_and_only_to_get(client: Client) -> None:
    assert client.get("/healthz").status_code in {200, 503}
    assert client.post("/healthz").status_code == 405
