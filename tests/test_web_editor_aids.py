"""Editing aids: the live preview, the parent picker, the waiting-proposals notice."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from reviews.actions.propose import version_propose
from wiki import services as wiki_services
from wiki.models import Page


def _client(user: User) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def test_it_previews_markdown_exactly_as_the_page_view_renders_it(
    make_page: Callable[..., Page], editor: User
) -> None:
    body = "# Guide\n\nHello **there** [[pg_aaaaaaaa]].\n\n# Part\n\n<script>alert(1)</script>\n"
    preview = _client(editor).post("/preview/", {"body": body, "title": "Guide"})
    assert preview.status_code == 200
    html = preview.content.decode()
    page = make_page("Guide", body)
    view = _client(editor).get(f"/p/{page.public_id}/").content.decode()
    article = view[view.index('<article class="prose">') : view.index("</article>")]
    assert html.strip() == article.split(">", 1)[1].strip()
    assert "<script>" not in html and "<h1" not in html
    assert '<h2 dir="auto" id="part">Part</h2>' in html
    assert '<span class="broken-link" title="No such page">pg_aaaaaaaa</span>' in html


def test_it_refuses_a_preview_to_visitors_and_to_get(reader: User) -> None:
    assert Client().post("/preview/", {"body": "x"}).status_code == 302
    response = _client(reader).get("/preview/")
    assert response.status_code == 405
    assert "This address does not take a GET request" in response.content.decode()


def test_it_refuses_a_preview_of_text_over_the_limit(reader: User) -> None:
    response = _client(reader).post("/preview/", {"body": "x" * 200_001})
    assert response.status_code == 400 and "shorten it" in response.content.decode()


def test_it_creates_a_page_under_the_parent_chosen_in_the_picker(
    make_page: Callable[..., Page], editor: User
) -> None:
    tools = make_page("Tools")
    client = _client(editor)
    form = client.get("/new/").content.decode()
    assert 'data-picker="/pages/pick/"' in form and 'name="parent"' in form
    response = client.post(
        "/new/", {"title": "Slack", "body": "Chat.\n", "parent": tools.public_id}
    )
    assert response.status_code == 302
    assert Page.objects.get(title="Slack").path == "tools/slack"


def test_it_keeps_the_text_when_the_chosen_parent_is_not_live(
    make_page: Callable[..., Page], editor: User
) -> None:
    gone = make_page("Gone")
    wiki_services.page_archive(actor=editor, page=gone)
    response = _client(editor).post(
        "/new/", {"title": "Orphan", "body": "Long text I typed.\n", "parent": gone.public_id}
    )
    html = response.content.decode()
    assert response.status_code == 200 and "is not a live page" in html
    assert "Long text I typed." in html and 'value="Orphan"' in html
    assert not Page.objects.filter(title="Orphan").exists()


def test_it_tells_an_editor_that_proposals_are_waiting_before_they_edit(
    make_page: Callable[..., Page], editor: User, reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("Refunds", "30 days\n")
    waiting = version_propose(
        actor=proposing_agent, page=page, body="60 days\n", change_summary="Longer window"
    )
    html = _client(editor).get(f"/p/{page.public_id}/edit/").content.decode()
    assert "1 proposal is waiting for review on this page." in html
    assert "Longer window" in html and "makes it stale" in html
    as_reviewer = _client(reviewer).get(f"/p/{page.public_id}/edit/").content.decode()
    assert f"/reviews/pages/{page.public_id}/v{waiting.number}/" in as_reviewer
    quiet = make_page("Quiet")
    assert "waiting for review on this page" not in (
        _client(editor).get(f"/p/{quiet.public_id}/edit/").content.decode()
    )


def test_it_marks_the_edit_form_for_keeping_the_text_in_the_browser(
    make_page: Callable[..., Page], editor: User
) -> None:
    page = make_page("Refunds")
    html = _client(editor).get(f"/p/{page.public_id}/edit/").content.decode()
    assert f'data-draft="/p/{page.public_id}/edit/"' in html
    assert "/static/quire/editor.js" in html and 'class="draft-restore' in html


def test_it_picks_pages_by_part_of_any_word_of_their_title_or_path(
    make_page: Callable[..., Page], reader: User, editor: User
) -> None:
    process = make_page("Process")
    reviews = make_page("How code reviews work", parent=process)
    make_page("Onboarding")
    archived = make_page("Old reviews")
    wiki_services.page_archive(actor=editor, page=archived)
    client = _client(reader)

    def picked(query: str) -> list[str]:
        return [p["title"] for p in client.get("/pages/pick/", {"q": query}).json()["pages"]]

    assert picked("revi") == ["How code reviews work"]
    assert picked("REVI") == ["How code reviews work"]
    assert picked("code rev") == ["How code reviews work"]
    # A part of a path segment finds the page too, and every typed word must match.
    assert reviews.path == "process/how-code-reviews-work"
    assert picked("cess") == ["Process", "How code reviews work"]
    assert picked("revi board") == []
