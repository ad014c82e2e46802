"""Reading in the browser: the page tree, the page view, archive and restore, error pages."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from tests.fixtures_web import count_queries
from wiki import services as wiki_services
from wiki.models import Page, Version

ClientAs = Callable[[User], Client]


def page_url(page: Page) -> str:
    return reverse("wiki:page", kwargs={"public_id": page.public_id})


def test_it_shows_the_page_tree_on_the_home_page(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    tools = make_page("Tools")
    make_page("Slack etiquette", parent=tools)
    html = client_as(reader).get(reverse("wiki:home")).content.decode()
    assert "Tools" in html
    assert "Slack etiquette" in html
    assert page_url(tools) in html


def test_it_renders_the_live_version_not_a_waiting_proposal(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Refunds", "Refunds take **five** days.\n")
    version_propose(actor=reader, page=page, body="Refunds take ninety days.\n")
    html = client_as(reader).get(page_url(page)).content.decode()
    assert "five" in html
    assert "ninety" not in html
    assert "1 proposal waiting for review" in html
    assert reverse("reviews:history", kwargs={"page_id": page.public_id}) in html


def test_it_links_a_reviewer_to_the_single_waiting_proposal(
    make_page: Callable[..., Page], reader: User, reviewer: User, client_as: ClientAs
) -> None:
    page = make_page("Refunds")
    version = version_propose(actor=reader, page=page, body="New text.\n")
    html = client_as(reviewer).get(page_url(page)).content.decode()
    review = reverse("reviews:review", kwargs={"page_id": page.public_id, "number": version.number})
    assert review in html


def test_it_shows_breadcrumbs_children_tags_and_instructions(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    root = make_page("Handbook")
    middle = make_page("Tools", parent=root)
    leaf = make_page(
        "Slack", parent=middle, tags=["chat", "tools"], instructions="Use for *chat* questions."
    )
    make_page("Threads", parent=leaf)
    html = client_as(reader).get(page_url(leaf)).content.decode()
    crumbs = html[
        html.index('class="breadcrumbs"') : html.index("</nav>", html.index("breadcrumbs"))
    ]
    assert crumbs.index("Handbook") < crumbs.index("Tools") < crumbs.index("Slack")
    assert "Pages under <bdi>Slack</bdi>" in html and "Threads" in html
    assert '<li class="tag">chat</li>' in html
    assert "Instructions for agents" in html
    assert "<em>chat</em>" in html


def test_it_shows_a_page_in_review_only_as_waiting(
    reader: User, editor: User, reviewer: User, outsider: User, client_as: ClientAs
) -> None:
    version = page_create(actor=reader, title="Draft plan", body="Secret draft body.\n")
    page = version.page
    # Its title is text no reviewer approved: someone else's draft is no page for the outsider.
    refused = client_as(outsider).get(page_url(page))
    assert refused.status_code == 404 and "Draft plan" not in refused.content.decode()
    assert "Draft plan" not in client_as(outsider).get(reverse("wiki:home")).content.decode()
    mine = client_as(reader).get(page_url(page)).content.decode()
    assert "This page is waiting for review" in mine and "You proposed it (v1)" in mine
    assert "Secret draft body" not in mine
    review = reverse("reviews:review", kwargs={"page_id": page.public_id, "number": 1})
    assert review not in mine
    assert review in client_as(reviewer).get(page_url(page)).content.decode()


def test_it_hides_an_archived_page_from_readers_and_the_tree(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    page = make_page("Old process")
    response = client_as(editor).post(reverse("wiki:archive", kwargs={"public_id": page.public_id}))
    assert response.status_code == 302
    page.refresh_from_db()
    assert page.archived
    assert "Old process" not in client_as(reader).get(reverse("wiki:home")).content.decode()
    assert client_as(reader).get(page_url(page)).status_code == 404
    html = client_as(editor).get(page_url(page)).content.decode()
    assert "This page is archived" in html


def test_it_archives_the_children_of_an_archived_page_with_it(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    parent = make_page("Old section")
    make_page("Gone with it", parent=parent)
    wiki_services.page_archive(actor=editor, page=parent)
    html = client_as(reader).get(reverse("wiki:home")).content.decode()
    assert "Gone with it" not in html
    assert "Old section" not in html


def test_it_restores_an_archived_page(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    page = make_page("Back again")
    wiki_services.page_archive(actor=editor, page=page)
    url = reverse("wiki:restore", kwargs={"public_id": page.public_id})
    assert client_as(editor).post(url).status_code == 302
    page.refresh_from_db()
    assert not page.archived
    assert "Back again" in client_as(reader).get(reverse("wiki:home")).content.decode()


def test_it_refuses_archive_and_restore_to_a_reader(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    page = make_page("Keep me")
    response = client_as(reader).post(reverse("wiki:archive", kwargs={"public_id": page.public_id}))
    assert response.status_code == 403
    assert b"You cannot archive pages here: only members of Editors can" in response.content
    page.refresh_from_db()
    assert not page.archived
    wiki_services.page_archive(actor=editor, page=page)
    response = client_as(reader).post(reverse("wiki:restore", kwargs={"public_id": page.public_id}))
    assert response.status_code == 404
    page.refresh_from_db()
    assert page.archived


def test_it_archives_only_with_a_post(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Safe from links")
    response = client_as(editor).get(reverse("wiki:archive", kwargs={"public_id": page.public_id}))
    assert response.status_code == 405
    page.refresh_from_db()
    assert not page.archived


def test_it_answers_an_unknown_page_with_a_readable_404(reader: User, client_as: ClientAs) -> None:
    response = client_as(reader).get("/p/pg_zzzzzzzz/")
    assert response.status_code == 404
    assert b"There is no page with this id" in response.content


def test_it_serves_its_own_assets_without_a_cdn(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Local only")
    html = client_as(reader).get(page_url(page)).content.decode()
    assert "/static/quire/quire.css" in html
    assert "https://" not in html and "http://" not in html


def test_it_renders_the_page_view_with_the_same_queries_for_10_and_200_pages(
    make_page: Callable[..., Page],
    grow_wiki: Callable[[int], list[Page]],
    reader: User,
    editor: User,
    client_as: ClientAs,
) -> None:
    page = make_page("Subject", "Body with a [link](https://example.com).\n", tags=["a", "b"])
    make_page("Child one", parent=page)
    make_page("Child two", parent=page)
    version_propose(actor=reader, page=page, body="A proposal.\n")
    grow_wiki(10)
    client = client_as(reader)
    client.get(page_url(page))  # warm the session and caches
    small = count_queries(client, page_url(page))
    grow_wiki(200)
    for n in range(5):
        make_page(f"Another child {n}", parent=page)
    large = count_queries(client, page_url(page))
    assert small == large
    assert Page.objects.count() >= 200


def test_it_renders_the_tree_with_the_same_queries_for_10_and_200_pages(
    grow_wiki: Callable[[int], list[Page]], reader: User, editor: User, client_as: ClientAs
) -> None:
    grow_wiki(10)
    client = client_as(editor)
    client.get(reverse("wiki:home"))
    small = count_queries(client, reverse("wiki:home"))
    grow_wiki(200)
    large = count_queries(client, reverse("wiki:home"))
    assert small == large
    assert Version.objects.count() >= 200
