"""A workflow step's own due time: set on the workflow screen and over REST, snapshotted with
the proposal's steps, and used by the reminders for the step the proposal waits at (a step
without one: QUIRE_REVIEW_DUE_HOURS)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from reviews import asking, workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.models import WorkflowStep
from wiki.models import Page, Version
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.usefixtures("eager_tasks")


@pytest.fixture
def lawyers(make_user: Callable[..., User]) -> list[User]:
    return [make_user(name, "Legal") for name in ("lena", "luis")]


def _proposal(
    make_page: Callable[..., Page], admin_user: User, reader: User, steps: list[dict[str, Any]]
) -> Version:
    root = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(actor=admin_user, name="Legal review", steps=steps)
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)
    page = make_page("Refunds", "Five days.\n", parent=root)
    return version_propose(actor=reader, page=page, body="Seven days.\n")


def test_it_reminds_at_the_steps_own_due_time(
    make_page: Callable[..., Page],
    admin_user: User,
    reader: User,
    lawyers: list[User],
    settings: Any,
) -> None:
    settings.QUIRE_REVIEW_DUE_HOURS = 48
    settings.QUIRE_REVIEW_ESCALATE_HOURS = 24
    steps = [{"name": "Legal", "group": "Legal", "approvals": 1, "due_hours": 4}]
    _proposal(make_page, admin_user, reader, steps)
    start = timezone.now()
    assert asking.reviews_remind(now=start + timedelta(hours=3)) == {"deciders": 0, "admins": 0}
    assert asking.reviews_remind(now=start + timedelta(hours=5)) == {"deciders": 1, "admins": 0}
    # Escalation comes QUIRE_REVIEW_ESCALATE_HOURS after the step's due time.
    assert asking.reviews_remind(now=start + timedelta(hours=29)) == {"deciders": 0, "admins": 1}


def test_it_uses_the_global_due_time_at_a_step_without_one_and_the_next_steps_own(
    make_page: Callable[..., Page],
    admin_user: User,
    reader: User,
    reviewer: User,
    lawyers: list[User],
    settings: Any,
) -> None:
    settings.QUIRE_REVIEW_DUE_HOURS = 48
    steps = [
        {"name": "Legal", "group": "Legal", "approvals": 1},
        {"name": "Final check", "group": REVIEWERS, "approvals": 1, "due_hours": 2},
    ]
    proposal = _proposal(make_page, admin_user, reader, steps)
    start = timezone.now()
    assert asking.reviews_remind(now=start + timedelta(hours=5)) == {"deciders": 0, "admins": 0}
    version_approve(actor=lawyers[0], version=proposal)
    assert asking.reviews_remind(now=start + timedelta(hours=1)) == {"deciders": 0, "admins": 0}
    assert asking.reviews_remind(now=start + timedelta(hours=3)) == {"deciders": 1, "admins": 0}


def test_it_sets_a_steps_due_time_over_rest(
    admin_user: User, lawyers: list[User], reviewer: User
) -> None:
    api = APIClient()
    api.force_authenticate(admin_user)
    body = {
        "name": "Legal review",
        "steps": [
            {"group": "Legal", "approvals": 1, "dueHours": 24},
            {"group": REVIEWERS},
        ],
    }
    created = api.post("/api/v1/workflows/", body, format="json")
    assert created.status_code == 201, created.content
    assert [step["dueHours"] for step in created.json()["steps"]] == [24, None]
    assert list(WorkflowStep.objects.values_list("due_hours", flat=True)) == [24, None]
    bad = {"name": "Quick", "steps": [{"group": "Legal", "dueHours": 0}]}
    assert api.post("/api/v1/workflows/", bad, format="json").status_code == 400


def test_it_sets_a_steps_due_time_on_the_workflow_screen(
    admin_user: User, lawyers: list[User]
) -> None:
    client = Client()
    client.force_login(admin_user)
    answer = client.post(
        "/reviews/workflows/",
        {
            "name": "Legal review",
            "step_1_name": "Legal",
            "step_1_group": "Legal",
            "step_1_approvals": "1",
            "step_1_due_hours": "6",
        },
    )
    assert answer.status_code == 302, answer.content.decode()
    assert WorkflowStep.objects.get().due_hours == 6
    screen = client.get(answer["Location"]).content.decode()
    assert 'name="step_1_due_hours"' in screen and 'value="6"' in screen
