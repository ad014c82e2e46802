"""Two reviewers deciding the same proposal at the same moment leave exactly one decision."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from core.models import AuditEvent
from reviews import services
from tests.conftest import live
from wiki.models import Page, VersionStatus


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
    proposal = services.version_propose(actor=reader, page=page, body="new\n")
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
