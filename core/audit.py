"""Writing audit events; callers do it inside the transaction of the change they record."""

from __future__ import annotations

import re
from typing import Any

from django.db import models

from core.actors import SystemActor, is_agent, is_person
from core.models import AuditEvent

# What a call refused for holding it must still be recordable: neither database stores NUL
# in text (PostgreSQL refuses it in jsonb too) nor a lone surrogate.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: Any) -> Any:
    """`value` with every NUL and lone surrogate in its strings (keys too) shown as U+FFFD."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable(item) for item in value]
    return value


def audit_event(
    *,
    action: str,
    actor: models.Model | SystemActor,
    page: Any = None,
    version_number: int | None = None,
    outcome: str = "ok",
    comment: str = "",
    duration_ms: int | None = None,
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    """An unsaved audit event; `audit_record` writes one, `audit_record_many` a batch."""
    if not (isinstance(actor, SystemActor) or is_person(actor) or is_agent(actor)):
        raise TypeError(f"an audit event needs a person, an agent or the system, not {actor!r}")
    who: Any = actor
    return AuditEvent(
        action=storable(action),
        actor_user=who if is_person(actor) else None,
        actor_agent=who if is_agent(actor) else None,
        actor_system=actor.name if isinstance(actor, SystemActor) else "",
        page=page,
        version_number=version_number,
        outcome=storable(outcome),
        comment=storable(comment),
        duration_ms=duration_ms,
        data=storable(data or {}),
    )


def audit_record(
    *,
    action: str,
    actor: models.Model | SystemActor,
    page: Any = None,
    version_number: int | None = None,
    outcome: str = "ok",
    comment: str = "",
    duration_ms: int | None = None,
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    """Write one audit event (see `audit_event` for what it holds)."""
    event = audit_event(
        action=action,
        actor=actor,
        page=page,
        version_number=version_number,
        outcome=outcome,
        comment=comment,
        duration_ms=duration_ms,
        data=data,
    )
    event.save(force_insert=True)
    return event


def audit_record_many(events: list[AuditEvent]) -> None:
    """Write the events made by `audit_event` at once: a batch of changes, one INSERT."""
    AuditEvent.objects.bulk_create(events)
