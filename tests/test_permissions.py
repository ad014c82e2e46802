"""wiki.permissions: `can(person, right, page)` and `people_with(right, page)`, the one rule of
who may read, propose, publish and decide where (grants per section, nearest wins)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User

from core.errors import Forbidden, InvalidArgument, NotFound
from reviews import workflows
from wiki import permissions
from wiki.models import Page, PageGrant
from wiki.permissions import can, people_with

pytestmark = pytest.mark.django_db


def fresh(page: Page) -> Page:
    """The page as a new request reads it (nothing kept on the object)."""
    return Page.objects.get(pk=page.pk)


def fresh_user(user: User) -> User:
    return User.objects.get(pk=user.pk)


def test_it_keeps_todays_rules_without_any_grant(
    make_page: Callable[..., Page],
    editor: User,
    reviewer: User,
    reader: User,
    admin_user: User,
) -> None:
    page = make_page("Handbook")
    assert [can(reader, right, page) for right in permissions.RIGHTS] == [
        True,
        True,
        False,
        False,
    ]
    assert can(editor, "publish", page) and not can(editor, "decide", page)
    assert can(reviewer, "decide", page) and not can(reviewer, "publish", page)
    assert all(can(admin_user, right, page) for right in permissions.RIGHTS)
    assert set(people_with("decide", page)) == {reviewer, admin_user}
    assert set(people_with("read", page)) == {editor, reviewer, reader, admin_user}


def test_it_lets_the_nearest_grant_per_right_win(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    editor: User,
    reviewer: User,
    admin_user: User,
) -> None:
    legal = make_page("Legal")
    contracts = make_page("Contracts", parent=legal)
    lawyer = make_user("lana", "Legal")
    partner = make_user("pat", "Legal", "Partners")
    permissions.grant_set(
        actor=admin_user,
        page=legal,
        group=Group.objects.get(name="Legal"),
        rights=["read", "decide"],
    )
    partners = Group.objects.get(name="Partners")
    permissions.grant_set(actor=admin_user, page=contracts, group=partners, rights=["publish"])

    contracts = fresh(contracts)
    # read and decide come from Legal's grant above, publish from the nearer one.
    assert not can(fresh_user(editor), "read", contracts)
    assert not can(fresh_user(reviewer), "decide", contracts)
    assert can(fresh_user(lawyer), "decide", contracts)
    assert not can(fresh_user(lawyer), "publish", contracts)
    assert can(fresh_user(partner), "publish", contracts)
    assert set(people_with("decide", contracts)) == {lawyer, partner, admin_user}
    assert set(people_with("publish", contracts)) == {partner, admin_user}
    assert set(people_with("read", contracts)) == {lawyer, partner, admin_user}
    # Above the grants nothing changed.
    outside = make_page("Outside")
    assert can(fresh_user(editor), "publish", outside)


def test_it_lets_nobody_publish_where_a_workflow_applies(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    editor: User,
    admin_user: User,
) -> None:
    legal = make_page("Legal")
    nda = make_page("NDA", parent=legal)
    make_user("lana", "Legal")
    flow = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=[{"group": "Legal", "approvals": 1}]
    )
    workflows.workflow_assign(actor=admin_user, workflow=flow, page=legal)
    nda = fresh(nda)
    assert not can(fresh_user(editor), "publish", nda)
    assert not can(fresh_user(admin_user), "publish", nda)
    assert can(fresh_user(editor), "propose", nda)
    assert not people_with("publish", nda).exists()


def test_it_refuses_grant_changes_with_what_to_do(
    make_page: Callable[..., Page], editor: User, admin_user: User
) -> None:
    page = make_page("Legal")
    legal = Group.objects.create(name="Legal")
    with pytest.raises(Forbidden, match="only admins"):
        permissions.grant_set(actor=editor, page=page, group=legal, rights=["read"])
    with pytest.raises(InvalidArgument, match="the rights are read, propose, publish, decide"):
        permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["write"])
    with pytest.raises(InvalidArgument, match="delete its grant"):
        permissions.grant_set(actor=admin_user, page=page, group=legal, rights=[])
    with pytest.raises(NotFound, match="choose one of: Editors, Legal"):
        permissions.group_named("Lawyers")
    with pytest.raises(NotFound, match="has no grant 99"):
        permissions.grant_delete(actor=admin_user, page=page, grant_id=99)
    grant = permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["decide"])
    permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["read", "decide"])
    assert PageGrant.objects.get(pk=grant.pk).rights == ["read", "decide"]
    permissions.grant_delete(actor=admin_user, page=page, grant_id=grant.pk)
    assert not PageGrant.objects.exists()


def test_it_lets_only_the_granted_group_propose_where_propose_is_granted(
    make_page: Callable[..., Page], make_user: Callable[..., User], reader: User, admin_user: User
) -> None:
    from reviews.actions.create import page_create
    from reviews.actions.propose import version_propose

    drafts = make_page("Drafts")
    writer = make_user("wendy", "Writers")
    permissions.grant_set(
        actor=admin_user, page=drafts, group=Group.objects.get(name="Writers"), rights=["propose"]
    )
    with pytest.raises(Forbidden, match="only members of Writers can propose changes here"):
        version_propose(actor=fresh_user(reader), page=fresh(drafts), body="Mine.\n")
    with pytest.raises(Forbidden, match="only members of Writers"):
        page_create(actor=fresh_user(reader), title="Child", body="x\n", parent=drafts)
    proposal = version_propose(actor=writer, page=fresh(drafts), body="Ours.\n")
    assert proposal.status == "in_review"


def test_it_answers_reading_the_same_in_python_and_in_the_scopes_sql(
    make_page: Callable[..., Page], make_user: Callable[..., User], admin_user: User
) -> None:
    from wiki.scope import person_scope

    legal = make_page("Legal")
    other = make_page("Other", parent=legal)
    shared = make_page("Shared", parent=legal)
    below = make_page("Below", parent=shared)
    outside = make_page("Outside")
    people = [
        make_user("lana", "Legal"),
        make_user("sam", "Staff"),
        make_user("both", "Legal", "Staff"),
        make_user("nobody"),
        admin_user,
    ]
    group = Group.objects.get
    permissions.grant_set(actor=admin_user, page=legal, group=group(name="Legal"), rights=["read"])
    permissions.grant_set(actor=admin_user, page=shared, group=group(name="Staff"), rights=["read"])
    pages = [legal, other, shared, below, outside]
    seen = {}
    for person in people:
        in_sql = set(Page.objects.filter(person_scope(person).q()).values_list("pk", flat=True))
        in_python = {page.pk for page in pages if can(fresh_user(person), "read", fresh(page))}
        assert in_sql == in_python, person.username
        seen[person.username] = {page.title for page in pages if page.pk in in_sql}
    assert seen["lana"] == {"Legal", "Other", "Outside"}
    assert seen["sam"] == {"Shared", "Below", "Outside"}  # nearest grant wins, below a hidden one
    assert seen["both"] == seen["ada"] == {"Legal", "Other", "Shared", "Below", "Outside"}
    assert seen["nobody"] == {"Outside"}
