"""Routed review mail: an email owed to a step's members is not sent once the proposal has
moved on to another group's step (a gathered follow-up or a digest that comes later)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.core.mail import EmailMessage

from reviews import outbox, workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.models import Notification, NotificationStatus
from wiki.models import Page


def test_it_does_not_email_a_step_the_proposal_has_already_passed(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
    mailoutbox: list[EmailMessage],
) -> None:
    lena, luis, lara = (make_user(name, "Legal") for name in ("lena", "luis", "lara"))
    make_user("cora", "Compliance")
    policies = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Legal review",
        steps=[
            {"name": "Legal", "group": "Legal", "approvals": 2},
            {"name": "Compliance", "group": "Compliance", "approvals": 1},
        ],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=policies)
    privacy = make_page("Privacy", "We keep little.\n", parent=policies)

    proposal = version_propose(actor=reader, page=privacy, body="We keep nothing.\n")
    owed = Notification.objects.filter(version=proposal, recipient=lara)
    assert owed.get().status == NotificationStatus.PENDING  # Legal is asked first

    # Legal decides before lara's email went out: the proposal now waits on another step.
    version_approve(actor=lena, version=proposal)
    version_approve(actor=luis, version=proposal)
    proposal.refresh_from_db()
    assert proposal.review.current_step["group"] == "Compliance"

    outbox.send_review_requests(lara.pk)

    assert [m for m in mailoutbox if lara.email in m.to] == []
    assert owed.get().status == NotificationStatus.SKIPPED
