"""Login throttling that slows password guessing and spraying without letting anyone lock a
user out of a browser they have logged in from before.

Failures are counted in the shared counter store (Redis, else the database; config/cache.py)
over QUIRE_LOGIN_WINDOW_SECONDS, under three keys for a browser Quire does not know:
  - username + address: QUIRE_LOGIN_MAX_FAILURES (guessing one account's password),
  - address alone: QUIRE_LOGIN_ADDRESS_MAX_FAILURES (spraying one password over many names),
  - username alone: QUIRE_LOGIN_USER_MAX_FAILURES (guessing from many addresses).
A browser that logged in as a user before carries a signed device cookie for that user; it
is counted on its own (QUIRE_LOGIN_MAX_FAILURES) and the other three never lock it, so a
stranger behind the same proxy cannot lock that user out.

Requests for a password reset email are counted the same way, every one of them (each sends
an email), under keys of their own (`purpose="reset"`, the email address as the username),
so asking for links never locks anyone out of logging in.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from config.cache import counter_hit, counter_reset, counter_value

DEVICE_COOKIE = "quire_device"
DEVICE_SALT = "quire.login-throttle.device"
DEVICE_MAX_AGE = 365 * 24 * 3600


def client_address(request: HttpRequest) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is set by the client and would let anyone reset
    # their counter by sending a new value with each attempt.
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def _normal(username: str) -> str:
    return username.strip().lower()


def _key(*parts: str) -> str:
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return f"quire:login-failures:{digest}"


@dataclass(frozen=True)
class LoginAttempt:
    username: str
    address: str
    # Set when the browser logged in as this username before (its device cookie).
    device: str | None
    # "login", or "reset" for a request for a password reset email (keys of its own).
    purpose: str = "login"

    @classmethod
    def from_request(
        cls, request: HttpRequest, username: str, *, purpose: str = "login"
    ) -> LoginAttempt:
        return cls(
            username=_normal(username),
            address=client_address(request),
            device=_known_device(request, _normal(username)) if purpose == "login" else None,
            purpose=purpose,
        )

    def key(self, *parts: str) -> str:
        return _key(*parts) if self.purpose == "login" else _key(self.purpose, *parts)

    def limits(self) -> list[tuple[str, int]]:
        if self.device is not None:
            return [
                (self.key("device", self.username, self.device), settings.QUIRE_LOGIN_MAX_FAILURES)
            ]
        return [
            (
                self.key("user-address", self.username, self.address),
                settings.QUIRE_LOGIN_MAX_FAILURES,
            ),
            (self.key("address", self.address), settings.QUIRE_LOGIN_ADDRESS_MAX_FAILURES),
            (self.key("user", self.username), settings.QUIRE_LOGIN_USER_MAX_FAILURES),
        ]


def _known_device(request: HttpRequest, username: str) -> str | None:
    cookie = request.COOKIES.get(DEVICE_COOKIE)
    if not cookie:
        return None
    try:
        value = signing.loads(cookie, salt=DEVICE_SALT, max_age=DEVICE_MAX_AGE)
    except signing.BadSignature:
        return None
    if not isinstance(value, dict) or value.get("u") != username:
        return None
    return str(value.get("d", ""))


def is_locked_out(attempt: LoginAttempt) -> bool:
    return any(counter_value(key) >= limit for key, limit in attempt.limits())


def record_failure(attempt: LoginAttempt) -> None:
    for key, _ in attempt.limits():
        counter_hit(key, timeout=settings.QUIRE_LOGIN_WINDOW_SECONDS)


def clear_failures(attempt: LoginAttempt) -> None:
    # The address counter stays: a spray must not be reset by logging in to an own account.
    counter_reset(attempt.key("user-address", attempt.username, attempt.address))
    counter_reset(attempt.key("user", attempt.username))
    if attempt.device is not None:
        counter_reset(attempt.key("device", attempt.username, attempt.device))


def remember_device(response: HttpResponse, request: HttpRequest, username: str) -> None:
    """Mark this browser as one `username` logged in from (a signed, HttpOnly cookie)."""
    device = secrets.token_hex(8)
    response.set_cookie(
        DEVICE_COOKIE,
        signing.dumps({"u": _normal(username), "d": device}, salt=DEVICE_SALT),
        max_age=DEVICE_MAX_AGE,
        httponly=True,
        secure=settings.SESSION_COOKIE_SECURE,
        samesite="Lax",
    )


def lockout_message() -> str:
    minutes = max(1, round(settings.QUIRE_LOGIN_WINDOW_SECONDS / 60))
    return (
        "Too many failed attempts to log in with this username. "
        f"Wait {minutes} minute{'s' if minutes != 1 else ''} and try again, "
        "or ask an administrator to reset your password."
    )


def reset_lockout_message() -> str:
    minutes = max(1, round(settings.QUIRE_LOGIN_WINDOW_SECONDS / 60))
    return (
        "Too many password reset emails were asked for from here or for this address. "
        f"Wait {minutes} minute{'s' if minutes != 1 else ''} and ask again (a link already "
        f"sent works for {settings.PASSWORD_RESET_TIMEOUT // 3600} hours), or ask an "
        "administrator."
    )
