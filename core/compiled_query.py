"""Queries compiled once per database connection, for what every tool call does.

Django builds and compiles a queryset afresh on each call: for a page read with its set
check that was about a millisecond, several times what PostgreSQL takes to answer it. The
SQL of such a read never changes, only its values; a `CompiledQuery` has the ORM write it
once, with a named `Slot` standing in for each value, and then runs it with the values of
each call, converting the columns as the ORM would (dates, JSON, booleans on SQLite).

On PostgreSQL they also skip the planner: Django's cursors put the values into the SQL text
on the client, so PostgreSQL plans every query afresh (for the page read, planning took
0.7 ms and running it 0.1 ms). These queries go through a cursor that sends the values
apart, which lets psycopg prepare each statement on the connection after a few runs
(`prepare_threshold`, set in config/settings.py unless QUIRE_DB_PREPARED_STATEMENTS=0).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Model, QuerySet
from django.db.models.sql import InsertQuery

Row = TypeVar("Row")


def _cursor(connection: BaseDatabaseWrapper) -> CursorWrapper:
    """A cursor for a statement run on every call: on PostgreSQL one that binds the values
    on the server, so that the statement can be prepared; elsewhere Django's own."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        raw = ServerBindingCursor(connection.connection)  # type: ignore[call-arg]
    # As Django wraps its own cursors: logged when queries are (tests count them).
    if connection.queries_logged:
        return _LoggedCursor(raw, connection)  # type: ignore[arg-type]
    return connection.make_cursor(raw)  # type: ignore[arg-type]


class _LoggedCursor(CursorDebugWrapper):
    """Logs a statement bound on the server with its values written in, as Django does
    for its own statements (it would read the SQL off the cursor, which has none)."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(self.db.ops.compose_sql(sql, params), params):
            return CursorWrapper.execute(self, sql, params)


class Slot(str):
    """A value a `CompiledQuery` takes at run time, standing in for it while the ORM writes
    the SQL. It is a string so that text fields keep it as it is; an integer must go into
    the query through an expression that passes its value on untouched."""

    name: str

    def __new__(cls, name: str) -> Slot:
        slot = super().__new__(cls, f"\x00slot:{name}\x00")
        slot.name = name
        return slot


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]  # constants, and Slots where each call's values go
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]


class CompiledQuery(Generic[Row]):
    """`build(**slots)` returns a `values_list` queryset; calling the CompiledQuery with the
    slots' values returns its rows, each made by `row(*columns)`."""

    def __init__(
        self,
        build: Callable[..., QuerySet[Any, Any]],
        slots: Sequence[str],
        row: Callable[..., Row],
    ) -> None:
        self.build = build
        self.slots = tuple(slots)
        self.row = row
        # Converters are bound to the connection that compiled them: one compilation each
        # (connections are per thread, so no two threads compile for the same one).
        self._compiled: weakref.WeakKeyDictionary[BaseDatabaseWrapper, _Compiled] = (
            weakref.WeakKeyDictionary()
        )

    def _compile(self, using: str) -> _Compiled:
        queryset = self.build(**{name: Slot(name) for name in self.slots})
        compiler = queryset.query.get_compiler(using=using)
        sql, params = compiler.as_sql()
        found = {param.name for param in params if isinstance(param, Slot)}
        missing = [name for name in self.slots if name not in found]
        if missing:
            raise ValueError(
                f"the query lost the value of {', '.join(missing)} while compiling (a field "
                "converted it); pass that value through an expression that keeps it"
            )
        columns = [selected[0] for selected in compiler.select[: compiler.col_count]]
        converters = tuple(
            (position, tuple(functions), expression)
            for position, (functions, expression) in compiler.get_converters(columns).items()
        )
        return _Compiled(sql=sql, params=tuple(params), converters=converters)

    def __call__(self, *, using: str = DEFAULT_DB_ALIAS, **values: Any) -> list[Row]:
        connection = connections[using]
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(using)
        params = [
            values[param.name] if isinstance(param, Slot) else param for param in compiled.params
        ]
        with _cursor(connection) as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        rows = []
        for fetched_row in fetched:
            columns = list(fetched_row)
            for position, functions, expression in compiled.converters:
                value = columns[position]
                for function in functions:
                    value = function(value, expression, connection)
                columns[position] = value
            rows.append(self.row(*columns))
        return rows


class CompiledInsert:
    """An INSERT of one row of `model` (its id left to the database and not read back),
    written by the ORM once per connection; each call only prepares the row's values, as
    `Model.save` would."""

    def __init__(self, model: type[Model]) -> None:
        self.model = model
        self.fields = [
            field for field in model._meta.local_concrete_fields if not field.primary_key
        ]
        self._sql: weakref.WeakKeyDictionary[BaseDatabaseWrapper, str] = weakref.WeakKeyDictionary()

    def _compile(self, instance: Model, using: str) -> str:
        query = InsertQuery(self.model)
        query.insert_values(self.fields, [instance])
        [(sql, params)] = query.get_compiler(using=using).as_sql()
        if len(params) != len(self.fields):
            raise ValueError(f"{self.model.__name__} has a field with its own placeholder")
        return str(sql)

    def __call__(self, instance: Model, *, using: str = DEFAULT_DB_ALIAS) -> None:
        connection = connections[using]
        sql = self._sql.get(connection)
        if sql is None:
            sql = self._sql[connection] = self._compile(instance, using)
        values = [
            field.get_db_prep_save(field.pre_save(instance, True), connection)
            for field in self.fields
        ]
        with _cursor(connection) as cursor:
            cursor.execute(sql, values)
