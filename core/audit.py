"""Writing audit events; callers do it inside the transaction of the change they record."""

from __future__ import annotations

import re
from typing import Any, NotRequired, TypedDict, Unpack

from django.core.exceptions import ImproperlyConfigured
from django.db import connection, models
from django.utils import timezone

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


class AuditFields(TypedDict):
    """What an audit event records: who did what, to which page, with what outcome."""

    action: str
    actor: models.Model | SystemActor
    page: NotRequired[Any]
    version_number: NotRequired[int | None]
    outcome: NotRequired[str]
    comment: NotRequired[str]
    duration_ms: NotRequired[int | None]
    data: NotRequired[dict[str, Any] | None]


def _check_actor(actor: Any) -> None:
    if not (isinstance(actor, SystemActor) or is_person(actor) or is_agent(actor)):
        raise TypeError(f"an audit event needs a person, an agent or the system, not {actor!r}")


def audit_event(**fields: Unpack[AuditFields]) -> AuditEvent:
    """An unsaved audit event; `audit_record` writes one, `audit_record_many` a batch."""
    actor = fields["actor"]
    _check_actor(actor)
    who: Any = actor
    return AuditEvent(
        action=storable(fields["action"]),
        actor_user=who if is_person(actor) else None,
        actor_agent=who if is_agent(actor) else None,
        actor_system=actor.name if isinstance(actor, SystemActor) else "",
        page=fields.get("page"),
        version_number=fields.get("version_number"),
        outcome=storable(fields.get("outcome", "ok")),
        comment=storable(fields.get("comment", "")),
        duration_ms=fields.get("duration_ms"),
        data=storable(fields.get("data") or {}),
    )


# Every tool call writes one, so it skips `Model.save` and the model instance (signals,
# RETURNING the id, building the INSERT, setting each field): one fixed statement, its values
# prepared as save() would (tests/test_call_statements.py compares the rows).
_COLUMNS = (
    "at",
    "action",
    "actor_user_id",
    "actor_agent_id",
    "actor_system",
    "page_id",
    "version_number",
    "outcome",
    "comment",
    "duration_ms",
    "data",
)
_FIELDS = {field.attname: field for field in AuditEvent._meta.concrete_fields}
if set(_COLUMNS) != set(_FIELDS) - {"id"}:
    raise ImproperlyConfigured(
        "core.audit._COLUMNS must name every column of AuditEvent but its id: "
        f"{sorted(set(_FIELDS) - {'id'})}"
    )
_INSERT_SQL = "INSERT INTO {table} ({columns}) VALUES ({values})".format(  # noqa: S608
    table=AuditEvent._meta.db_table,
    columns=", ".join(str(_FIELDS[name].column) for name in _COLUMNS),
    values=", ".join("%s" for _ in _COLUMNS),
)


def audit_record(**fields: Unpack[AuditFields]) -> None:
    """Write one audit event (see `audit_event` for what it holds)."""
    actor = fields["actor"]
    _check_actor(actor)
    page = fields.get("page")
    values = (
        _FIELDS["at"].get_db_prep_save(timezone.now(), connection),
        storable(fields["action"]),
        actor.pk if is_person(actor) else None,  # type: ignore[union-attr]
        actor.pk if is_agent(actor) else None,  # type: ignore[union-attr]
        actor.name if isinstance(actor, SystemActor) else "",
        None if page is None else page.pk,
        fields.get("version_number"),
        storable(fields.get("outcome", "ok")),
        storable(fields.get("comment", "")),
        fields.get("duration_ms"),
        _FIELDS["data"].get_db_prep_save(storable(fields.get("data") or {}), connection),
    )
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_SQL, values)


def audit_record_many(events: list[AuditEvent]) -> None:
    """Write the events made by `audit_event` at once: a batch of changes, one INSERT."""
    AuditEvent.objects.bulk_create(events)
