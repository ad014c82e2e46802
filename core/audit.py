"""Writing audit events; callers do it inside the transaction of the change they record."""

from __future__ import annotations

import re
from typing import Any, NotRequired, TypedDict, Unpack

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


def _row(fields: AuditFields) -> dict[str, Any]:
    """The event's columns (by attribute name, the time aside) from what the caller gave."""
    actor = fields["actor"]
    if not (isinstance(actor, SystemActor) or is_person(actor) or is_agent(actor)):
        raise TypeError(f"an audit event needs a person, an agent or the system, not {actor!r}")
    who: Any = actor
    page = fields.get("page")
    return {
        "action": storable(fields["action"]),
        "actor_user_id": who.pk if is_person(actor) else None,
        "actor_agent_id": who.pk if is_agent(actor) else None,
        "actor_system": actor.name if isinstance(actor, SystemActor) else "",
        "page_id": None if page is None else page.pk,
        "version_number": fields.get("version_number"),
        "outcome": storable(fields.get("outcome", "ok")),
        "comment": storable(fields.get("comment", "")),
        "duration_ms": fields.get("duration_ms"),
        "data": storable(fields.get("data") or {}),
    }


def audit_event(**fields: Unpack[AuditFields]) -> AuditEvent:
    """An unsaved audit event; `audit_record` writes one, `audit_record_many` a batch."""
    return AuditEvent(**_row(fields))


# Every tool call writes one, so it skips `Model.save` and the model instance (signals,
# RETURNING the id, building the INSERT, setting each field): one fixed statement, its values
# prepared as save() would (tests/test_call_statements.py compares the rows).
_FIELDS = [field for field in AuditEvent._meta.concrete_fields if not field.primary_key]
_INSERT_SQL = "INSERT INTO {table} ({columns}) VALUES ({values})".format(  # noqa: S608
    table=AuditEvent._meta.db_table,
    columns=", ".join(str(field.column) for field in _FIELDS),
    values=", ".join("%s" for _ in _FIELDS),
)


# A statement (an INSERT or UPDATE without RETURNING) and its values, written with an event.
Along = tuple[str, list[Any]]


def audit_record(*, along: Along | None = None, **fields: Unpack[AuditFields]) -> None:
    """Write one audit event (see `audit_event` for what it holds); with `along`, that
    statement too: on PostgreSQL as one statement (`along` a CTE of the INSERT), so a read
    that records something pays one round trip and one durable commit for both. SQLite has
    no such CTE; its commits in WAL mode wait for no disk flush: two statements there."""
    row = _row(fields)
    row["at"] = timezone.now()
    values = [field.get_db_prep_save(row[field.attname], connection) for field in _FIELDS]
    statements = [(_INSERT_SQL, values)]
    if along is not None:
        postgresql = connection.vendor == "postgresql"
        statements = [_along(along, values)] if postgresql else [along, *statements]
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)


def _along(along: Along, values: list[Any]) -> Along:
    sql, params = along
    return f"WITH along_event AS ({sql}) {_INSERT_SQL}", [*params, *values]


def audit_record_many(events: list[AuditEvent]) -> None:
    """Write the events made by `audit_event` at once: a batch of changes, one INSERT."""
    AuditEvent.objects.bulk_create(events)
