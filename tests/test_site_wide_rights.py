"""Site-wide questions asked of the one policy (issue 46, point 1): the home page's archived
pages and who talks on a proposal.

From outside: a section read by Legal alone holds an archived page; an editor outside Legal
opened the home page and read its title and the section's slug in "Archived pages". A
Writers group granted `publish` on another section could restore its archived pages but was
never shown them (the list was for Editors). A member of Reviewers outside Legal, on a page
whose `decide` is granted to Legal alone, could comment on its proposals as a reviewer.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from reviews.actions.propose import version_propose
from reviews.actions.rules import may_comment
from wiki import permissions
from wiki import services as wiki_services
from wiki.models import Page

pytestmark = pytest.mark.django_db


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_lists_on_home_only_the_archived_pages_the_person_may_restore(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    editor: User,
    admin_user: User,
) -> None:
    legal = Group.objects.get_or_create(name="Legal")[0]
    writers = Group.objects.get_or_create(name="Writers")[0]
    vault = make_page("Zebravault section", "Counsel notes.\n")
    secret = make_page("Zebravault memo", "Old.\n", parent=vault)
    blog = make_page("Blog", "Posts.\n")
    post = make_page("Old post", "Gone.\n", parent=blog)
    for page in (secret, post):
        wiki_services.page_archive(actor=editor, page=page)
    permissions.grant_set(actor=admin_user, page=vault, group=legal, rights=["read"])
    permissions.grant_set(actor=admin_user, page=blog, group=writers, rights=["publish"])
    home = _client(editor).get("/").content.decode()
    assert "Zebravault" not in home and "zebravault" not in home
    assert "Old post" not in home  # publish on the blog is Writers' now
    wren = make_user("wren", "Writers")
    home = _client(wren).get("/").content.decode()
    assert "Archived pages" in home and "Old post" in home and "Zebravault" not in home
    # An admin sees both, and Legal's member reads the section's.
    home = _client(admin_user).get("/").content.decode()
    assert "Old post" in home and "Zebravault memo" in home


def test_it_lets_only_those_who_decide_the_page_comment_on_its_proposal(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    reviewer: User,
    admin_user: User,
    reader: User,
) -> None:
    legal = Group.objects.get_or_create(name="Legal")[0]
    page = make_page("NDA", "Two years.\n")
    permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["decide"])
    proposal = version_propose(actor=reader, page=page, body="Three years.\n")
    assert not may_comment(reviewer, proposal)
    assert may_comment(make_user("lena", "Legal"), proposal)
    assert may_comment(reader, proposal)  # its author
    assert may_comment(admin_user, proposal)
    other = make_page("Lunch", "Noon.\n")
    elsewhere = version_propose(actor=reader, page=other, body="One.\n")
    assert may_comment(reviewer, elsewhere)


def test_it_refuses_the_editor_before_writing_where_the_person_may_not_propose(
    make_page: Callable[..., Page],
    reviewer: User,
    admin_user: User,
) -> None:
    """Outside steps: `propose` on a page granted to Legal alone; a Reviewer outside Legal
    clicked "Propose an edit", got the editor, wrote, and only the save said 403."""
    legal = Group.objects.get_or_create(name="Legal")[0]
    page = make_page("Welcome", "Hello.\n")
    permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["propose"])
    response = _client(reviewer).get(f"/p/{page.public_id}/edit/")
    assert response.status_code == 403
    assert "Only members of Legal can propose changes here" in response.content.decode()
    assert _client(admin_user).get(f"/p/{page.public_id}/edit/").status_code == 200
