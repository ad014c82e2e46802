"""Django admin for the wiki and reviews: read-only windows; archive/restore via services."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from core.models import AuditEvent
from wiki.models import Page

pytestmark = pytest.mark.django_db

MODELS = [
    "wiki_page",
    "wiki_version",
    "wiki_attachment",
    "core_auditevent",
    "reviews_reviewersettings",
    "reviews_notification",
]


@pytest.fixture
def admin_client_for(admin_user: User, client: Client) -> Client:
    client.force_login(admin_user)
    return client


@pytest.mark.parametrize("model", MODELS)
def test_it_lists_each_model_for_a_superuser(
    admin_client_for: Client, make_page: Callable[..., Page], model: str
) -> None:
    make_page("Listed")

    response = admin_client_for.get(reverse(f"admin:{model}_changelist"))

    assert response.status_code == 200


def test_it_offers_no_way_to_edit_a_version_or_an_audit_event(admin_client_for: Client) -> None:
    assert admin_client_for.get(reverse("admin:wiki_version_add")).status_code == 403
    assert admin_client_for.get(reverse("admin:core_auditevent_add")).status_code == 403


def test_it_archives_pages_through_the_service_with_an_audit_event(
    admin_client_for: Client, make_page: Callable[..., Page], admin_user: User
) -> None:
    page = make_page("Old news")

    admin_client_for.post(
        reverse("admin:wiki_page_changelist"),
        {"action": "archive_pages", "_selected_action": [page.pk]},
    )

    page.refresh_from_db()
    assert page.archived
    assert AuditEvent.objects.filter(action="page.archive", actor_user=admin_user).exists()


def test_it_tells_a_logged_in_non_staff_user_instead_of_looping(
    reader: User, client: Client
) -> None:
    client.force_login(reader)

    response = client.get("/admin/", follow=True)

    assert [url for url, _ in response.redirect_chain] == ["/admin/login/?next=/admin/"]
    assert response.status_code == 200
    assert (
        "You are logged in as reed, which has no access to the admin." in response.content.decode()
    )


def test_it_lets_a_non_staff_user_log_in_as_an_admin_from_there(
    reader: User, admin_user: User, client: Client
) -> None:
    client.force_login(reader)

    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": "ada", "password": "correct-horse-battery", "next": "/admin/"},
    )

    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_it_sends_a_logged_in_admin_straight_on(admin_user: User, client: Client) -> None:
    client.force_login(admin_user)

    response = client.get("/admin/login/")

    assert response.status_code == 302 and response["Location"] == "/admin/"


def test_it_names_every_kind_of_row_in_plural_english(admin_client_for: Client) -> None:
    from django.contrib import admin

    plurals = {
        model._meta.label: str(model._meta.verbose_name_plural) for model in admin.site._registry
    }
    assert plurals["agents.PageSetEntry"] == "page set entries"
    assert plurals["reviews.ReviewerSettings"] == "reviewers' email settings"
    wrong = [name for name in plurals.values() if name.endswith(("ys", "ss"))]
    assert wrong == []
    index = admin_client_for.get(reverse("admin:index")).content.decode()
    assert "Page set entries" in index and "Page set entrys" not in index
