"""Proposing versions: numbering, one pending proposal per author and page, limits."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections

from core.errors import Forbidden, InvalidArgument
from reviews.actions.propose import version_propose
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus


def test_it_numbers_versions_from_one_without_gaps(
    make_page: Callable[..., Page], reader: User, editor: User
) -> None:
    page = make_page("Numbers")
    version_propose(actor=reader, page=page, body="two", change_summary="2")
    version_propose(actor=editor, page=page, body="three", publish=True)
    assert list(page.versions.values_list("number", flat=True)) == [1, 2, 3]


def test_it_withdraws_the_authors_older_pending_proposal(
    make_page: Callable[..., Page], reader: User
) -> None:
    page = make_page("Pending")
    first = version_propose(actor=reader, page=page, body="first")
    second = version_propose(actor=reader, page=page, body="second")
    first.refresh_from_db()
    assert first.status == VersionStatus.WITHDRAWN
    assert second.status == VersionStatus.IN_REVIEW
    assert page.versions.filter(status=VersionStatus.IN_REVIEW).count() == 1


def test_it_keeps_the_live_version_while_a_proposal_waits(
    make_page: Callable[..., Page], reader: User
) -> None:
    page = make_page("Waiting", "live text")
    version_propose(actor=reader, page=page, body="proposed text")
    page.refresh_from_db()
    assert page.live_version is not None
    assert page.live_version.body == "live text"


def test_it_enforces_one_pending_proposal_in_the_database(
    make_page: Callable[..., Page], reader: User
) -> None:
    from django.db import IntegrityError, transaction

    page = make_page("Constraint")
    version_propose(actor=reader, page=page, body="a")
    with pytest.raises(IntegrityError), transaction.atomic():
        Version.objects.create(
            page=page, number=99, title="x", author_user=reader, status="in_review"
        )


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("title", {"title": "x" * 201}),
        ("tags", {"tags": [f"t{i}" for i in range(21)]}),
        ("tags", {"tags": ["x" * 51]}),
        ("markdown", {"body": "x" * 200_001}),
        ("change_summary", {"body": "ok", "change_summary": "x" * 301}),
    ],
)
def test_it_refuses_input_over_the_limits_and_stores_nothing(
    make_page: Callable[..., Page], reader: User, field: str, kwargs: dict[str, Any]
) -> None:
    page = make_page("Limits")
    before = Version.objects.count()
    with pytest.raises(InvalidArgument) as info:
        version_propose(actor=reader, page=page, **kwargs)
    assert info.value.field == field
    assert Version.objects.count() == before


def test_it_refuses_to_publish_for_a_reader(make_page: Callable[..., Page], reader: User) -> None:
    page = make_page("Publish")
    with pytest.raises(Forbidden):
        version_propose(actor=reader, page=page, body="x", publish=True)


# Row locks under 20 threads are a PostgreSQL test: SQLite serialises writers anyway.
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_gives_concurrent_proposals_distinct_gap_free_numbers(
    make_user: Callable[..., User], make_page: Callable[..., Page]
) -> None:
    page = make_page("Busy page")
    authors = [make_user(f"writer{i}") for i in range(20)]
    barrier = threading.Barrier(20)
    errors: list[BaseException] = []

    def propose(author: User) -> None:
        try:
            barrier.wait()
            version_propose(actor=author, page=page, body=f"from {author.username}")
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=propose, args=(a,)) for a in authors]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    numbers = sorted(page.versions.values_list("number", flat=True))
    assert numbers == list(range(1, 22))
    waiting = page.versions.filter(status=VersionStatus.IN_REVIEW)
    # Each writer's words landed in that writer's own proposal, and the page stayed as it was.
    assert dict(waiting.values_list("author_user__username", "body")) == {
        a.username: f"from {a.username}" for a in authors
    }
    assert live(page).number == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_keeps_one_pending_proposal_when_an_author_submits_many_at_once(
    reader: User, make_page: Callable[..., Page]
) -> None:
    page = make_page("Double click")
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def propose(attempt: int) -> None:
        try:
            barrier.wait()
            version_propose(actor=reader, page=page, body=f"attempt {attempt}")
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=propose, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(page.versions.values_list("number", flat=True)) == list(range(1, 10))
    statuses = list(page.versions.order_by("number").values_list("status", flat=True))
    # The last one to take the page lock wins; every earlier attempt was withdrawn by the next.
    assert statuses == [VersionStatus.APPROVED] + [VersionStatus.WITHDRAWN] * 7 + [
        VersionStatus.IN_REVIEW
    ]
