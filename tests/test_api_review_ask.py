"""Asking named people to review over REST: POST .../versions/{n}/ask {"people": [...]}, with
the same rule as the review page (reviews.asking), and the asked people in the review."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from core.actors import SystemActor
from inbox.models import InboxItem
from reviews.actions.propose import version_propose
from reviews.api_tokens import api_token_create
from reviews.models import ReviewAsk
from wiki.models import Page, Version

pytestmark = pytest.mark.usefixtures("eager_tasks")


def _api(user: User) -> APIClient:
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Token {api_token_create(actor=SystemActor('tests'), user=user)}"
    )
    return client


def _ask_url(version: Version) -> str:
    return f"/api/v1/pages/{version.page.public_id}/versions/{version.number}/ask"


@pytest.fixture
def proposal(make_page: Callable[..., Page], reader: User) -> Version:
    page = make_page("Refund policy", "Refunds take five days.\n")
    return version_propose(
        actor=reader, page=page, body="Refunds take seven days.\n", change_summary="Slower"
    )


def test_it_lets_the_author_ask_reviewers_by_name(
    proposal: Version,
    reader: User,
    reviewer: User,
    second_reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        answer = _api(reader).post(_ask_url(proposal), {"people": ["rob", "rita"]}, format="json")
    assert answer.status_code == 201, answer.content
    asked = answer.json()["review"]["asked"]
    assert [(a["person"], a["askedBy"]) for a in asked] == [("rob", "reed"), ("rita", "reed")]
    assert set(ReviewAsk.objects.values_list("person__username", flat=True)) == {"rob", "rita"}
    assert InboxItem.objects.filter(recipient=second_reviewer, kind="review_asked").exists()
    shown = _api(reviewer).get(f"/api/v1/pages/{proposal.page.public_id}/versions/2/").json()
    assert [a["person"] for a in shown["review"]["asked"]] == ["rob", "rita"]
    queue = _api(reviewer).get("/api/v1/reviews/").json()["results"]
    assert [a["person"] for a in queue[0]["review"]["asked"]] == ["rob", "rita"]


def test_it_refuses_whoever_the_review_page_refuses(
    proposal: Version, outsider: User, editor: User, reader: User
) -> None:
    refused = _api(outsider).post(_ask_url(proposal), {"people": ["rob"]}, format="json")
    assert refused.status_code in (403, 404)
    forbidden = _api(editor).post(_ask_url(proposal), {"people": ["rob"]}, format="json")
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "forbidden"
    assert "only its author" in forbidden.json()["error"]["message"]
    assert not ReviewAsk.objects.exists()


def test_it_answers_404_naming_an_unknown_person_and_asks_nobody(
    proposal: Version, reader: User, second_reviewer: User
) -> None:
    answer = _api(reader).post(_ask_url(proposal), {"people": ["rob", "zed"]}, format="json")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"].startswith("there is nobody named 'zed'")
    assert not ReviewAsk.objects.exists()


def test_it_answers_409_for_someone_who_cannot_decide_or_already_asked(
    proposal: Version, reader: User, editor: User, second_reviewer: User
) -> None:
    api = _api(reader)
    cannot = api.post(_ask_url(proposal), {"people": ["edna"]}, format="json")
    assert cannot.status_code == 409
    assert "edna cannot decide its current step" in cannot.json()["error"]["message"]
    assert api.post(_ask_url(proposal), {"people": ["rob"]}, format="json").status_code == 201
    twice = api.post(_ask_url(proposal), {"people": ["rob"]}, format="json")
    assert twice.status_code == 409 and "already asked" in twice.json()["error"]["message"]


def test_it_refuses_a_body_without_people(proposal: Version, reader: User) -> None:
    api = _api(reader)
    assert api.post(_ask_url(proposal), {}, format="json").status_code == 400
    assert api.post(_ask_url(proposal), {"people": []}, format="json").status_code == 400


def test_it_declares_the_ask_endpoint_in_the_schema(admin_user: User) -> None:
    client = APIClient()
    client.force_authenticate(admin_user)
    schema = client.get("/api/schema/", {"format": "json"}).json()
    ask = schema["paths"]["/api/v1/pages/{page_id}/versions/{number}/ask"]["post"]
    assert {"201", "403", "404", "409"} <= set(ask["responses"])
    people = schema["components"]["schemas"]["AskInput"]["properties"]["people"]
    assert people["minItems"] == 1
    review = schema["components"]["schemas"]["ReviewState"]["properties"]
    assert "asked" in review
