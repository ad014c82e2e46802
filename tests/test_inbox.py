"""The in-app inbox: what waits on me, what was decided about mine, requested changes; the
unread count in the top bar; read when opened; each person's channel per kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from inbox.models import ChannelChoice, InboxItem, Kind
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.propose import version_propose
from reviews.models import NotificationKind, NotificationPreference, ReviewerSettings
from tests.fixtures_web import rest_client
from wiki.models import Page

pytestmark = pytest.mark.usefixtures("eager_tasks")


@pytest.fixture
def page(make_page: Callable[..., Page]) -> Page:
    return make_page("Refund policy", "Refunds take five days.\n")


def propose(reader: User, page: Page, capture: Any) -> Any:
    with capture(execute=True):
        return version_propose(
            actor=reader, page=page, body="Refunds take seven days.\n", change_summary="Slower"
        )


def unread_in_top_bar(client: Client) -> str:
    html = client.get("/").content.decode()
    start = html.index('href="/inbox/"')
    return html[start : html.index("</a>", start)]


def items_listed(client: Client) -> str:
    """The inbox's list of items (not the channel settings below it)."""
    return client.get("/inbox/").content.decode().split('id="channels-title"')[0]


def test_it_shows_what_waits_on_a_reviewer_and_marks_it_read_when_opened(
    client_as: Callable[[User], Client],
    reviewer: User,
    reader: User,
    page: Page,
    mailoutbox: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    version = propose(reader, page, django_capture_on_commit_callbacks)
    rita = client_as(reviewer)
    assert 'aria-label="1 unread"' in unread_in_top_bar(rita)
    inbox = rita.get("/inbox/").content.decode()
    assert "Waiting on you" in inbox and "Refund policy" in inbox and "Slower" in inbox
    # By default news comes both ways.
    assert [mail.to for mail in mailoutbox] == [["rita@example.com"]]

    (item,) = InboxItem.objects.filter(recipient=reviewer)
    # Only the recipient opens it; looking at the list changes nothing.
    assert client_as(reader).post(f"/inbox/{item.pk}/open/").status_code == 404
    assert rita.get(f"/inbox/{item.pk}/open/").status_code == 405
    item.refresh_from_db()
    assert item.read_at is None

    opened = rita.post(f"/inbox/{item.pk}/open/")
    assert opened["Location"] == f"/reviews/pages/{page.public_id}/v{version.number}/"
    item.refresh_from_db()
    assert item.read_at is not None
    assert "unread" not in unread_in_top_bar(rita)


def menu_button(client: Client) -> str:
    html = client.get("/").content.decode()
    start = html.index('class="menu-toggle"')
    return html[start : html.index("</button>", start)]


def test_it_counts_reviews_and_unread_inbox_items_on_the_phones_menu_button(
    client_as: Callable[[User], Client],
    reviewer: User,
    reader: User,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    version = propose(reader, page, django_capture_on_commit_callbacks)
    InboxItem.objects.create(recipient=reviewer, kind=Kind.DECISION, version=version)
    # For rita: reed's proposal in the queue, and two unread items in her inbox (the request
    # to review it and another), counted together and said in words.
    shown = menu_button(client_as(reviewer))
    assert '<span class="count" aria-hidden="true">3</span>' in shown
    assert ": 1 waiting for review, 2 unread in the inbox" in shown
    with django_capture_on_commit_callbacks(execute=True):
        version_request_changes(actor=reviewer, version=version, comment="Why?")
    # Someone who reviews nothing: the inbox alone.
    shown = menu_button(client_as(reader))
    assert '<span class="count" aria-hidden="true">1</span>' in shown
    assert ": 1 unread in the inbox" in shown


def test_it_tells_the_author_what_was_decided_and_what_changes_are_asked(
    client_as: Callable[[User], Client],
    reviewer: User,
    reader: User,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    version = propose(reader, page, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        version_request_changes(actor=reviewer, version=version, comment="Say why.")
    inbox = client_as(reader).get("/inbox/").content.decode()
    assert "Changes requested" in inbox

    other = version_propose(
        actor=reader, page=page, body="Refunds take six days.\n", change_summary="Six"
    )
    with django_capture_on_commit_callbacks(execute=True):
        version_reject(actor=reviewer, version=other, comment="No.")
    kinds = list(InboxItem.objects.filter(recipient=reader).values_list("kind", flat=True))
    assert sorted(kinds) == ["changes_requested", "decision"]
    assert "Decided about yours" in client_as(reader).get("/inbox/").content.decode()


def test_it_shows_the_reviewers_words_with_a_request_for_changes_and_a_rejection(
    client_as: Callable[[User], Client],
    reviewer: User,
    reader: User,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    version = propose(reader, page, django_capture_on_commit_callbacks)
    asked = "Say why seven days <b>and</b> cite the contract."
    with django_capture_on_commit_callbacks(execute=True):
        version_request_changes(actor=reviewer, version=version, comment=asked)
    other = version_propose(
        actor=reader, page=page, body="Refunds take six days.\n", change_summary="Six"
    )
    with django_capture_on_commit_callbacks(execute=True):
        version_reject(actor=reviewer, version=other, comment="Six is too few.")

    inbox = client_as(reader).get("/inbox/").content.decode()
    assert "rita: “Say why seven days &lt;b&gt;and&lt;/b&gt; cite the contract.”" in inbox
    assert "rita: “Six is too few.”" in inbox


def test_it_follows_each_persons_channel_per_kind(
    client_as: Callable[[User], Client],
    reviewer: User,
    second_reviewer: User,
    make_user: Callable[..., User],
    reader: User,
    page: Page,
    mailoutbox: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    quiet = make_user("quinn", "Reviewers")
    ReviewerSettings.objects.create(user=quiet, notifications=NotificationPreference.OFF)
    client_as(reviewer).post("/inbox/channels/", {"channel-review_requested": "inbox"})
    client_as(second_reviewer).post("/inbox/channels/", {"channel-review_requested": "email"})
    assert ChannelChoice.objects.get(user=reviewer).channel == "inbox"

    propose(reader, page, django_capture_on_commit_callbacks)

    assert sorted(mail.to[0] for mail in mailoutbox) == ["rob@example.com"]
    in_inbox = InboxItem.objects.values_list("recipient__username", flat=True)
    # quinn turned review emails off: the inbox still shows what waits on them.
    assert sorted(in_inbox) == ["quinn", "rita"]


def test_it_refuses_an_unknown_channel(client_as: Callable[[User], Client], reader: User) -> None:
    answer = client_as(reader).post("/inbox/channels/", {"channel-decision": "pigeon"}, follow=True)
    assert "choose one of: both, inbox, email" in answer.content.decode()
    assert not ChannelChoice.objects.exists()


def test_it_marks_everything_read(
    client_as: Callable[[User], Client],
    reviewer: User,
    reader: User,
    page: Page,
    make_page: Callable[..., Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    propose(reader, page, django_capture_on_commit_callbacks)
    propose(reader, make_page("Returns"), django_capture_on_commit_callbacks)
    rita = client_as(reviewer)
    assert 'aria-label="2 unread"' in unread_in_top_bar(rita)
    rita.post("/inbox/read-all/")
    assert not InboxItem.objects.filter(read_at__isnull=True).exists()


def test_it_knows_the_same_kinds_of_news_as_the_outbox() -> None:
    # Two lists on purpose: the inbox says "Waiting on you" where the email says "Review
    # requested". Only the labels may differ; outbox.py hands its kinds to the inbox as they are.
    assert Kind.values == NotificationKind.values


def test_it_takes_a_withdrawn_or_decided_proposal_out_of_waiting(
    client_as: Callable[[User], Client],
    reviewer: User,
    second_reviewer: User,
    reader: User,
    page: Page,
    make_page: Callable[..., Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Issue 46: an inbox item whose proposal is withdrawn or decided leaves "waiting", and
    is no longer counted unread."""
    version = propose(reader, page, django_capture_on_commit_callbacks)
    rita = client_as(reviewer)
    assert 'aria-label="1 unread"' in unread_in_top_bar(rita)
    # The author withdraws it over REST.
    withdrawn = rest_client(reader).post(
        f"/api/v1/pages/{page.public_id}/versions/{version.number}/withdraw"
    )
    assert withdrawn.status_code == 200, withdrawn.content
    assert "unread" not in unread_in_top_bar(rita)
    inbox = items_listed(rita)
    assert "Waiting on you" not in inbox and "No longer waiting" in inbox
    assert "now withdrawn" in inbox
    assert 'class="inbox-new"' not in inbox

    # Another proposal, decided by the other reviewer: it leaves rita's "waiting" too.
    other = make_page("Returns", "Thirty days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        decided = version_propose(actor=reader, page=other, body="Sixty days.\n")
    assert 'aria-label="1 unread"' in unread_in_top_bar(rita)
    with django_capture_on_commit_callbacks(execute=True):
        version_approve(actor=second_reviewer, version=decided)
    assert "unread" not in unread_in_top_bar(rita)
    assert "Waiting on you" not in items_listed(rita)
