"""Deciding many proposals in one action (reviews.batch): all or none, each checked as a
single decision is, only what the reviewer was shown, taken back whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import Group, User
from django.test import Client

from core.errors import Conflict
from core.models import AuditEvent
from inbox.models import InboxItem, Kind
from reviews import batch as batches
from reviews import workflows
from reviews.actions.propose import version_propose
from reviews.models import (
    Approval,
    DecisionBatch,
    GroupWebhook,
    Notification,
    NotificationKind,
    NotificationPreference,
    NotificationStatus,
    ReviewerSettings,
    ReviewStatus,
    WebhookPost,
)
from tests.conftest import live, open_queue, open_review_page
from tests.fixtures_mail import SMTPServer
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.django_db


def _queue_seen_by(user: User) -> Client:
    """The reviewer opens the queue: every row whose whole change fits is shown to them."""
    client = Client()
    client.force_login(user)
    open_queue(client)
    return client


def _proposals(
    make_page: Callable[..., Page], author: User, count: int, *, parent: Page | None = None
) -> list[Version]:
    proposals = []
    for index in range(count):
        page = make_page(f"Page {index}", f"Line {index}.\n", parent=parent)
        proposals.append(version_propose(actor=author, page=page, body=f"Line {index}, fixed.\n"))
    return proposals


def _items(versions: list[Version]) -> list[batches.BatchItem]:
    return [batches.BatchItem(version) for version in versions]


def _untouched(versions: list[Version]) -> None:
    """Nothing of a refused batch was recorded: no decision, approval, batch or email."""
    for version in versions:
        version.refresh_from_db()
        assert version.status == VersionStatus.IN_REVIEW
        assert version.review.status == ReviewStatus.OPEN
    assert not Approval.objects.filter(version__in=versions).exists()
    assert not DecisionBatch.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="version.appro").exists()
    assert not Notification.objects.filter(kind=NotificationKind.DECISION).exists()
    assert not InboxItem.objects.filter(kind=Kind.DECISION).exists()


def test_it_approves_every_proposal_shown_in_the_queue(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 3)
    _queue_seen_by(reviewer)

    batch = batches.versions_decide_batch(
        actor=reviewer, items=_items(proposals), decision="approve", comment="Typos."
    )

    for proposal in proposals:
        proposal.refresh_from_db()
        assert proposal.status == VersionStatus.APPROVED
        assert proposal.decision_comment == "Typos."
        assert live(proposal.page).pk == proposal.pk
    assert [item.published for item in batch.items.all()] == [True, True, True]
    # Each author's inbox holds the decision, once.
    assert InboxItem.objects.filter(kind=Kind.DECISION).count() == 3
    [event] = AuditEvent.objects.filter(action="versions.decide_batch")
    assert event.data["versions"] == [[p.page.public_id, p.number] for p in proposals]
    assert AuditEvent.objects.filter(action="version.approve").count() == 3


def test_it_decides_nothing_when_one_item_turned_stale_meanwhile(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 3)
    _queue_seen_by(reviewer)
    # While the reviewer ticks, an editor publishes on the second page.
    version_propose(actor=editor, page=proposals[1].page, body="Line 1.\n\nMore.\n", publish=True)

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch(actor=reviewer, items=_items(proposals), decision="approve")

    assert refused.value.detail["refused"] == [
        {
            "pageId": proposals[1].page.public_id,
            "versionNumber": proposals[1].number,
            "code": "conflict",
            "reason": batches.STALE,
        }
    ]
    assert "nothing was decided" in refused.value.message
    _untouched(proposals)


def test_it_refuses_a_change_the_reviewer_was_not_shown(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    short = _proposals(make_page, reader, 1)[0]
    long_page = make_page("Long", "".join(f"Line {n}.\n" for n in range(20)))
    # Twenty changed lines do not fit in a queue row: the queue shows only its summary.
    long = version_propose(
        actor=reader, page=long_page, body="".join(f"Row {n}.\n" for n in range(20))
    )
    client = _queue_seen_by(reviewer)

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch(
            actor=reviewer, items=_items([short, long]), decision="approve"
        )
    assert [r["reason"] for r in refused.value.detail["refused"]] == [batches.NOT_SHOWN]
    _untouched([short, long])

    # Once its review page showed it, the batch may decide it.
    open_review_page(client, f"/reviews/pages/{long_page.public_id}/v{long.number}/")
    batches.versions_decide_batch(actor=reviewer, items=_items([short, long]), decision="approve")
    long.refresh_from_db()
    assert long.status == VersionStatus.APPROVED


def test_it_refuses_a_second_proposal_on_a_page_the_batch_changed(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Shared", "One.\n\nTwo.\n")
    first = version_propose(actor=reader, page=page, body="One!\n\nTwo.\n")
    second = version_propose(actor=editor, page=page, body="One.\n\nTwo!\n")
    _queue_seen_by(reviewer)

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch(
            actor=reviewer, items=_items([first, second]), decision="approve"
        )

    assert [r["versionNumber"] for r in refused.value.detail["refused"]] == [second.number]
    _untouched([first, second])


def test_it_refuses_the_whole_batch_when_the_person_may_not_decide_one(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
    reviewer: User,
) -> None:
    make_user("lena", "Legal")
    policies = make_page("Policies", "All.\n")
    workflow = workflows.workflow_create(
        actor=admin_user, name="Legal", steps=[{"name": "Legal", "group": "Legal"}]
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=policies)
    mine = _proposals(make_page, reader, 2)
    legal = _proposals(make_page, reader, 1, parent=policies)[0]
    _queue_seen_by(reviewer)

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch(
            actor=reviewer, items=_items([*mine, legal]), decision="approve"
        )

    [item] = refused.value.detail["refused"]
    assert (item["versionNumber"], item["code"]) == (legal.number, "forbidden")
    assert "Legal" in item["reason"]
    _untouched([*mine, legal])


def test_it_refuses_an_author_deciding_their_own_in_a_batch(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    others = _proposals(make_page, reader, 1)
    own_page = make_page("Own", "Mine.\n")
    own = version_propose(actor=reviewer, page=own_page, body="Mine!\n")
    _queue_seen_by(reviewer)

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch(
            actor=reviewer, items=_items([*others, own]), decision="approve"
        )

    assert [r["code"] for r in refused.value.detail["refused"]] == ["forbidden"]
    _untouched([*others, own])


def test_it_takes_a_whole_batch_back(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
    reviewer: User,
) -> None:
    two_steps = workflows.workflow_create(
        actor=admin_user,
        name="Two looks",
        steps=[{"name": "First", "group": REVIEWERS}, {"name": "Second", "group": REVIEWERS}],
    )
    make_user("rob", REVIEWERS)
    section = make_page("Section", "S.\n")
    workflows.workflow_assign(actor=admin_user, workflow=two_steps, page=section)
    plain = _proposals(make_page, reader, 2)
    stepped = _proposals(make_page, reader, 1, parent=section)[0]
    before = {p.pk: live(p.page).pk for p in [*plain, stepped]}
    _queue_seen_by(reviewer)
    batch = batches.versions_decide_batch(
        actor=reviewer, items=_items([*plain, stepped]), decision="approve"
    )
    stepped.refresh_from_db()
    assert stepped.review.step == 1  # moved on to the second step
    assert [item.published for item in batch.items.all()] == [True, True, False]

    batches.versions_decide_batch_undo(actor=reviewer, batch=batch)

    for proposal in [*plain, stepped]:
        proposal.refresh_from_db()
        assert proposal.status == VersionStatus.IN_REVIEW
        assert proposal.review.step == 0
        assert live(proposal.page).pk == before[proposal.pk]
    assert not Approval.objects.filter(version__in=[*plain, stepped]).exists()
    # The authors were never told: their emails waited out the window and are dropped.
    assert set(
        Notification.objects.filter(kind=NotificationKind.DECISION).values_list("status", flat=True)
    ) == {NotificationStatus.SKIPPED}
    batch.refresh_from_db()
    assert batch.undone_at is not None
    assert AuditEvent.objects.filter(action="versions.decide_batch_undo").count() == 1
    with pytest.raises(Conflict, match="taken back already"):
        batches.versions_decide_batch_undo(actor=reviewer, batch=batch)
    # Each can be decided again.
    _queue_seen_by(reviewer)
    batches.versions_decide_batch(actor=reviewer, items=_items(plain), decision="approve")


@pytest.mark.usefixtures("eager_tasks")
def test_undoing_a_step_approval_tells_the_next_steps_deciders_it_no_longer_waits_on_them(
    smtp_server: SMTPServer,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    """Issue 48: after a batch approval moved a proposal to Legal's step, Legal was mailed that
    it waits on them; the batch's undo left them believing so. Whoever was mailed is told it
    no longer waits on them; a mail not sent yet (a daily digest) is dropped; the unread
    "waiting on you" goes from their inbox."""
    lena, lars = make_user("lena", "Legal"), make_user("lars", "Legal")
    ReviewerSettings.objects.create(user=lars, notifications=NotificationPreference.DAILY)
    two_steps = workflows.workflow_create(
        actor=admin_user,
        name="Then Legal",
        steps=[{"name": "First", "group": REVIEWERS}, {"name": "Legal", "group": "Legal"}],
    )
    section = make_page("Section", "S.\n")
    workflows.workflow_assign(actor=admin_user, workflow=two_steps, page=section)
    # Legal's chat is down: its post waits in the outbox for the sweep.
    settings.QUIRE_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    GroupWebhook.objects.create(
        group=Group.objects.get(name="Legal"), url="http://127.0.0.1:9/nobody-listens"
    )
    stepped = _proposals(make_page, reader, 1, parent=section)[0]
    _queue_seen_by(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        batch = batches.versions_decide_batch(
            actor=reviewer, items=_items([stepped]), decision="approve"
        )
    legal_mail = [m for m in smtp_server.messages if m["To"] == "lena@example.com"]
    assert ["Review requested" in m["Subject"] for m in legal_mail] == [True]
    asked = Notification.objects.filter(version=stepped, kind=NotificationKind.REVIEW_REQUESTED)
    assert asked.get(recipient=lars).status == NotificationStatus.PENDING  # his digest
    assert (
        InboxItem.objects.filter(recipient__in=[lena, lars], kind=Kind.REVIEW_REQUESTED).count()
        == 2
    )
    assert WebhookPost.objects.get(version=stepped).status == "pending"
    sent_before = len(smtp_server.messages)

    with django_capture_on_commit_callbacks(execute=True):
        batches.versions_decide_batch_undo(actor=reviewer, batch=batch)

    [notice] = smtp_server.wait_for(sent_before + 1)[sent_before:]
    assert notice["To"] == "lena@example.com"
    assert "no longer waits on you" in notice["Subject"]
    assert "taken back" in notice.get_payload()
    dropped = asked.get(recipient=lars)
    assert (dropped.status, dropped.last_error) == (
        NotificationStatus.SKIPPED,
        "the approval was taken back",
    )
    assert not InboxItem.objects.filter(
        recipient__in=[lena, lars], kind=Kind.REVIEW_REQUESTED
    ).exists()
    chat = WebhookPost.objects.get(version=stepped)
    assert (chat.status, chat.last_error) == ("skipped", "the approval was taken back")
    # Reviewers, on whose step it waits again, are not told anything new.
    assert all(m["To"] == "lena@example.com" for m in smtp_server.messages[sent_before:])


def test_it_takes_back_nothing_when_one_page_moved_on(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 2)
    _queue_seen_by(reviewer)
    batch = batches.versions_decide_batch(
        actor=reviewer, items=_items(proposals), decision="approve"
    )
    version_propose(actor=editor, page=proposals[0].page, body="Newer.\n", publish=True)

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch_undo(actor=reviewer, batch=batch)

    assert [r["versionNumber"] for r in refused.value.detail["refused"]] == [proposals[0].number]
    proposals[1].refresh_from_db()
    assert proposals[1].status == VersionStatus.APPROVED  # not taken back either


def test_it_refuses_another_reviewer_taking_a_batch_back(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 1)
    _queue_seen_by(reviewer)
    batch = batches.versions_decide_batch(
        actor=reviewer, items=_items(proposals), decision="approve"
    )
    with pytest.raises(Conflict, match="only the reviewer who decided"):
        batches.versions_decide_batch_undo(actor=second_reviewer, batch=batch)


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_each_author_exactly_once_after_commit(
    smtp_server: SMTPServer,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    authors = [make_user("ann"), make_user("ben")]
    proposals = [_proposals(make_page, author, 1)[0] for author in authors]
    stale = _proposals(make_page, make_user("cid"), 1)[0]
    smtp_server.wait_for(0)
    _queue_seen_by(reviewer)
    sent_before = len(smtp_server.messages)

    # A refused batch sends nothing, then or later.
    version_propose(
        actor=make_user("dee", "Editors"), page=stale.page, body="Other.\n", publish=True
    )
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(batches.BatchRefused),
    ):
        batches.versions_decide_batch(
            actor=reviewer, items=_items([*proposals, stale]), decision="reject", comment="No."
        )
    assert callbacks == []
    assert not Notification.objects.filter(kind=NotificationKind.DECISION).exists()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        batches.versions_decide_batch(
            actor=reviewer, items=_items(proposals), decision="reject", comment="Not now."
        )
    assert len(smtp_server.messages) == sent_before  # nothing before the commit
    for callback in callbacks:
        callback()
    messages = smtp_server.wait_for(sent_before + 2)[sent_before:]
    assert sorted(message["To"] for message in messages) == ["ann@example.com", "ben@example.com"]
    assert all("was rejected" in message["Subject"] for message in messages)
    assert (
        Notification.objects.filter(
            kind=NotificationKind.DECISION, status=NotificationStatus.SENT
        ).count()
        == 2
    )


# --- the doors ---------------------------------------------------------------------------------


def _api(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_decides_a_list_over_rest_and_takes_it_back(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 2)
    client = _api(reviewer)
    items = [{"pageId": p.page.public_id, "versionNumber": p.number, "step": 1} for p in proposals]
    body = {"decision": "approve", "comment": "Both fine.", "items": items}

    # Not shown yet (nothing was read): refused, with each item and why.
    refused = client.post("/api/v1/reviews/decide", body, content_type="application/json")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "conflict"
    assert [r["reason"] for r in error["detail"]["refused"]] == [batches.NOT_SHOWN] * 2
    _untouched(proposals)

    # Reading each version over REST shows its diff against live, and its `shown` says so.
    for p, item in zip(proposals, items, strict=True):
        read = client.get(f"/api/v1/pages/{p.page.public_id}/versions/{p.number}/")
        assert read.status_code == 200
        item["shown"] = read.json()["shown"]
    answer = client.post("/api/v1/reviews/decide", body, content_type="application/json")
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["decision"] == "approve" and data["undone"] is False
    assert data["undoUntil"] is not None
    assert data["items"] == [
        {
            "pageId": p.page.public_id,
            "versionNumber": p.number,
            "step": 1,
            "status": "approved",
            "published": True,
        }
        for p in proposals
    ]

    undone = client.post(f"/api/v1/reviews/batches/{data['batch']}/undo")
    assert undone.status_code == 200, undone.content
    assert undone.json()["undone"] is True
    assert [i["status"] for i in undone.json()["items"]] == ["in_review", "in_review"]


def test_it_refuses_bad_lists_over_rest(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    [proposal] = _proposals(make_page, reader, 1)
    client = _api(reviewer)
    url = "/api/v1/reviews/decide"
    empty = client.post(url, {"decision": "approve", "items": []}, content_type="application/json")
    assert empty.status_code == 400
    item = {"pageId": proposal.page.public_id, "versionNumber": proposal.number}
    twice = client.post(
        url, {"decision": "approve", "items": [item, item]}, content_type="application/json"
    )
    assert (twice.status_code, "listed twice" in twice.json()["error"]["message"]) == (400, True)
    no_reason = client.post(
        url, {"decision": "reject", "items": [item]}, content_type="application/json"
    )
    assert no_reason.status_code == 400
    missing = client.post(
        url,
        {"decision": "approve", "items": [{"pageId": "pg_aaaaaaaa", "versionNumber": 1}]},
        content_type="application/json",
    )
    assert missing.status_code == 404 and "items[0]" in missing.json()["error"]["message"]
    # Another person's batch is not found.
    _queue_seen_by(reviewer)
    batch = batches.versions_decide_batch(
        actor=reviewer, items=_items([proposal]), decision="approve"
    )
    other = _api(second_reviewer).post(f"/api/v1/reviews/batches/{batch.pk}/undo")
    assert other.status_code == 404


def test_it_documents_the_batch_in_the_openapi_schema(admin_user: User) -> None:

    schema = yaml.safe_load(_api(admin_user).get("/api/schema/").content)
    decide = schema["paths"]["/api/v1/reviews/decide"]["post"]
    assert {"200", "400", "403", "404", "409"} <= set(decide["responses"])
    assert "BatchInput" in str(decide["requestBody"])
    assert "/api/v1/reviews/batches/{batch_id}/undo" in schema["paths"]


def test_it_decides_the_ticked_rows_from_the_queue(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 3)
    client = _queue_seen_by(reviewer)
    page = client.get("/reviews/").content.decode()
    assert page.count('class="rv-pick"') == 3 and page.count("data-low-risk") == 3
    ticked = [f"{p.page.public_id}:{p.number}:1" for p in proposals[:2]]

    answer = client.post(
        "/reviews/decide/",
        {"item": ticked, "decision": "approve", "comment": "Fine.", "return_to": "/reviews/"},
        follow=True,
    )

    assert "2 proposals approved in one action" in answer.content.decode()
    assert "Undo all" in answer.content.decode()
    statuses = [Version.objects.get(pk=p.pk).status for p in proposals]
    assert statuses == [VersionStatus.APPROVED, VersionStatus.APPROVED, VersionStatus.IN_REVIEW]
    batch = DecisionBatch.objects.get()
    undone = client.post(f"/reviews/batches/{batch.pk}/undo/", follow=True)
    assert "The batch is taken back: 2 proposals" in undone.content.decode()
    assert all(Version.objects.get(pk=p.pk).status == VersionStatus.IN_REVIEW for p in proposals)


def test_it_lists_what_was_refused_in_the_queue(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    proposals = _proposals(make_page, reader, 2)
    client = _queue_seen_by(reviewer)
    version_propose(actor=editor, page=proposals[0].page, body="Other.\n", publish=True)

    answer = client.post(
        "/reviews/decide/",
        {"item": [f"{p.page.public_id}:{p.number}:1" for p in proposals], "decision": "approve"},
        follow=True,
    )

    text = answer.content.decode()
    assert "Nothing was decided: 1 of the proposals could not be." in text
    assert "Page 0 v2" in text and "stale" in text
    _untouched(proposals)
