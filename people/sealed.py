"""Encrypting the provider's refresh tokens at rest: a copy of the database alone cannot use
them. The key is derived from SECRET_KEY, so rotating SECRET_KEY makes them unreadable (each
person then signs in through the provider again)."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    digest = hashlib.sha256(f"quire-sso-refresh-token:{settings.SECRET_KEY}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode() if secret else ""


def unseal(sealed: str) -> str:
    """The secret, or "" when there is none or it was sealed under another SECRET_KEY."""
    if not sealed:
        return ""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except InvalidToken:
        return ""
