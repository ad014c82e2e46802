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
    with pytest.raises(InvalidArgument, match="choose one of: Editors, Legal"):
        permissions.group_named("Lawyers")
    with pytest.raises(NotFound, match="has no grant 99"):
        permissions.grant_delete(actor=admin_user, page=page, grant_id=99)
    grant = permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["decide"])
    permissions.grant_set(actor=admin_user, page=page, group=legal, rights=["read", "decide"])
    assert PageGrant.objects.get(pk=grant.pk).rights == ["read", "decide"]
    permissions.grant_delete(actor=admin_user, page=page, grant_id=grant.pk)
    assert not PageGrant.objects.exists()
