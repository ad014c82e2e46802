"""Review requests to named people, shown in the queue and on the review page; reminders when
a proposal waits past its due time: its deciders once, then the admins once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from core.errors import Conflict, Forbidden
from inbox.models import InboxItem
from reviews import asking
from reviews.actions.decide import version_reject, version_request_changes
from reviews.actions.propose import version_propose
from reviews.models import Review, ReviewAsk, ReviewRevision
from wiki.models import Page, Version

pytestmark = pytest.mark.usefixtures("eager_tasks")


@pytest.fixture
def proposal(
    make_page: Callable[..., Page], reader: User, django_capture_on_commit_callbacks: Any
) -> Version:
    page = make_page("Refund policy", "Refunds take five days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        return version_propose(
            actor=reader, page=page, body="Refunds take seven days.\n", change_summary="Slower"
        )


def test_it_lets_the_author_ask_a_reviewer_by_name(
    client_as: Callable[[User], Client],
    proposal: Version,
    reader: User,
    reviewer: User,
    second_reviewer: User,
    mailoutbox: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    mailoutbox.clear()
    author = client_as(reader)
    url = f"/reviews/pages/{proposal.page.public_id}/v{proposal.number}/"
    page = author.get(url).content.decode()
    assert "Ask someone who decides this step" in page and '<option value="rob">' in page
    with django_capture_on_commit_callbacks(execute=True):
        asked = author.post(url + "ask/", {"person": "rob"})
    assert asked["Location"] == url + "#asked"
    assert ReviewAsk.objects.get().person == second_reviewer
    (mail,) = mailoutbox
    assert mail.to == ["rob@example.com"]
    assert mail.subject == "[Quire] reed asks you to review Refund policy (v2)"
    assert "reed asks you by name" in mail.body
    assert InboxItem.objects.filter(recipient=second_reviewer, kind="review_asked").exists()

    rob = client_as(second_reviewer)
    assert "Asked: <strong>you</strong>" in rob.get("/reviews/").content.decode()
    assert "Asked: rob" in client_as(reviewer).get("/reviews/").content.decode()
    shown = rob.get(url).content.decode()
    assert "Asked to review" in shown and "asked by reed" in shown
    assert "Asked of you by name" in rob.get("/inbox/").content.decode()


def test_it_refuses_to_ask_someone_who_cannot_decide_or_twice(
    proposal: Version, reader: User, reviewer: User, editor: User, outsider: User
) -> None:
    with pytest.raises(Conflict, match="edna cannot decide its current step"):
        asking.review_ask(actor=reader, version=proposal, person=editor)
    with pytest.raises(Forbidden):
        asking.review_ask(actor=outsider, version=proposal, person=reviewer)
    asking.review_ask(actor=reader, version=proposal, person=reviewer)
    with pytest.raises(Conflict, match="already asked"):
        asking.review_ask(actor=reader, version=proposal, person=reviewer)
    version_reject(actor=reviewer, version=proposal, comment="No.")
    with pytest.raises(Conflict, match="not waiting for review"):
        asking.review_ask(actor=reader, version=proposal, person=editor)


def test_it_reminds_the_deciders_once_then_the_admins_once(
    proposal: Version,
    reviewer: User,
    admin_user: User,
    mailoutbox: list[Any],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.QUIRE_REVIEW_DUE_HOURS = 48
    settings.QUIRE_REVIEW_ESCALATE_HOURS = 24
    mailoutbox.clear()
    start = timezone.now()

    def remind(hours: float) -> dict[str, int]:
        with django_capture_on_commit_callbacks(execute=True):
            return asking.reviews_remind(now=start + timedelta(hours=hours))

    assert remind(47) == {"deciders": 0, "admins": 0} and not mailoutbox
    assert remind(49) == {"deciders": 1, "admins": 0}
    reminded = sorted(mail.to[0] for mail in mailoutbox)
    # The default step's deciders: Reviewers, and superusers.
    assert reminded == ["ada@example.com", "rita@example.com"]
    assert mailoutbox[0].subject == "[Quire] Reminder: Refund policy (v2) still waits"
    assert InboxItem.objects.filter(recipient=reviewer, kind="review_reminder").count() == 1
    assert remind(60) == {"deciders": 0, "admins": 0}
    assert remind(73) == {"deciders": 0, "admins": 1}
    assert mailoutbox[-1].to == ["ada@example.com"]
    assert remind(200) == {"deciders": 0, "admins": 0}
    assert InboxItem.objects.filter(kind="review_reminder").count() == 3


def test_it_counts_the_due_time_from_the_last_move(
    proposal: Version, reader: User, reviewer: User, settings: Any
) -> None:
    settings.QUIRE_REVIEW_DUE_HOURS = 1
    version_request_changes(actor=reviewer, version=proposal, comment="Say why.")
    revised = version_propose(
        actor=reader, page=proposal.page, body="Refunds take six days.\n", change_summary="Why"
    )
    review = Review.objects.get(version=revised)
    assert review.revision == 2
    # The proposal was first made five hours ago; its revision (the last move) is new.
    first_move = timezone.now() - timedelta(hours=5)
    Review.objects.filter(pk=review.pk).update(started_at=first_move)
    ReviewRevision.objects.filter(review=review, number=1).update(created_at=first_move)
    last_move = ReviewRevision.objects.get(review=review, number=2).created_at

    assert asking.reviews_remind(now=last_move + timedelta(minutes=50)) == {
        "deciders": 0,
        "admins": 0,
    }
    assert asking.reviews_remind(now=last_move + timedelta(minutes=70)) == {
        "deciders": 1,
        "admins": 0,
    }


def test_it_reminds_nobody_while_the_proposal_waits_on_its_author(
    proposal: Version, reviewer: User, settings: Any
) -> None:
    settings.QUIRE_REVIEW_DUE_HOURS = 1
    later = timezone.now() + timedelta(hours=5)
    version_request_changes(actor=reviewer, version=proposal, comment="Say why.")
    # Waiting on its author now, not on a decider: nobody is reminded.
    assert asking.reviews_remind(now=later) == {"deciders": 0, "admins": 0}


def test_it_reminds_from_the_command_and_not_at_all_when_turned_off(
    proposal: Version, settings: Any
) -> None:
    out = StringIO()
    call_command("remind_reviews", stdout=out)
    assert out.getvalue().strip() == "reminded deciders about 0 proposal(s), admins about 0"
    settings.QUIRE_REVIEW_DUE_HOURS = 0
    assert asking.reviews_remind(now=timezone.now() + timedelta(days=30)) == {}
