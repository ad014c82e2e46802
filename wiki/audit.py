"""Writing audit events; callers do it inside the transaction of the change they record."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from agents.models import Agent
from wiki.models import AuditEvent, Page


def audit_record(
    *,
    action: str,
    actor: User | Agent | None,
    page: Page | None = None,
    version_number: int | None = None,
    outcome: str = "ok",
    comment: str = "",
    duration_ms: int | None = None,
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    return AuditEvent.objects.create(
        action=action,
        actor_user=actor if isinstance(actor, User) else None,
        actor_agent=actor if isinstance(actor, Agent) else None,
        page=page,
        version_number=version_number,
        outcome=outcome,
        comment=comment,
        duration_ms=duration_ms,
        data=data or {},
    )
