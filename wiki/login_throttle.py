"""Login throttling: too many failed attempts for a username from one address lock it out.

Counts live in Django's cache (Redis in production), in a window that starts at the first
failure and lasts QUIRE_LOGIN_WINDOW_SECONDS.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is set by the client and would let anyone reset
    # their counter by sending a new value with each attempt.
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def _key(username: str, address: str) -> str:
    digest = hashlib.sha256(f"{username.strip().lower()}\0{address}".encode()).hexdigest()
    return f"quire:login-failures:{digest}"


def is_locked_out(username: str, address: str) -> bool:
    failures = cache.get(_key(username, address), 0)
    return int(failures) >= settings.QUIRE_LOGIN_MAX_FAILURES


def record_failure(username: str, address: str) -> int:
    key = _key(username, address)
    if cache.add(key, 1, timeout=settings.QUIRE_LOGIN_WINDOW_SECONDS):
        return 1
    try:
        return int(cache.incr(key))
    except ValueError:
        # The window ran out between add and incr: this failure opens a new one.
        cache.set(key, 1, timeout=settings.QUIRE_LOGIN_WINDOW_SECONDS)
        return 1


def clear_failures(username: str, address: str) -> None:
    cache.delete(_key(username, address))


def lockout_message() -> str:
    minutes = max(1, round(settings.QUIRE_LOGIN_WINDOW_SECONDS / 60))
    return (
        "Too many failed attempts to log in with this username. "
        f"Wait {minutes} minute{'s' if minutes != 1 else ''} and try again, "
        "or ask an administrator to reset your password."
    )
