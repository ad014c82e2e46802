"""A reviewer chooses how review emails reach them, from the queue page."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from core.models import AuditEvent
from reviews.models import ReviewerSettings


def test_it_saves_the_reviewers_email_preference(client: Client, reviewer: User) -> None:
    client.force_login(reviewer)
    response = client.post("/reviews/settings/", {"notifications": "daily"})
    assert response.status_code == 302
    assert ReviewerSettings.objects.get(user=reviewer).notifications == "daily"
    assert AuditEvent.objects.filter(action="reviewer.notifications", actor_user=reviewer).exists()
    page = client.get("/reviews/")
    assert '<option value="daily" selected>' in page.content.decode()


def test_it_refuses_an_unknown_preference_and_keeps_the_old_one(
    client: Client, reviewer: User
) -> None:
    client.force_login(reviewer)
    response = client.post("/reviews/settings/", {"notifications": "hourly"}, follow=True)
    assert "choose one of" in response.content.decode().lower()
    assert not ReviewerSettings.objects.filter(user=reviewer).exists()


def test_it_refuses_a_reader(client: Client, reader: User) -> None:
    client.force_login(reader)
    response = client.post("/reviews/settings/", {"notifications": "off"})
    assert response.status_code == 403
    assert not ReviewerSettings.objects.filter(user=reader).exists()


def test_it_changes_a_preference_in_the_django_admin_through_the_service(
    client: Client, admin_user: User, reviewer: User
) -> None:
    row = ReviewerSettings.objects.create(user=reviewer)
    client.force_login(admin_user)
    url = f"/admin/reviews/reviewersettings/{row.pk}/change/"
    response = client.post(url, {"notifications": "off"})
    assert response.status_code == 302
    assert ReviewerSettings.objects.get(user=reviewer).notifications == "off"
    event = AuditEvent.objects.get(action="reviewer.notifications")
    assert event.actor_user == admin_user and event.data["reviewer"] == reviewer.username


def test_it_refuses_a_review_email_preference_for_someone_who_is_not_a_reviewer(
    client: Client, admin_user: User, reader: User
) -> None:
    row = ReviewerSettings.objects.create(user=reader)
    client.force_login(admin_user)
    response = client.post(
        f"/admin/reviews/reviewersettings/{row.pk}/change/", {"notifications": "daily"}, follow=True
    )
    assert "is not a reviewer" in response.content.decode()
    assert ReviewerSettings.objects.get(user=reader).notifications == "immediate"
    assert not AuditEvent.objects.filter(action="reviewer.notifications").exists()
