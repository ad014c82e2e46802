"""REST decisions take a JSON object or nothing: any other JSON value is a 400 that says so and
decides nothing; and the schema declares the 414 the server answers to an over-long request
line."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from core.actors import SystemActor
from reviews.actions.propose import version_propose
from reviews.api_tokens import api_token_create
from tests.fixtures_servers import QuireServer
from tests.fixtures_web import rest_client
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki.models import Page, Version, VersionStatus

NOT_OBJECTS = [("[]", "an array"), ('"str"', "a string"), ("123", "a number"), ("null", "null")]


@pytest.fixture
def proposal(make_page: Callable[..., Page], reader: User) -> Version:
    page = make_page("Refunds", "Five days.\n")
    return version_propose(actor=reader, page=page, body="Seven days.\n")


@pytest.mark.parametrize("action", ["approve", "reject", "withdraw"])
@pytest.mark.parametrize(("body", "kind"), NOT_OBJECTS)
def test_it_refuses_a_decision_whose_body_is_not_a_json_object(
    proposal: Version, reviewer: User, reader: User, action: str, body: str, kind: str
) -> None:
    who = reader if action == "withdraw" else reviewer
    url = f"/api/v1/pages/{proposal.page.public_id}/versions/{proposal.number}/{action}"

    response = rest_client(who).post(url, body, content_type="application/json")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_argument"
    assert error["message"] == (
        f'the body must be a JSON object, such as {{"comment": "..."}}, or empty; it is '
        f"{kind}. Nothing was changed."
    )
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW


def test_it_still_takes_an_empty_body_or_an_object(proposal: Version, reviewer: User) -> None:
    url = f"/api/v1/pages/{proposal.page.public_id}/versions/{proposal.number}/approve"
    api = rest_client(reviewer)

    assert api.post(url, "", content_type="application/json").status_code == 200
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.APPROVED


def test_the_schema_declares_a_414_on_every_operation(admin_user: User) -> None:
    client = Client()
    client.force_login(admin_user)
    schema = yaml.safe_load(client.get("/api/schema/").content)

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "414" in operation["responses"], (method, path)


@pytest.mark.django_db(transaction=True)
def test_gunicorn_answers_an_over_long_request_line_with_the_declared_414(
    quire_servers: Callable[..., QuireServer], admin_user: User
) -> None:
    key = api_token_create(actor=SystemActor("tests"), user=admin_user)
    server = quire_servers()

    response = httpx.get(
        f"{server.url}/api/v1/pages/",
        params={"q": "refund " * 1000},
        headers={"Authorization": f"Token {key}"},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )

    assert response.status_code == 414
    declared = json.dumps(
        yaml.safe_load(
            httpx.get(
                f"{server.url}/api/schema/",
                headers={"Authorization": f"Token {key}"},
                verify=TLS,
                timeout=HTTP_TIMEOUT,
            ).content
        )["paths"]["/api/v1/pages/"]["get"]["responses"]["414"]
    )
    assert "request line" in declared
