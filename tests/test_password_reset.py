"""Forgot your password: Django's own reset by email, in Quire's screens, throttled like the
login, sent through the configured email backend (here a real SMTP server)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from people import services as people_services
from tests.fixtures_mail import SMTPServer

pytestmark = pytest.mark.usefixtures("throttle_cache")

NEW_PASSWORD = "a-new-long-passphrase-77"


def ask(client: Client, email: str, address: str = "10.0.0.7") -> Any:
    return client.post(reverse("people:password_reset"), {"email": email}, REMOTE_ADDR=address)


def link_in(message: Any) -> str:
    body = message.get_content()
    found = re.search(r"http://\S+/password-reset/\S+/", body)
    assert found, body
    return found.group(0)


def test_it_offers_a_forgotten_password_link_on_the_login_screen(db: Any) -> None:
    login = Client().get(reverse("login")).content.decode()
    assert f'href="{reverse("people:password_reset")}">Forgot your password?</a>' in login
    page = Client().get(reverse("people:password_reset")).content.decode()
    assert "<h1>Forgot your password?</h1>" in page and 'name="email"' in page


def test_it_emails_a_link_that_sets_a_new_password(
    reader: User, smtp_server: SMTPServer, settings: Any
) -> None:
    settings.QUIRE_BASE_URL = "http://wiki.example.test"
    client = Client()
    sent = ask(client, "REED@example.com")
    assert sent.status_code == 302 and sent["Location"] == reverse("people:password_reset_sent")
    assert "Check your email" in client.get(sent["Location"]).content.decode()
    [message] = smtp_server.wait_for(1)
    assert message["To"] == "reed@example.com"
    assert message["Subject"] == "[Quire] Choose a new password"
    link = link_in(message)
    assert link.startswith("http://wiki.example.test/password-reset/")

    path = link.removeprefix("http://wiki.example.test")
    form = client.get(path, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert done.status_code == 302 and done["Location"] == reverse("login")
    assert Client().login(username="reed", password=NEW_PASSWORD)
    # The link works once.
    again = client.get(path, follow=True).content.decode()
    assert "This link has been used or is too old" in again and "Ask for a new one" in again


def test_it_answers_the_same_for_an_unknown_address_and_sends_nothing(
    reader: User, smtp_server: SMTPServer
) -> None:
    sent = ask(Client(), "nobody@example.com")
    assert sent.status_code == 302 and sent["Location"] == reverse("people:password_reset_sent")
    assert smtp_server.messages == []


def test_it_lets_an_invited_person_who_lost_the_invitation_choose_a_password(
    settings: Any,
    admin_user: User,
    smtp_server: SMTPServer,
    eager_tasks: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        invited = people_services.person_invite(actor=admin_user, email="ivy@example.com")
    smtp_server.wait_for(1)  # the invitation, lost
    assert not invited.has_usable_password()
    ask(Client(), "ivy@example.com")
    [_, message] = smtp_server.wait_for(2)
    client = Client()
    form = client.get(link_in(message).removeprefix(settings.QUIRE_BASE_URL), follow=True)
    client.post(
        form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert Client().login(username=invited.username, password=NEW_PASSWORD)


def test_it_throttles_requests_like_the_login(
    reader: User, smtp_server: SMTPServer, settings: Any
) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert ask(Client(), "reed@example.com").status_code == 302
    refused = ask(Client(), "reed@example.com")
    assert refused.status_code == 429
    assert "Too many password reset emails" in refused.content.decode()
    assert len(smtp_server.wait_for(3)) == 3
    # Another address is counted on its own; asking for links never locks the login.
    assert ask(Client(), "reed@example.com", address="10.0.0.8").status_code == 302
    assert (
        Client()
        .post(
            reverse("login"),
            {"username": "reed", "password": "correct-horse-battery"},
            REMOTE_ADDR="10.0.0.7",
        )
        .status_code
        == 302
    )


def test_it_offers_no_reset_where_people_sign_in_through_the_provider_only(
    db: Any, settings: Any
) -> None:
    settings.QUIRE_LOCAL_PASSWORDS = False
    assert Client().get(reverse("people:password_reset")).status_code == 404
