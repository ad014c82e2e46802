"""What Quire adds to django-oauth-toolkit's models: authorization codes stored hashed, and
connections, each the grant one person gave one client to act as one agent."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from django.conf import settings
from django.db import models
from oauth2_provider.models import AbstractGrant
from oauth2_provider.settings import oauth2_settings


def code_digest(code: str) -> str:
    return "sha256:" + hashlib.sha256(code.encode("utf-8")).hexdigest()


class HashedCodeField(models.CharField):  # type: ignore[type-arg]
    """Stores the SHA-256 of the value; a lookup by the raw value is hashed the same way, so
    django-oauth-toolkit's `Grant.objects.get(code=code)` works unchanged on hashed rows."""

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        return None if value is None else code_digest(value)


class Grant(AbstractGrant):
    """An authorization code (60 seconds, used once), with the agent the person picked."""

    code = HashedCodeField(max_length=255, unique=True, verbose_name="code")
    agent = models.ForeignKey(
        "agents.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta(AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class Connection(models.Model):
    """A client allowed to act as an agent: one chain of rotating refresh tokens (`family`).

    It ends when someone disconnects it, the agent is revoked or rotated, the person who
    allowed it is deactivated, or a used refresh token comes back; its tokens end with it.
    """

    application = models.ForeignKey(
        oauth2_settings.APPLICATION_MODEL,
        on_delete=models.CASCADE,
        related_name="quire_connections",
    )
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="connections")
    allowed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_connections"
    )
    # The token_family of every refresh token issued under this connection.
    family = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    # The SHA-256 of the code it was opened with: a code that comes back after it was used
    # ends the connection (RFC 6749 4.1.2: the tokens issued from it are revoked).
    code = models.CharField(max_length=80, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_reason = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "ended_at"])]

    def __str__(self) -> str:
        return f"{self.application} as {self.agent_id}"

    @property
    def is_live(self) -> bool:
        return self.ended_at is None
