"""Names never cross a hidden page in a page's older versions (issue 46, point 2).

The setup of tests/test_hidden_names.py (a section read by Legal alone, a subsection granted
back to Staff; Stan is in Staff and Reviewers, not in Legal), then an admin moves a page out of
the hidden section to the top level, and another from the hidden section into the
granted-back subsection. Stan reads both now; their first versions were under the hidden
section. Before this, REST's `/versions/1/` gave the hidden section's id as `parentId`, and the
review page of the move named the section by its title as the page's old parent.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews.actions.create import page_create
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import rpc_tool
from .test_hidden_names import ClientAs, Legal, assert_clean, build_legal


def _made_under_section(legal: Legal, admin: User, title: str) -> Page:
    version = page_create(
        actor=admin, title=title, body=f"{title}.\n", parent=legal.section, publish=True
    )
    return Page.objects.get(pk=version.page_id)


@pytest.fixture
def moved(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> tuple[Legal, Page, Page]:
    legal = build_legal(make_page, make_user, admin_user, client_as)
    out = _made_under_section(legal, admin_user, "Otter memo")
    into = _made_under_section(legal, admin_user, "Otter letter")
    wiki_services.page_move(actor=admin_user, page=out, parent=None)
    wiki_services.page_move(actor=admin_user, page=into, parent=legal.templates)
    return legal, out, into


@pytest.mark.django_db
def test_it_gives_no_hidden_parent_id_in_an_older_version_over_rest(
    moved: tuple[Legal, Page, Page], client_as: ClientAs
) -> None:
    legal, out, into = moved
    stan = client_as(legal.stan)
    for page, parent_now in ((out, None), (into, legal.templates.public_id)):
        first = stan.get(f"/api/v1/pages/{page.public_id}/versions/1/")
        assert first.status_code == 200, first.content
        assert first.json()["parentId"] is None
        now = stan.get(f"/api/v1/pages/{page.public_id}/versions/2/").json()
        assert now["parentId"] == parent_now
        detail = stan.get(f"/api/v1/pages/{page.public_id}/").json()
        history = stan.get(f"/api/v1/pages/{page.public_id}/versions/").json()
        for answer in (first.json(), now, detail, history):
            assert_clean(legal, answer)
    # Lara, in Legal, is told where the page was.
    lara = client_as(User.objects.get(username="lara"))
    first = lara.get(f"/api/v1/pages/{out.public_id}/versions/1/").json()
    assert first["parentId"] == legal.section.public_id


@pytest.mark.django_db
def test_it_names_no_hidden_old_parent_on_the_web_history_and_review_page(
    moved: tuple[Legal, Page, Page], client_as: ClientAs
) -> None:
    legal, out, into = moved
    stan = client_as(legal.stan)
    for page in (out, into):
        history = stan.get(f"/reviews/pages/{page.public_id}/history/")
        assert history.status_code == 200
        assert_clean(legal, history.content.decode())
        for number in (1, 2):
            shown = stan.get(f"/reviews/pages/{page.public_id}/v{number}/")
            assert shown.status_code == 200
            assert_clean(legal, shown.content.decode())
        compared = stan.get(f"/reviews/pages/{page.public_id}/compare/?a=1&b=2")
        assert_clean(legal, compared.content.decode())
    # The move is still said, without the hidden page's name.
    move = stan.get(f"/reviews/pages/{into.public_id}/v2/").content.decode()
    assert "Parent page" in move and "Wombat templates" in move


@pytest.mark.django_db
def test_it_gives_no_hidden_parent_in_mcp_get_page_source_after_a_move(
    moved: tuple[Legal, Page, Page], client: Client
) -> None:
    legal, out, into = moved
    for token in (legal.section_bot, legal.every_bot):
        for page in (out, into):
            answer = rpc_tool(client, token, "get_page_source", pageId=page.public_id)
            assert_clean(legal, answer)
    source = rpc_tool(client, legal.every_bot, "get_page_source", pageId=into.public_id)
    assert source["structuredContent"]["parentId"] == legal.templates.public_id
