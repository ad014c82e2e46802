"""One chrome everywhere: breadcrumbs, sidebar, one h1, unique ids, friendly error pages."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents.models import Agent
from agents.services import agent_create, page_set_add
from core.actors import SystemActor
from reviews.actions.propose import version_propose
from wiki.models import Page


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def screens(make_page: Callable[..., Page], reader: User, admin_user: User) -> list[str]:
    page = make_page("Refunds", "# Refunds\n\nWe refund.\n\n## Details\n\nMore.\n")
    version_propose(actor=admin_user, page=page, body="We refund more.\n", publish=True)
    proposal = version_propose(actor=reader, page=page, body="## Details\n\nLess.\n")
    agent, _ = agent_create(actor=SystemActor("tests"), name="support-bot")
    page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    pid = page.public_id
    return [
        "/",
        f"/p/{pid}/",
        f"/p/{pid}/edit/",
        f"/p/{pid}/append/",
        "/new/",
        "/search/?q=refund",
        "/reviews/",
        f"/reviews/pages/{pid}/v{proposal.number}/",
        f"/reviews/pages/{pid}/history/",
        f"/reviews/pages/{pid}/compare/?a=1&b=2",
        "/agents/",
        "/agents/new/",
        reverse("agents:detail", args=[agent.pk]),
        reverse("agents:preview", args=[agent.pk]) + f"?q=refund&page={pid}",
        reverse("agents:token", args=[agent.pk]),
    ]


def test_it_gives_every_screen_one_h1_unique_ids_breadcrumbs_and_the_sidebar(
    screens: list[str], admin_user: User, reviewer: User
) -> None:
    admin_user.groups.add(*reviewer.groups.all())
    client = _client(admin_user)
    for url in screens:
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert len(re.findall(r"<h1[ >]", html)) == 1, url
        duplicated = [i for i, n in Counter(re.findall(r'\sid="([^"]+)"', html)).items() if n > 1]
        assert duplicated == [], (url, duplicated)
        assert '<aside class="sidebar" aria-label="Pages">' in html, url
        if url != "/":
            assert '<nav class="breadcrumbs" aria-label="Breadcrumbs">' in html, url
        assert "<script>" not in html and " style=" not in html and " onclick=" not in html, url


def test_it_answers_a_get_of_a_post_only_address_with_a_page_that_says_what_to_do(
    make_page: Callable[..., Page], editor: User
) -> None:
    page = make_page("Refunds")
    response = _client(editor).get(f"/p/{page.public_id}/archive/")
    assert response.status_code == 405 and response["Allow"] == "POST"
    html = response.content.decode()
    assert "This address does not take a GET request" in html
    assert "use the button on the screen it belongs to" in html
    assert 'class="topbar"' in html and "Back to the pages" in html


def test_it_keeps_machine_errors_for_the_api(editor: User) -> None:
    response = _client(editor).delete("/api/v1/reviews/")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/json")


def test_it_shows_in_review_in_a_colour_that_is_not_the_error_colour() -> None:
    css = open("static/quire/reviews.css").read() + open("static/quire/quire.css").read()
    rule = re.findall(r"\.rv-status-in_review \{([^}]*)\}", css)[-1]
    assert "#0a3069" in rule or "#0550ae" in rule
    for error_colour in ("#cf222e", "#82071e", "#b42318", "var(--danger)"):
        assert error_colour not in rule


def test_it_loads_no_inline_script_or_style_on_the_agent_token_screen(
    admin_user: User,
) -> None:
    agent: Agent = agent_create(actor=SystemActor("tests"), name="bot")[0]
    client = _client(admin_user)
    response = client.post(reverse("agents:rotate", args=[agent.pk]), follow=True)
    html = response.content.decode()
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert " style=" not in html
