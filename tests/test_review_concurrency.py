"""Two reviewers deciding the same proposal at the same moment: exactly one decision, or, at
a step that needs two approvals, exactly two approvals and one move on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from core.models import AuditEvent
from reviews import workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.models import Approval
from reviews.selectors import version_of
from tests.conftest import live
from wiki.models import Page, VersionStatus
from wiki.roles import REVIEWERS
from wiki.selectors import page_for_person


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("second_action", ["approve", "reject"])
def test_it_leaves_exactly_one_decision_when_two_reviewers_decide_at_once(
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    second_reviewer: User,
    second_action: str,
) -> None:
    page = make_page("Race", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    url = f"/reviews/pages/{page.public_id}/v{proposal.number}/"
    barrier = threading.Barrier(2)
    statuses: dict[str, int] = {}

    def decide(user: User, action: str) -> None:
        client = Client()
        client.force_login(user)
        data: dict[str, Any] = {"action": action, "expected_live_number": 1, "comment": "Mine."}
        barrier.wait()
        try:
            statuses[user.username] = client.post(url, data).status_code
        finally:
            connection.close()

    threads = [
        threading.Thread(target=decide, args=(reviewer, "approve")),
        threading.Thread(target=decide, args=(second_reviewer, second_action)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses.values()) == [302, 409]
    proposal.refresh_from_db()
    assert proposal.status in (VersionStatus.APPROVED, VersionStatus.REJECTED)
    winner = next(name for name, code in statuses.items() if code == 302)
    assert proposal.decided_by is not None and proposal.decided_by.username == winner
    decisions = AuditEvent.objects.filter(action__in=["version.approve", "version.reject"])
    assert decisions.count() == 1
    expected_live = "new\n" if proposal.status == VersionStatus.APPROVED else "old\n"
    assert live(page).body == expected_live


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("steps", [1, 2], ids=["last-step", "first-of-two"])
def test_it_counts_two_approvals_at_the_same_moment_as_two(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
    reviewer: User,
    steps: int,
) -> None:
    """Legal needs two approvals; its two members approve at once: both count, the step is
    done exactly once (never skipped, never a double publish)."""
    lawyers = [make_user(name, "Legal") for name in ("lena", "luis")]
    page = make_page("Race", "old\n")
    plan = [{"name": "Legal", "group": "Legal", "approvals": 2}]
    if steps == 2:
        plan.append({"name": "Final", "group": REVIEWERS, "approvals": 1})
    workflow = workflows.workflow_create(actor=admin_user, name="Legal", steps=plan)
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=page)
    proposal = version_propose(actor=reader, page=page, body="new\n")
    url = f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/approve"
    barrier = threading.Barrier(2)
    statuses: dict[str, int] = {}

    def approve(user: User) -> None:
        client = Client()
        client.force_login(user)
        barrier.wait()
        try:
            response = client.post(url, {"comment": "Yes."}, content_type="application/json")
            statuses[user.username] = response.status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(lawyer,)) for lawyer in lawyers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == {"lena": 200, "luis": 200}
    proposal.refresh_from_db()
    assert Approval.objects.filter(version=proposal, step=0).count() == 2
    if steps == 1:
        assert proposal.status == VersionStatus.APPROVED
        assert AuditEvent.objects.filter(action="version.approve").count() == 1
        assert live(page).body == "new\n"
    else:
        assert (proposal.status, proposal.review.step) == (VersionStatus.IN_REVIEW, 1)
        advanced = AuditEvent.objects.filter(action="version.approval", data__advanced=True)
        assert advanced.count() == 1
        assert live(page).body == "old\n"


@pytest.mark.django_db(transaction=True)
def test_a_decider_reads_the_proposal_a_colleague_published_between_two_reads(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
) -> None:
    """CI found it as a 404 to the second of two Legal members approving at once: the one who
    approved first reads the proposal back (the approve call's answer) while the other's
    approval publishes it. Their first read sees it in review, which only a decider may read;
    the second sees it approved. Either state is theirs to read: never a 404."""
    lena, luis = (make_user(name, "Legal") for name in ("lena", "luis"))
    page = make_page("Race", "old\n")
    plan = [{"name": "Legal", "group": "Legal", "approvals": 2}]
    workflow = workflows.workflow_create(actor=admin_user, name="Legal", steps=plan)
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=page)
    proposal = version_propose(actor=reader, page=page, body="new\n")
    version_approve(actor=luis, version=proposal, step=1)

    def lena_publishes() -> None:
        try:
            version_approve(actor=lena, version=proposal, step=1)
        finally:
            connection.close()

    reads: list[str] = []

    def between_the_reads(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        if not reads and sql.lstrip().startswith("SELECT") and '"wiki_version"' in sql:
            reads.append(sql)
            thread = threading.Thread(target=lena_publishes)
            thread.start()
            thread.join(timeout=60)
        return result

    shown = page_for_person(luis, page.public_id)
    with connection.execute_wrapper(between_the_reads):
        version = version_of(shown, proposal.number, reader=luis)
    assert reads, "the read never reached the versions table"
    assert (version.number, version.status) == (proposal.number, VersionStatus.APPROVED)
    assert live(page).body == "new\n"
