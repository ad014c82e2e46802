"""A reviewer chooses how review emails reach them, from the queue page."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from reviews.models import ReviewerSettings
from wiki.models import AuditEvent


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
