"""Guard rails on workflows: a step nobody could complete is refused with the reason, and
assigning a workflow where another one applies asks first, naming it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.test import APIClient

from core.errors import InvalidArgument
from reviews import workflows
from reviews.models import WorkflowAssignment
from wiki.models import Page


def _api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_refuses_a_step_whose_group_is_empty(admin_user: User) -> None:
    Group.objects.create(name="Legal")
    with pytest.raises(InvalidArgument, match="Legal, which has no active members"):
        workflows.workflow_create(
            actor=admin_user, name="Legal", steps=[{"group": "Legal", "approvals": 1}]
        )
    response = _api(admin_user).post(
        "/api/v1/workflows/",
        {"name": "Legal", "steps": [{"group": "Legal", "approvals": 1}]},
        format="json",
    )
    assert response.status_code == 400
    assert "no active members" in response.json()["error"]["message"]


def test_it_refuses_more_approvals_than_the_group_has_members(
    admin_user: User, make_user: Callable[..., User]
) -> None:
    make_user("lena", "Legal")
    make_user("luis", "Legal")
    make_user("gone", "Legal", is_active=False)  # a deactivated member decides nothing
    response = _api(admin_user).post(
        "/api/v1/workflows/",
        {"name": "Legal", "steps": [{"name": "Legal", "group": "Legal", "approvals": 5}]},
        format="json",
    )
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "asks for 5 approvals from Legal, which has 2 active members" in message
    html = _client(admin_user).post(
        "/reviews/workflows/",
        {"name": "Legal", "step_1_name": "Legal", "step_1_group": "Legal", "step_1_approvals": "5"},
    )
    assert "which has 2 active members" in html.content.decode()


def test_it_refuses_steps_that_would_need_one_person_twice(
    admin_user: User, make_user: Callable[..., User]
) -> None:
    make_user("lena", "Legal", "Compliance")
    make_user("luis", "Legal", "Compliance")
    with pytest.raises(InvalidArgument, match="one person counts once per review"):
        workflows.workflow_create(
            actor=admin_user,
            name="Twice",
            steps=[
                {"group": "Legal", "approvals": 2},
                {"group": "Compliance", "approvals": 1},
            ],
        )


def test_it_asks_before_replacing_another_workflows_assignment(
    admin_user: User,
    make_user: Callable[..., User],
    make_page: Callable[..., Page],
    reviewer: User,
) -> None:
    make_user("lena", "Legal")
    policies = make_page("Policies", "All.\n")
    legal = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=[{"group": "Legal"}]
    )
    quick = workflows.workflow_create(
        actor=admin_user, name="Quick", steps=[{"group": "Reviewers"}]
    )
    workflows.workflow_assign(actor=admin_user, workflow=legal, page=policies)
    api = _api(admin_user)
    url = f"/api/v1/workflows/{quick.pk}/pages/"
    refused = api.post(url, {"pageId": policies.public_id}, format="json")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert "“Legal review”" in error["message"] and '"replace": true' in error["message"]
    assert WorkflowAssignment.objects.get(page=policies).workflow == legal
    # In the browser: the screen names it and asks; confirming replaces it.
    asked = _client(admin_user).post(
        f"/reviews/workflows/{quick.pk}/pages/", {"page": policies.public_id}
    )
    assert asked.status_code == 409
    assert "already goes through the workflow “Legal review”" in asked.content.decode()
    assert WorkflowAssignment.objects.get(page=policies).workflow == legal
    _client(admin_user).post(
        f"/reviews/workflows/{quick.pk}/pages/", {"page": policies.public_id, "replace": "1"}
    )
    assert WorkflowAssignment.objects.get(page=policies).workflow == quick
    # Over REST, the explicit flag.
    back = api.post(
        f"/api/v1/workflows/{legal.pk}/pages/",
        {"pageId": policies.public_id, "replace": True},
        format="json",
    )
    assert back.status_code == 201
    assert WorkflowAssignment.objects.get(page=policies).workflow == legal
