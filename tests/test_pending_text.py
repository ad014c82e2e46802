"""Text no reviewer has approved (proposals waiting, rejected, withdrawn, pages not live yet)
is for reviewers, editors, its author and the owner of the agent that wrote it; every other
signed-in reader sees only what went live, on the web and through the REST API."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from wiki.models import Page

from .fixtures_mcp import AgentKey

pytestmark = pytest.mark.django_db

ClientAs = Callable[[User], Client]
SECRET = "unreviewedwombat"


@pytest.fixture
def proposed(make_page: Callable[..., Page], reader: User) -> Page:
    """A live page (v1) with a reader's proposal waiting (v2) holding SECRET."""
    page = make_page("Expenses", "Claim within a month.\n")
    version_propose(
        actor=reader, page=page, body=f"Claim within a {SECRET}.\n", change_summary=SECRET
    )
    return page


def urls(page: Page) -> list[str]:
    pid = page.public_id
    return [
        f"/reviews/pages/{pid}/v2/",
        f"/reviews/pages/{pid}/compare/?a=1&b=2",
        f"/api/v1/pages/{pid}/versions/2/",
    ]


def test_it_keeps_a_waiting_proposal_from_other_readers(
    proposed: Page, outsider: User, client_as: ClientAs
) -> None:
    client = client_as(outsider)
    for url in urls(proposed):
        response = client.get(url)
        assert response.status_code == 404, url
        assert SECRET not in response.content.decode(), url
    for url in (f"/reviews/pages/{proposed.public_id}/history/", "/api/v1/pages/"):
        response = client.get(url)
        assert response.status_code == 200 and SECRET not in response.content.decode(), url
    listed = client.get(f"/api/v1/pages/{proposed.public_id}/versions/").json()
    assert [v["number"] for v in listed["results"]] == [1]


def test_it_shows_it_to_its_author_reviewers_and_editors(
    proposed: Page, reader: User, reviewer: User, editor: User, client_as: ClientAs
) -> None:
    for person in (reader, reviewer, editor):
        client = client_as(person)
        for url in urls(proposed):
            response = client.get(url)
            assert response.status_code == 200, (person, url)
            assert SECRET in response.content.decode(), (person, url)


def test_it_shows_an_agents_proposal_to_the_agents_owner_only(
    make_page: Callable[..., Page],
    editor_agent: AgentKey,
    reader: User,
    outsider: User,
    client_as: ClientAs,
) -> None:
    page = make_page("Travel", "Book early.\n")
    editor_agent.agent.owner = reader
    editor_agent.agent.save(update_fields=["owner"])
    version_propose(
        actor=editor_agent.agent, page=page, body=f"Book a {SECRET}.\n", change_summary="x"
    )
    url = f"/reviews/pages/{page.public_id}/v2/"
    assert client_as(reader).get(url).status_code == 200
    assert client_as(outsider).get(url).status_code == 404


def test_it_keeps_a_page_not_live_yet_from_other_readers(
    reader: User, outsider: User, reviewer: User, client_as: ClientAs
) -> None:
    draft = page_create(actor=reader, title=f"The {SECRET} page", body="Draft.\n").page
    url = f"/p/{draft.public_id}/"
    refused = client_as(outsider).get(url)
    assert refused.status_code == 404 and SECRET not in refused.content.decode()
    assert SECRET in client_as(reviewer).get(url).content.decode()
    assert SECRET in client_as(reader).get(url).content.decode()
