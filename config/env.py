"""Strict readers for configuration from the environment.

A bad value stops start-up with a message that names the variable, so an operator
finds the mistake in the first line of the log instead of in a traceback later.
"""

import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(name: str, default: int, *, minimum: int = 0, maximum: int = 2**31) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if not minimum <= value <= maximum:
        raise ImproperlyConfigured(f"{name}={value} is out of range ({minimum}..{maximum}).")
    return value


def env_list(name: str, default: str) -> list[str]:
    raw = os.environ.get(name, default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str = "", *, schemes: tuple[str, ...]) -> str:
    raw = env_str(name, default)
    if not raw:
        return ""
    parsed = urlparse(raw)
    if parsed.scheme not in schemes:
        allowed = ", ".join(f"{scheme}://" for scheme in schemes)
        raise ImproperlyConfigured(f"{name}={raw!r} must start with one of: {allowed}.")
    return raw
