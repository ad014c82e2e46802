"""Logging in and out of the web UI, and login throttling."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher, identify_hasher
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Response

# Login itself runs on production's password hasher; every other test uses a fast one.
pytestmark = pytest.mark.usefixtures("real_password_hasher", "throttle_cache")

PASSWORD = "correct-horse-battery"


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1") -> Response:
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_it_logs_in_with_the_right_password(reader: User) -> None:
    client = Client()
    response = _login(client, "reed", PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == reverse("wiki:home")
    assert client.get(reverse("wiki:home")).status_code == 200


def test_it_hashes_and_checks_passwords_with_productions_hasher(reader: User) -> None:
    """Every other test hashes with MD5 (tests/conftest.py); login runs on the real one."""
    hasher = identify_hasher(reader.password)
    assert hasher.algorithm == "pbkdf2_sha256"
    assert hasher.decode(reader.password)["iterations"] == PBKDF2PasswordHasher.iterations
    assert PBKDF2PasswordHasher.iterations >= 1_000_000
    assert _login(Client(), "reed", PASSWORD).status_code == 302


def test_it_sends_anonymous_visitors_to_the_login_page(db: object) -> None:
    response = Client().get(reverse("wiki:home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_it_shows_a_clear_error_for_a_wrong_password(reader: User) -> None:
    response = _login(Client(), "reed", "wrong")
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content
    assert "_auth_user_id" not in response.wsgi_request.session


def test_it_refuses_even_the_right_password_after_too_many_failures(
    reader: User, settings: Any
) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 3
    client = Client()
    for _ in range(3):
        assert _login(client, "reed", "wrong").status_code == 200
    response = _login(client, "reed", PASSWORD)
    assert response.status_code == 429
    assert b"Too many failed attempts" in response.content
    assert "_auth_user_id" not in client.session


def test_it_counts_failures_per_username_and_address(
    reader: User, editor: User, settings: Any
) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 2
    for _ in range(2):
        _login(Client(), "reed", "wrong", address="10.0.0.1")
    assert _login(Client(), "reed", PASSWORD, address="10.0.0.1").status_code == 429
    assert _login(Client(), "reed", PASSWORD, address="10.0.0.2").status_code == 302
    assert _login(Client(), "edna", PASSWORD, address="10.0.0.1").status_code == 302


def test_it_forgets_failures_after_a_successful_login(reader: User, settings: Any) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 3
    for _ in range(2):
        _login(Client(), "reed", "wrong")
    assert _login(Client(), "reed", PASSWORD).status_code == 302
    for _ in range(2):
        _login(Client(), "reed", "wrong")
    assert _login(Client(), "reed", PASSWORD).status_code == 302


def test_it_logs_out_with_a_post(reader: User) -> None:
    client = Client()
    client.force_login(reader)
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert client.get(reverse("wiki:home")).status_code == 302


def test_it_stops_one_address_spraying_a_password_over_many_usernames(
    make_user: Any, settings: Any
) -> None:
    settings.QUIRE_LOGIN_ADDRESS_MAX_FAILURES = 3
    for name in ("ann", "bob", "cy", "dee"):
        make_user(name)
    for name in ("ann", "bob", "cy"):
        assert _login(Client(), name, "Summer2026!", address="10.0.0.9").status_code == 200

    assert _login(Client(), "dee", PASSWORD, address="10.0.0.9").status_code == 429
    assert _login(Client(), "dee", PASSWORD, address="10.0.0.10").status_code == 302


def test_it_stops_guessing_one_password_from_many_addresses(reader: User, settings: Any) -> None:
    settings.QUIRE_LOGIN_USER_MAX_FAILURES = 3
    for n in range(3):
        _login(Client(), "reed", "wrong", address=f"10.0.1.{n}")

    assert _login(Client(), "reed", PASSWORD, address="10.0.1.99").status_code == 429


def test_it_never_lets_a_stranger_behind_the_same_proxy_lock_a_user_out(
    reader: User, settings: Any
) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 3
    proxy = "10.0.0.1"
    users_browser = Client()
    assert _login(users_browser, "reed", PASSWORD, address=proxy).status_code == 302
    users_browser.post(reverse("logout"))
    stranger = Client()
    for _ in range(5):
        _login(stranger, "reed", "wrong", address=proxy)

    assert _login(stranger, "reed", PASSWORD, address=proxy).status_code == 429
    assert _login(users_browser, "reed", PASSWORD, address=proxy).status_code == 302


def test_it_ignores_a_device_cookie_made_for_another_user(
    reader: User, editor: User, settings: Any
) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 2
    browser = Client()
    assert _login(browser, "edna", PASSWORD).status_code == 302
    browser.post(reverse("logout"))
    for _ in range(2):
        _login(browser, "reed", "wrong")

    assert _login(browser, "reed", PASSWORD).status_code == 429
