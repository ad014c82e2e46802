"""People and groups for admins inside Quire: invite by email, set a password from the link,
deactivate (ending every way in), groups with their members and what they may do where."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from connect.models import Connection
from core.actors import SystemActor
from people.models import SignInSession
from reviews.api_tokens import api_token_create
from wiki.models import Page
from wiki.permissions import grant_set


def test_it_shows_people_and_groups_to_admins_only(
    client_as: Callable[[User], Client], admin_user: User, reader: User, editor: User
) -> None:
    for url in ("/people/", f"/people/{reader.pk}/", "/groups/"):
        assert client_as(reader).get(url).status_code == 403
    listing = client_as(admin_user).get("/people/").content.decode()
    assert "reed" in listing and "edna" in listing and "Editors" in listing
    assert 'href="/people/"' in client_as(admin_user).get("/").content.decode()
    assert 'href="/people/"' not in client_as(reader).get("/").content.decode()


def test_it_lists_people_in_the_same_number_of_queries_however_many(
    client_as: Callable[[User], Client],
    admin_user: User,
    make_user: Callable[..., User],
    django_assert_max_num_queries: Any,
) -> None:
    admin = client_as(admin_user)
    make_user("one", "Editors")
    with django_assert_max_num_queries(12) as few:
        admin.get("/people/")
    for n in range(15):
        make_user(f"person{n}", "Editors", "Reviewers")
    with django_assert_max_num_queries(len(few.captured_queries)):
        admin.get("/people/")


@pytest.mark.usefixtures("eager_tasks")
def test_it_invites_a_person_who_sets_a_password_from_the_emailed_link(
    client_as: Callable[[User], Client],
    admin_user: User,
    mailoutbox: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    legal = Group.objects.create(name="Legal")
    admin = client_as(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        invited = admin.post(
            "/people/invite/",
            {"email": "grace@example.com", "name": "Grace Hopper", "groups": [legal.pk]},
        )
    grace = User.objects.get(email="grace@example.com")
    assert invited["Location"] == f"/people/{grace.pk}/"
    assert grace.username == "grace" and grace.get_full_name() == "Grace Hopper"
    assert list(grace.groups.all()) == [legal] and not grace.has_usable_password()
    (mail,) = mailoutbox
    assert mail.to == ["grace@example.com"] and "grace" in mail.body
    link = re.search(r"https?://\S+/set-password/\S+", mail.body)
    assert link is not None

    person = Client()
    form = person.get(link.group(0).split("127.0.0.1:8000", 1)[-1], follow=True)
    assert b"Choose your password" in form.content
    chosen = person.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a long new passphrase", "new_password2": "a long new passphrase"},
    )
    assert chosen["Location"] == "/login/"
    assert person.login(username="grace", password="a long new passphrase")
    # The link works once.
    again = Client().get(link.group(0).split("127.0.0.1:8000", 1)[-1], follow=True)
    assert b"This link has been used" in again.content


def test_it_refuses_a_second_invitation_to_the_same_address(
    client_as: Callable[[User], Client], admin_user: User, reader: User
) -> None:
    answer = client_as(admin_user).post("/people/invite/", {"email": reader.email.upper()})
    assert answer.status_code == 400
    assert "is already a person here" in answer.content.decode()
    assert User.objects.filter(email__iexact=reader.email).count() == 1


def test_it_sets_a_persons_groups_on_their_screen(
    client_as: Callable[[User], Client], admin_user: User, reader: User
) -> None:
    reviewers = Group.objects.get(name="Reviewers")
    admin = client_as(admin_user)
    admin.post(f"/people/{reader.pk}/", {"groups": [reviewers.pk]})
    assert list(reader.groups.all()) == [reviewers]
    admin.post(f"/people/{reader.pk}/", {})
    assert not reader.groups.exists()


@pytest.mark.django_db(transaction=True)
def test_it_deactivates_a_person_ending_sessions_api_keys_and_connections(
    consent: Any, admin_user: User
) -> None:
    owner = consent.owner
    _, pair = consent.connect()
    assert consent.mcp_status(pair["access_token"]) == 200
    key = api_token_create(actor=SystemActor("tests"), user=owner)
    assert consent.person.screen("/").status_code == 200
    assert SignInSession.objects.filter(user=owner).exists()

    admin = Client()
    admin.force_login(admin_user)
    screen = admin.get(f"/people/{owner.pk}/").content.decode()
    assert "1 API key, 1 OAuth connection" in screen
    done = admin.post(f"/people/{owner.pk}/deactivate/", follow=True).content.decode()
    assert "Deactivated olga" in done

    owner.refresh_from_db()
    assert not owner.is_active
    assert consent.person.screen("/").status_code == 302
    assert consent.mcp_status(pair["access_token"]) == 401
    assert Connection.objects.get().ended_at is not None
    api = httpx.get(f"{consent.base}/api/v1/me/", headers={"Authorization": f"Token {key}"})
    assert api.status_code == 401
    # Reactivated, they sign in again; what ended stays ended.
    admin.post(f"/people/{owner.pk}/reactivate/")
    owner.refresh_from_db()
    assert owner.is_active
    assert consent.mcp_status(pair["access_token"]) == 401


def test_it_refuses_to_deactivate_yourself(
    client_as: Callable[[User], Client], admin_user: User
) -> None:
    admin = client_as(admin_user)
    page = admin.post(f"/people/{admin_user.pk}/deactivate/", follow=True).content.decode()
    assert "you cannot deactivate yourself" in page
    admin_user.refresh_from_db()
    assert admin_user.is_active


def test_it_shows_a_group_with_its_members_and_what_it_may_do_where(
    client_as: Callable[[User], Client],
    admin_user: User,
    reader: User,
    make_page: Callable[..., Page],
) -> None:
    admin = client_as(admin_user)
    created = admin.post("/groups/", {"name": "Legal"})
    legal = Group.objects.get(name="Legal")
    assert created["Location"] == f"/groups/{legal.pk}/"
    admin.post(f"/groups/{legal.pk}/", {"person": reader.username})
    assert list(legal.user_set.all()) == [reader]

    contracts = make_page("Contracts", "Templates.\n")
    grant_set(actor=admin_user, page=contracts, group=legal, rights=["read", "decide"])
    screen = admin.get(f"/groups/{legal.pk}/").content.decode()
    assert f'href="/p/{contracts.public_id}/"' in screen
    assert f'href="/p/{contracts.public_id}/access/"' in screen
    assert ">read<" in screen and ">decide<" in screen and ">publish<" not in screen
    assert "reed" in screen
    assert "1</td>" in admin.get("/groups/").content.decode()

    admin.post(f"/groups/{legal.pk}/members/{reader.pk}/remove/")
    assert not legal.user_set.exists()
    again = admin.post("/groups/", {"name": "Legal"})
    assert "already a group named" in again.content.decode()
