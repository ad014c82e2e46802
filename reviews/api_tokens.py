"""REST API keys: created hashed (shown once), and the DRF authentication that checks them.

`Authorization: Token <key>` is looked up by the key's SHA-256, as agent tokens are, so a
copy of the database holds no usable key.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from core.actors import Operator
from core.audit import audit_record
from core.tokens import token_hash
from reviews.models import ApiToken

KEY_PREFIX = "qk_"
PREFIX_CHARS = 10
LAST_USED_RESOLUTION = timedelta(minutes=1)


@transaction.atomic
def api_token_create(*, actor: Operator, user: User) -> str:
    """A new key for `user`; returns the key itself, which is never stored."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, prefix=key[:PREFIX_CHARS], key_hash=token_hash(key))
    audit_record(
        action="api_token.create",
        actor=actor,
        data={"user": user.get_username(), "prefix": token.prefix},
    )
    return key


def api_token_for_key(key: str) -> ApiToken | None:
    if not key:
        return None
    return ApiToken.objects.select_related("user").filter(key_hash=token_hash(key)).first()


class HashedTokenAuthentication(TokenAuthentication):
    """DRF's `Token <key>` header, checked against the stored hashes."""

    def authenticate_credentials(self, key: str) -> tuple[User, ApiToken]:
        token = api_token_for_key(key)
        if token is None or not token.user.is_active:
            raise AuthenticationFailed(
                "Invalid token: it may have been revoked. Create a new one with "
                "'python manage.py create_api_token USERNAME'."
            )
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token
