"""Login throttling: too many failed attempts for a username from one address lock it out.

Counts live in the shared counter store (Redis, else the database; see config/cache.py), in
a window that starts at the first failure and lasts QUIRE_LOGIN_WINDOW_SECONDS.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.http import HttpRequest

from config.cache import counter_hit, counter_reset, counter_value


def client_address(request: HttpRequest) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is set by the client and would let anyone reset
    # their counter by sending a new value with each attempt.
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def _key(username: str, address: str) -> str:
    digest = hashlib.sha256(f"{username.strip().lower()}\0{address}".encode()).hexdigest()
    return f"quire:login-failures:{digest}"


def is_locked_out(username: str, address: str) -> bool:
    return counter_value(_key(username, address)) >= settings.QUIRE_LOGIN_MAX_FAILURES


def record_failure(username: str, address: str) -> int:
    return counter_hit(_key(username, address), timeout=settings.QUIRE_LOGIN_WINDOW_SECONDS)


def clear_failures(username: str, address: str) -> None:
    counter_reset(_key(username, address))


def lockout_message() -> str:
    minutes = max(1, round(settings.QUIRE_LOGIN_WINDOW_SECONDS / 60))
    return (
        "Too many failed attempts to log in with this username. "
        f"Wait {minutes} minute{'s' if minutes != 1 else ''} and try again, "
        "or ask an administrator to reset your password."
    )
