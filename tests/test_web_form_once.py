"""A form saves once: its one-time token, and a second page with a sibling's title asks first."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from wiki.models import FormSubmission, Page, Version
from wiki.services import FORM_TOKEN_KEPT

pytestmark = pytest.mark.django_db


def _token(client: Client, url: str) -> str:
    html = client.get(url).content.decode()
    found = re.search(r'name="form_token" value="([^"]+)"', html)
    assert found, "the form carries a one-time token"
    return found.group(1)


def test_it_saves_a_new_page_form_once(client_as: Callable[[User], Client], editor: User) -> None:
    client = client_as(editor)
    data = {"title": "Runbook", "body": "Steps.\n", "form_token": _token(client, "/new/")}
    first = client.post("/new/", data)
    page = Page.objects.get(title="Runbook")
    assert first.status_code == 302 and first["Location"] == f"/p/{page.public_id}/"
    again = client.post("/new/", data)
    assert again.status_code == 302 and again["Location"] == f"/p/{page.public_id}/"
    assert Page.objects.filter(title="Runbook").count() == 1
    followed = client.get(again["Location"]).content.decode()
    assert "This form was already saved, so nothing was saved a second time" in followed


def test_it_asks_before_a_second_page_with_a_siblings_title(
    client_as: Callable[[User], Client], editor: User, make_page: Callable[..., Page]
) -> None:
    handbook = make_page("Handbook")
    make_page("On-call", parent=handbook)
    client = client_as(editor)
    url = f"/p/{handbook.public_id}/new-child/"
    data = {"title": "on-call", "body": "Again.\n", "form_token": _token(client, url)}
    asked = client.post(url, data)
    assert asked.status_code == 200
    html = asked.content.decode()
    assert "A page titled “On-call” already exists under “Handbook”" in html
    assert 'name="same_title_ok"' in html
    assert Page.objects.filter(parent=handbook).count() == 1
    # The same form, confirmed: saved once, and its token is then spent.
    confirmed = client.post(url, {**data, "same_title_ok": "on"})
    assert confirmed.status_code == 302
    assert Page.objects.filter(parent=handbook).count() == 2
    # A top-level twin asks too; the same title under another parent does not.
    top = client.post("/new/", {"title": "HANDBOOK", "form_token": _token(client, "/new/")})
    assert top.status_code == 200 and "already exists at the top level" in top.content.decode()
    other = make_page("Other")
    elsewhere = f"/p/{other.public_id}/new-child/"
    made = client.post(elsewhere, {"title": "On-call", "form_token": _token(client, elsewhere)})
    assert made.status_code == 302


def test_it_lets_a_refused_save_be_corrected_with_the_same_token(
    client_as: Callable[[User], Client], editor: User
) -> None:
    client = client_as(editor)
    token = _token(client, "/new/")
    refused = client.post("/new/", {"title": "", "body": "x", "form_token": token})
    assert refused.status_code == 200 and not FormSubmission.objects.exists()
    # A service refusal (a credential) rolls the claim back with the rest.
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    refused = client.post("/new/", {"title": "Keys", "body": key, "form_token": token})
    assert refused.status_code == 200 and "credential" in refused.content.decode()
    assert not FormSubmission.objects.exists()
    saved = client.post("/new/", {"title": "Keys", "body": "None here.", "form_token": token})
    assert saved.status_code == 302 and Page.objects.filter(title="Keys").count() == 1


def test_it_appends_once_and_edits_once(
    client_as: Callable[[User], Client], editor: User, make_page: Callable[..., Page]
) -> None:
    page = make_page("FAQ", "Q and A.\n")
    client = client_as(editor)
    url = f"/p/{page.public_id}/append/"
    data = {"body": "One more answer.\n", "form_token": _token(client, url)}
    assert client.post(url, data).status_code == 302
    assert client.post(url, data).status_code == 302
    page.refresh_from_db()
    assert page.live_version is not None
    assert page.live_version.body.count("One more answer.") == 1
    assert Version.objects.filter(page=page).count() == 2


def test_it_deletes_spent_tokens_older_than_a_day_on_the_next_save(
    client_as: Callable[[User], Client], editor: User
) -> None:
    client = client_as(editor)
    for title in ("Old", "Recent"):
        client.post("/new/", {"title": title, "form_token": _token(client, "/new/")})
    old, recent = FormSubmission.objects.order_by("id")
    FormSubmission.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - FORM_TOKEN_KEPT - timedelta(minutes=1)
    )
    FormSubmission.objects.filter(pk=recent.pk).update(
        created_at=timezone.now() - FORM_TOKEN_KEPT + timedelta(minutes=1)
    )
    client.post("/new/", {"title": "Newest", "form_token": _token(client, "/new/")})
    kept = set(FormSubmission.objects.values_list("pk", flat=True))
    assert old.pk not in kept and recent.pk in kept and len(kept) == 2


def test_it_asks_before_renaming_or_moving_a_page_beside_one_of_the_same_title(
    client_as: Callable[[User], Client], editor: User, make_page: Callable[..., Page]
) -> None:
    handbook = make_page("Handbook")
    make_page("On-call", parent=handbook)
    rota = make_page("Rota", parent=handbook)
    client = client_as(editor)
    url = f"/p/{rota.public_id}/edit/"
    data = {"title": "ON-CALL", "body": "Who is on.\n", "form_token": _token(client, url)}
    asked = client.post(url, data)
    html = asked.content.decode()
    assert asked.status_code == 200
    assert "A page titled “On-call” already exists under “Handbook”" in html
    assert "Choose another title" in html and 'name="same_title_ok"' in html
    rota.refresh_from_db()
    assert rota.title == "Rota"
    assert client.post(url, {**data, "same_title_ok": "on"}).status_code == 302
    rota.refresh_from_db()
    assert rota.title == "ON-CALL"
    # Saving a page under its own title never asks.
    again = {"title": "ON-CALL", "body": "Who is on now.\n", "form_token": _token(client, url)}
    assert client.post(url, again).status_code == 302

    elsewhere = make_page("Elsewhere")
    twin = make_page("On-call", parent=elsewhere)
    move = f"/p/{twin.public_id}/move/"
    asked = client.post(move, {"parent": handbook.public_id})
    html = asked.content.decode()
    assert asked.status_code == 200
    assert "A page titled “On-call” already exists under “Handbook”" in html
    assert 'name="same_title_ok"' in html
    twin.refresh_from_db()
    assert twin.parent_id == elsewhere.pk
    moved = client.post(move, {"parent": handbook.public_id, "same_title_ok": "on"})
    assert moved.status_code == 302
    twin.refresh_from_db()
    assert twin.parent_id == handbook.pk
