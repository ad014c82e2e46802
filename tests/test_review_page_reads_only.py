"""The review page's GET writes nothing (docs/reviewing.md: "a GET never writes"); what the
page showed travels in its forms, and a decision on a diff that changed since is refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reviews import workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.models import DiffShown, ReviewVisit
from tests.conftest import live, open_queue, open_review_page
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.django_db

WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.I)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _writes(client: Client, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return [query["sql"] for query in queries.captured_queries if WRITES.match(query["sql"])]


def _shown(html: str) -> str:
    [token] = set(re.findall(r'name="shown" value="([0-9a-f]+)"', html))
    return token


def test_a_get_of_the_review_page_writes_nothing(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    client = _client(reviewer)

    # The first look, and a look again (a visit to move on before): no INSERT, no UPDATE.
    assert _writes(client, _url(proposal)) == []
    open_review_page(client, _url(proposal))
    assert _writes(client, _url(proposal)) == []
    # The author's own look, and the page of a decided proposal with its undo.
    assert _writes(_client(reader), _url(proposal)) == []
    version_approve(actor=reviewer, version=proposal)
    assert _writes(client, _url(proposal)) == []


def test_the_page_records_what_it_showed_only_when_it_says_it_was_shown(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    client = _client(reviewer)
    html = client.get(_url(proposal)).content.decode()
    assert not ReviewVisit.objects.exists() and not DiffShown.objects.exists()

    # A digest the page did not show records presence, never "shown".
    seen = f"{_url(proposal)}seen/"
    assert client.post(seen, {"shown": "0" * 64}).status_code == 204
    assert ReviewVisit.objects.filter(user=reviewer).count() == 1
    assert not DiffShown.objects.exists()
    assert client.post(seen, {"shown": _shown(html)}).status_code == 204
    assert DiffShown.objects.filter(user=reviewer, version=proposal, where="page").count() == 1
    # Its digest is keyed to the person: another reviewer cannot send it as theirs.
    assert _client(reader).post(seen, {"shown": _shown(html)}).status_code == 204
    assert not DiffShown.objects.filter(user=reader).exists()


def _edited_meanwhile(
    make_page: Callable[..., Page], admin_user: User, reader: User, reviewer: User, client: Client
) -> tuple[Version, str]:
    """A proposal waiting on two approvals; the client's reviewer opens its page, then the
    first reviewer edits it and approves it (1 of 2). Returns it and the page as opened."""
    page = make_page("Refunds", "Refunds take five days.\n\nKeep the receipt.\n\nCall us.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Two eyes",
        steps=[{"name": "Review", "group": REVIEWERS, "approvals": 2}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=page)
    proposal = version_propose(
        actor=reader, page=page, body="Refunds take seven days.\n\nKeep the receipt.\n\nMail us.\n"
    )
    opened = client.get(_url(proposal)).content.decode()
    version_approve(
        actor=reviewer,
        version=proposal,
        edited_body="Refunds take thirty days.\n\nKeep the receipt.\n\nMail us.\n",
    )
    return proposal, opened


def test_it_refuses_a_decision_on_a_diff_that_changed_since_the_page_was_opened(
    make_page: Callable[..., Page],
    admin_user: User,
    reader: User,
    reviewer: User,
    second_reviewer: User,
) -> None:
    client = _client(second_reviewer)
    proposal, opened = _edited_meanwhile(make_page, admin_user, reader, reviewer, client)
    page = proposal.page

    # The second approval would publish a text its reviewer was never shown: refused.
    response = client.post(
        f"{_url(proposal)}approve/",
        {"shown": _shown(opened), "expected_live_number": live(page).number, "step": 1},
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "The proposal changed since you opened it: review the new diff" in html
    assert "thirty" in html  # the page shows the diff as it is now
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert live(page).body.startswith("Refunds take five days.")
    assert not DiffShown.objects.filter(user=second_reviewer).exists()

    # Approved from the page showing the new diff, it goes live; what it showed is recorded.
    response = client.post(
        f"{_url(proposal)}approve/",
        {"shown": _shown(html), "expected_live_number": live(page).number, "step": 1},
    )
    assert response.status_code == 302
    assert live(page).body == "Refunds take thirty days.\n\nKeep the receipt.\n\nMail us.\n"
    assert DiffShown.objects.filter(user=second_reviewer, version=proposal).count() == 1


def test_it_refuses_a_part_approval_on_a_diff_that_changed_since(
    make_page: Callable[..., Page],
    admin_user: User,
    reader: User,
    reviewer: User,
    second_reviewer: User,
) -> None:
    client = _client(second_reviewer)
    proposal, opened = _edited_meanwhile(make_page, admin_user, reader, reviewer, client)

    response = client.post(
        f"{_url(proposal)}partial/",
        {
            "shown": _shown(opened),
            "expected_live_number": live(proposal.page).number,
            "step": 1,
            "refuse": "2",
            "confirm": "1",
        },
        follow=True,
    )
    assert "The proposal changed since you opened it" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert live(proposal.page).body.startswith("Refunds take five days.")


# --- the queue: its GET reads; the rows it showed whole come back in a POST -------------------

QUEUE_SHOWN = re.compile(r'name="shown" value="(\d+):([0-9a-f]+)"')


def _queue_digests(html: str) -> dict[int, str]:
    """The digests the queue rendered, by version id (its "seen" form and its batch form)."""
    return {int(pk): token for pk, token in QUEUE_SHOWN.findall(html)}


def test_a_get_of_the_queue_writes_nothing(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    short = make_page("Hours", "Open 9 to 5.\n")
    version_propose(actor=reader, page=short, body="Open 8 to 5.\n")
    long_page = make_page("Rules", "".join(f"Rule {n}.\n" for n in range(12)))
    version_propose(
        actor=reader, page=long_page, body="".join(f"Rule {n}, changed.\n" for n in range(12))
    )
    client = _client(reviewer)

    assert _writes(client, "/reviews/") == []
    assert _writes(client, "/reviews/?order=large") == []
    assert not DiffShown.objects.exists() and not ReviewVisit.objects.exists()


def test_the_queue_records_only_the_rows_it_showed_whole_when_it_says_so(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    short = version_propose(
        actor=reader, page=make_page("Hours", "Open 9 to 5.\n"), body="Open 8 to 5.\n"
    )
    long = version_propose(
        actor=reader,
        page=make_page("Rules", "".join(f"Rule {n}.\n" for n in range(12))),
        body="".join(f"Rule {n}, changed.\n" for n in range(12)),
    )
    client = _client(reviewer)
    html = client.get("/reviews/").content.decode()
    digests = _queue_digests(html)
    assert set(digests) == {short.pk}  # the long change is not shown whole in its row

    # An id alone, a digest made up, or one rendered for another person records nothing.
    other = _queue_digests(_client(second_reviewer).get("/reviews/").content.decode())
    forged = [f"{long.pk}", f"{long.pk}:{'0' * 64}", f"{short.pk}:{other[short.pk]}"]
    assert client.post("/reviews/seen/", {"shown": forged}).status_code == 204
    # A digest of one proposal given for another names neither.
    assert client.post("/reviews/seen/", {"shown": [f"{long.pk}:{digests[short.pk]}"]})
    assert not DiffShown.objects.exists()

    assert client.post("/reviews/seen/", {"shown": [f"{short.pk}:{digests[short.pk]}"]})
    assert list(DiffShown.objects.values_list("user", "version", "where")) == [
        (reviewer.pk, short.pk, "queue")
    ]


def test_a_queue_digest_of_a_proposal_changed_since_records_nothing(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    client = _client(reviewer)
    digests = _queue_digests(client.get("/reviews/").content.decode())
    # A newer version goes live: the row the reviewer saw is not the change it is now.
    version_propose(actor=editor, page=page, body="Open 9 to 6.\n", publish=True)

    client.post("/reviews/seen/", {"shown": [f"{proposal.pk}:{digests[proposal.pk]}"]})
    assert not DiffShown.objects.exists()


def test_the_queue_batch_form_carries_the_rows_it_showed_whole(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    """A batch sent before the page's "seen" POST arrived (or without scripts) still counts
    the rows the queue showed whole: its form carries their digests."""
    proposals = [
        version_propose(actor=reader, page=make_page(f"Page {n}", f"Line {n}.\n"), body=f"L{n}.\n")
        for n in range(2)
    ]
    client = _client(reviewer)
    html = client.get("/reviews/").content.decode()
    batch_form = html[html.index('<form id="rv-batch"') :]
    batch_form = batch_form[: batch_form.index("</form>")]
    answer = client.post(
        "/reviews/decide/",
        {
            "item": [f"{p.page.public_id}:{p.number}:1" for p in proposals],
            "shown": [f"{pk}:{token}" for pk, token in _queue_digests(batch_form).items()],
            "decision": "approve",
        },
        follow=True,
    )
    assert "2 proposals approved in one action" in answer.content.decode()
    assert all(Version.objects.get(pk=p.pk).status == VersionStatus.APPROVED for p in proposals)


# --- REST: reading a version writes nothing; its `shown` travels with the batch --------------


def _rest_read(client: Client, version: Version) -> str:
    """GET the version over REST; returns the `shown` it answers."""
    answer = client.get(f"/api/v1/pages/{version.page.public_id}/versions/{version.number}/")
    assert answer.status_code == 200
    shown: str = answer.json()["shown"]
    return shown


def _decide(client: Client, version: Version, decision: str = "approve", **extra: str) -> Any:
    item = {"pageId": version.page.public_id, "versionNumber": version.number, **extra}
    return client.post(
        "/api/v1/reviews/decide",
        {"decision": decision, "comment": "Not now.", "items": [item]},
        content_type="application/json",
    )


def test_a_get_of_a_version_over_rest_writes_nothing(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    url = f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/"
    client = _client(reviewer)

    assert _writes(client, url) == []
    assert _writes(_client(reader), url) == []
    assert not DiffShown.objects.exists()
    # The live version has no `shown`: there is nothing to decide.
    assert client.get(f"/api/v1/pages/{page.public_id}/versions/1/").json()["shown"] is None


def test_a_rest_batch_counts_an_item_shown_by_the_digest_its_read_answered(
    make_page: Callable[..., Page],
    editor: User,
    reader: User,
    reviewer: User,
    second_reviewer: User,
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    client = _client(reviewer)

    # Without `shown` (and never shown in the queue or on its page): refused, saying how.
    answer = _decide(client, proposal)
    assert answer.status_code == 409
    [refused] = answer.json()["error"]["detail"]["refused"]
    assert "read the version first" in refused["reason"] and "`shown`" in refused["reason"]
    # Another person's digest is not this reviewer's.
    theirs = _rest_read(_client(second_reviewer), proposal)
    answer = _decide(client, proposal, shown=theirs)
    assert answer.status_code == 409 and "changed since you read it" in answer.content.decode()

    shown = _rest_read(client, proposal)
    # A version went live since the read: the digest no longer names the change (a
    # rejection, which a stale proposal does not stop).
    version_propose(actor=editor, page=page, body="Open 9 to 5, Monday to Friday.\n", publish=True)
    answer = _decide(client, proposal, "reject", shown=shown)
    assert answer.status_code == 409 and "changed since you read it" in answer.content.decode()
    assert Version.objects.get(pk=proposal.pk).status == VersionStatus.IN_REVIEW

    # Read again, decided; nothing was recorded on the way.
    fresh = version_propose(actor=editor, page=page, body="Open 8 to 5, Monday to Friday.\n")
    answer = _decide(client, fresh, shown=_rest_read(client, fresh))
    assert answer.status_code == 200, answer.content
    assert Version.objects.get(pk=fresh.pk).status == VersionStatus.APPROVED
    assert not DiffShown.objects.exists()


def test_a_rest_batch_item_without_shown_counts_a_change_shown_in_the_queue(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    proposal = version_propose(
        actor=reader, page=make_page("Hours", "Open 9 to 5.\n"), body="Open 8 to 5.\n"
    )
    client = _client(reviewer)
    open_queue(client)
    answer = _decide(client, proposal)
    assert answer.status_code == 200, answer.content


def test_the_schema_names_the_shown_digest(admin_user: User) -> None:
    schema = yaml.safe_load(_client(admin_user).get("/api/schema/").content)
    components = schema["components"]["schemas"]
    assert components["VersionDetail"]["properties"]["shown"]["nullable"] is True
    assert components["BatchItemInput"]["properties"]["shown"]["pattern"] == "^[0-9a-f]{64}$"
    assert "shown" not in components["BatchItemInput"].get("required", [])
