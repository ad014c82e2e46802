"""Searching in the browser: results with highlighted excerpts, limits, archived pages."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from reviews.actions.create import page_create
from tests.fixtures_web import count_queries
from wiki.models import Page
from wiki.views import highlight

ClientAs = Callable[[User], Client]


def search(client: Client, query: str) -> str:
    response = client.get(reverse("wiki:search"), {"q": query})
    assert response.status_code == 200
    return response.content.decode()


def test_it_finds_a_page_and_highlights_the_match(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Travel", "Book trains through the travel desk. Wombats welcome.\n")
    make_page("Food", "Lunch is at noon.\n")
    html = search(client_as(reader), "wombats")
    assert reverse("wiki:page", args=[page.public_id]) in html
    assert "<mark>Wombats</mark>" in html
    assert "Lunch is at noon" not in html


def test_it_escapes_page_text_in_excerpts(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    make_page("Snippets", "Paste <script>alert('x')</script> never; quokka rules.\n")
    html = search(client_as(reader), "quokka")
    assert "<script>alert" not in html
    assert "<mark>quokka</mark>" in html


def test_it_turns_only_balanced_markers_into_marks() -> None:
    assert highlight("a [[[b]]] <i>c</i>") == "a <mark>b</mark> &lt;i&gt;c&lt;/i&gt;"
    assert highlight("[[[<b>x</b>]]] ]]]") == "<mark>&lt;b&gt;x&lt;/b&gt;</mark> ]]]"


def test_it_shows_just_the_form_for_an_empty_query(reader: User, client_as: ClientAs) -> None:
    html = search(client_as(reader), "")
    assert 'name="q"' in html
    assert "No pages match" not in html
    assert 'class="form-errors"' not in html


def test_it_refuses_a_query_over_2000_characters_with_a_message(
    reader: User, client_as: ClientAs
) -> None:
    html = search(client_as(reader), "word " * 401)
    assert "Query must be 1 to 2000 characters; it has 2004." in html


def test_it_says_when_nothing_matches(reader: User, client_as: ClientAs) -> None:
    html = search(client_as(reader), "xylophone")
    assert "No pages match “<bdi>xylophone</bdi>”" in html


def test_it_leaves_archived_pages_out_of_the_results(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    page = make_page("Old travel policy", "Wombats travel by bus.\n")
    client = client_as(reader)
    url = reverse("wiki:page", args=[page.public_id])
    assert url in search(client, "wombats")
    client_as(editor).post(reverse("wiki:archive", args=[page.public_id]))
    assert url not in search(client, "wombats")


def test_it_leaves_pages_in_review_out_of_the_results(reader: User, client_as: ClientAs) -> None:
    version = page_create(actor=reader, title="Wombat draft", body="Wombats.\n")
    html = search(client_as(reader), "wombat")
    assert reverse("wiki:page", args=[version.page.public_id]) not in html


def test_it_renders_results_with_the_same_queries_for_10_and_200_pages(
    grow_wiki: Callable[[int], list[Page]], reader: User, client_as: ClientAs
) -> None:
    grow_wiki(10)
    client = client_as(reader)
    url = reverse("wiki:search") + "?q=quokka"
    client.get(url)
    small = count_queries(client, url)
    grow_wiki(200)
    large = count_queries(client, url)
    assert small == large
    assert search(client, "quokka").count('class="result"') == 20
