"""REST for permissions per section: /api/v1/pages/{pageId}/grants/ and /access, their shapes
and their errors (each says what to do)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from core.models import AuditEvent
from reviews import workflows
from wiki.models import Page, PageGrant

pytestmark = pytest.mark.django_db

ClientAs = Callable[[User], Client]


def post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_it_grants_lists_and_removes_rights_with_their_shapes(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> None:
    make_user("lana", "Legal")
    legal = make_page("Legal", "Counsel.\n")
    nda = make_page("NDA", "Sign it.\n", parent=legal)
    flow = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=[{"group": "Legal", "approvals": 1}]
    )
    workflows.workflow_assign(actor=admin_user, workflow=flow, page=legal)
    admin = client_as(admin_user)
    url = f"/api/v1/pages/{legal.public_id}/grants/"

    made = post(admin, url, [{"group": "Legal", "rights": ["decide", "read"]}])
    assert made.status_code == 201
    [grant] = made.json()
    assert {key: grant[key] for key in ("group", "rights", "pageId", "path")} == {
        "group": "Legal",
        "rights": ["read", "decide"],
        "pageId": legal.public_id,
        "path": "legal",
    }
    assert admin.get(url).json() == made.json()
    # One object is taken as a list of one; the group's rights on the page are replaced.
    again = post(admin, url, {"group": "Legal", "rights": ["read"]})
    assert again.status_code == 201 and again.json()[0]["rights"] == ["read"]

    access = admin.get(f"/api/v1/pages/{nda.public_id}/access").json()
    assert access["pageId"] == nda.public_id and access["path"] == "legal/nda"
    by_right = {row["right"]: row for row in access["rights"]}
    assert by_right["read"] == {
        "right": "read",
        "everyone": False,
        "groups": ["Legal"],
        "fromPageId": legal.public_id,
        "fromPath": "legal",
        "blockedByWorkflow": None,
    }
    assert by_right["propose"]["everyone"] is True and by_right["propose"]["fromPageId"] is None
    assert by_right["publish"]["groups"] == ["Editors"]
    assert by_right["publish"]["blockedByWorkflow"] == "Legal review"
    assert by_right["decide"]["groups"] == ["Reviewers"]
    assert [g["pageId"] for g in access["grants"]] == [legal.public_id]

    removed = admin.delete(f"{url}{grant['id']}/")
    assert removed.status_code == 204
    assert admin.delete(f"{url}{grant['id']}/").status_code == 404
    assert not PageGrant.objects.exists()
    assert list(
        AuditEvent.objects.filter(action__startswith="grant.").values_list("action", flat=True)
    ) == ["grant.delete", "grant.set", "grant.set"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([{"group": "Legal", "rights": ["write"]}], "the rights are read, propose, publish"),
        ([{"group": "Legal", "rights": []}], "delete its grant"),
        ([{"rights": ["read"]}], "group"),
        ([], "give at least one grant"),
        ("read", "must be a JSON list of grants"),
    ],
)
def test_it_refuses_bad_grants_saying_what_to_do(
    make_page: Callable[..., Page],
    admin_user: User,
    client_as: ClientAs,
    body: Any,
    message: str,
) -> None:
    Group.objects.create(name="Legal")
    page = make_page("Legal", "Counsel.\n")
    response = post(client_as(admin_user), f"/api/v1/pages/{page.public_id}/grants/", body)
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]
    assert not PageGrant.objects.exists()


def test_it_answers_not_found_for_a_group_that_does_not_exist(
    make_page: Callable[..., Page], admin_user: User, client_as: ClientAs
) -> None:
    page = make_page("Legal", "Counsel.\n")
    body = [{"group": "Lawyers", "rights": ["read"]}]
    response = post(client_as(admin_user), f"/api/v1/pages/{page.public_id}/grants/", body)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "not_found"
    assert "there is no group 'Lawyers'; choose one of: Editors, Reviewers" in error["message"]
    assert not PageGrant.objects.exists()


def test_it_keeps_grants_to_admins(
    make_page: Callable[..., Page], editor: User, admin_user: User, client_as: ClientAs
) -> None:
    Group.objects.create(name="Legal")
    page = make_page("Legal", "Counsel.\n")
    client = client_as(editor)
    url = f"/api/v1/pages/{page.public_id}/grants/"
    for response in (
        client.get(url),
        post(client, url, [{"group": "Legal", "rights": ["read"]}]),
        client.get(f"/api/v1/pages/{page.public_id}/access"),
    ):
        assert response.status_code == 403
        assert "only admins" in response.json()["error"]["message"]
    assert Client().get(url).status_code in (401, 403)
    assert client_as(admin_user).get("/api/v1/pages/pg_zzzzzzzz/grants/").status_code == 404
