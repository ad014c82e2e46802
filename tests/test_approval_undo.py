"""A short undo after an approval: in time, the proposal waits again and the page shows what it
showed before; later, or once something newer went live, a revert is offered instead."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from core.errors import Conflict
from core.models import AuditEvent
from reviews import outbox
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from reviews.actions.rules import approval_undo_seconds
from reviews.actions.undo import version_approve_undo
from reviews.models import (
    Approval,
    Notification,
    NotificationKind,
    NotificationPreference,
    NotificationStatus,
    ReviewerSettings,
    ReviewStatus,
)
from tests.conftest import live
from tests.fixtures_mail import SMTPServer
from wiki.models import Page, Version, VersionStatus

pytestmark = pytest.mark.django_db


def test_it_takes_back_an_approval_in_time(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Thirty days.\n")
    before = live(page)
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    version_approve(actor=reviewer, version=proposal)
    assert live(page).pk == proposal.pk

    version_approve_undo(actor=reviewer, version=proposal)

    assert live(page).pk == before.pk
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by, proposal.body) == (
        VersionStatus.IN_REVIEW,
        None,
        "Sixty days.\n",
    )
    assert proposal.review.status == ReviewStatus.OPEN
    assert not Approval.objects.filter(version=proposal).exists()
    assert AuditEvent.objects.filter(action="version.approve_undo").count() == 1
    # It can be decided again.
    version_approve(actor=reviewer, version=proposal)
    assert live(page).pk == proposal.pk


def test_it_removes_the_new_number_a_merged_approval_made(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    stale = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    version_approve(actor=reviewer, version=stale)
    assert live(page).number == 4

    version_approve_undo(actor=reviewer, version=stale)

    assert live(page).number == 3
    page.refresh_from_db()
    assert page.last_version_number == 3
    assert list(page.versions.values_list("number", flat=True)) == [1, 2, 3]
    stale.refresh_from_db()
    assert (stale.status, stale.merged_into_id, stale.merged) == ("in_review", None, False)
    assert stale.body == "ALPHA\n\nbeta\n\ngamma\n"
    # Approving it again merges and publishes it as v4 again: numbers stay without gaps.
    version_approve(actor=reviewer, version=stale)
    assert live(page).number == 4


def test_it_restores_an_addition_to_its_blocks(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("FAQ", "Q1?\n")
    append = version_propose(actor=reader, page=page, kind="append", body="Q2?")
    version_approve(actor=reviewer, version=append)
    version_approve_undo(actor=reviewer, version=append)
    append.refresh_from_db()
    assert (append.body, append.proposed_body, live(page).body) == ("", "Q2?", "Q1?\n")


def test_it_offers_a_revert_once_it_is_too_late(
    make_page: Callable[..., Page],
    reader: User,
    editor: User,
    reviewer: User,
    second_reviewer: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = make_page("Refunds", "Thirty days.\n")
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    version_approve(actor=reviewer, version=proposal)
    with pytest.raises(Conflict, match="only the reviewer who approved"):
        version_approve_undo(actor=second_reviewer, version=proposal)
    later = timezone.now() + timedelta(seconds=approval_undo_seconds() + 1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    with pytest.raises(Conflict, match="revert the page from its history instead"):
        version_approve_undo(actor=reviewer, version=proposal)
    monkeypatch.undo()
    version_propose(actor=editor, page=page, body="Ninety days.\n", publish=True)
    with pytest.raises(Conflict, match="a newer version went live"):
        version_approve_undo(actor=reviewer, version=proposal)
    # An editor's own publish never waited for review: nothing to take back.
    published = live(page)
    with pytest.raises(Conflict, match="only the reviewer who approved"):
        version_approve_undo(actor=editor, version=published)
    assert Version.objects.get(pk=proposal.pk).status == VersionStatus.APPROVED


def test_it_offers_the_undo_after_approving_in_the_browser(
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    client_as: Callable[[User], Client],
) -> None:
    page = make_page("Refunds", "Thirty days.\n")
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    client = client_as(reviewer)
    url = f"/reviews/pages/{page.public_id}/v{proposal.number}/"
    done = client.post(url, {"action": "approve", "expected_live_number": "1"}, follow=True)
    html = done.content.decode()
    assert f'<a href="{url}#undo">Undo</a>' in html
    shown = client.get(url).content.decode()
    assert 'id="undo"' in shown and "Undo the approval" in shown
    undone = client.post(url, {"action": "undo"}, follow=True).content.decode()
    assert "is taken back: it waits for review again" in undone
    assert live(page).number == 1
    assert 'id="undo"' not in client.get(url).content.decode()


# --- the decision email waits out the undo window ---------------------------------------


def _after_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    later = timezone.now() + timedelta(seconds=approval_undo_seconds() + 1)
    monkeypatch.setattr(timezone, "now", lambda: later)


def _approved_proposal(
    make_page: Callable[..., Page], reader: User, reviewer: User, settings: Any, commit: Any
) -> tuple[Page, Version]:
    """A reader's proposal on "Refunds", approved by a reviewer who gets no review email; its
    undo window is 120 s."""
    settings.QUIRE_APPROVAL_UNDO_SECONDS = 120
    ReviewerSettings.objects.create(user=reviewer, notifications=NotificationPreference.OFF)
    page = make_page("Refunds", "Thirty days.\n")
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    with commit(execute=True):
        version_approve(actor=reviewer, version=proposal)
    return page, proposal


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_the_approval_once_the_undo_window_is_over(
    smtp_server: SMTPServer,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    page, proposal = _approved_proposal(
        make_page, reader, reviewer, settings, django_capture_on_commit_callbacks
    )
    # Published at once: readers and agents see it...
    assert live(page).pk == proposal.pk
    # ...but the author hears of it only when the approval can no longer be taken back.
    outbox.retry_pending()
    assert smtp_server.messages == []
    [row] = Notification.objects.filter(kind=NotificationKind.DECISION)
    assert row.status == NotificationStatus.PENDING
    _after_the_window(monkeypatch)
    outbox.retry_pending()
    [message] = smtp_server.wait_for(1)
    assert message["To"] == "reed@example.com" and "was approved" in message["Subject"]


@pytest.mark.usefixtures("eager_tasks")
def test_it_drops_the_approval_email_when_the_approval_is_undone(
    smtp_server: SMTPServer,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _, proposal = _approved_proposal(
        make_page, reader, reviewer, settings, django_capture_on_commit_callbacks
    )
    with django_capture_on_commit_callbacks(execute=True):
        version_approve_undo(actor=reviewer, version=proposal)
    _after_the_window(monkeypatch)
    outbox.retry_pending()
    assert smtp_server.messages == []
    [row] = Notification.objects.filter(kind=NotificationKind.DECISION)
    assert row.status == NotificationStatus.SKIPPED
    # A rejection is final: its email goes at once.
    with django_capture_on_commit_callbacks(execute=True):
        version_reject(actor=reviewer, version=proposal, comment="Not sixty.")
    [message] = smtp_server.wait_for(1)
    assert "was rejected" in message["Subject"]
