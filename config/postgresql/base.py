"""Django's PostgreSQL backend, with the parameter limit of server-side binding, a flush
that empties small tables quickly, and a health check that costs no round trip.

Bound on the server (`server_side_binding`, see config/settings.py), one statement takes at
most 65,535 parameters, and Django 5.2's bulk_create and bulk_update do not know it (Django
6.1 does: ticket #36822): a bulk import of a large folder would fail. This backend splits
them into batches that fit.

Django's TransactionTestCase (pytest-django's `transactional_db` and `live_server`) empties
every table after each test with `flush`, which on PostgreSQL is one TRUNCATE of all of
them: new files for each of Quire's 38 tables and their indexes, 230 to 370 ms on the idle
machine here, for tables holding a few rows; 350 tests did it twice a run. That flush (no
sequence reset, no cascade) deletes the rows instead, about 20 ms. `manage.py flush`, which
resets the sequences, still truncates.

With CONN_HEALTH_CHECKS (config/settings.py), Django checks a kept connection before each
request uses it, and its check is a `SELECT 1`: a round trip on every request, about a
tenth of a cheap tool call's own SQL time. A server that ends a connection (a restart, a
`pg_terminate_backend`, a crash) sends it a message or closes its socket, and either makes the
socket readable; an idle connection in autocommit is sent nothing else unasked (Quire does
not LISTEN). So the check here is a look at the socket: nothing to read and the connection
idle means usable; anything else, and Django's `SELECT 1` decides.
"""

from __future__ import annotations

import select
from collections.abc import Sequence
from typing import Any

import psycopg
from django.db.backends.postgresql import base, operations
from psycopg.adapt import Dumper
from psycopg.postgres import types as postgres_types
from psycopg.pq import TransactionStatus

from config.postgresql.types import BigintArray, IntArray, IntegerArray, SmallintArray

MAX_PARAMETERS = 65_535


class DatabaseOperations(operations.DatabaseOperations):
    def bulk_batch_size(self, fields: Sequence[Any], objs: Sequence[Any]) -> int:
        if not fields:
            return len(objs)
        # bulk_update spends up to two parameters per field and object (CASE WHEN pk THEN).
        return max(1, MAX_PARAMETERS // (2 * len(fields)))

    def sql_flush(
        self,
        style: Any,
        tables: Sequence[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or allow_cascade:
            return list(
                super().sql_flush(
                    style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
                )
            )
        # Every foreign key is DEFERRABLE INITIALLY DEFERRED (Django makes them so, and the
        # raw-SQL migrations add none), and flush runs in one transaction: checked at commit,
        # when every table is empty, so the order of the tables does not matter.
        return [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
        ]


def has_input(fileno: int) -> bool:
    """Whether the socket has something to read (or was closed) right now."""
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


def _array_dumper(kind: type[IntArray]) -> type[Dumper]:
    class IntArrayDumper(Dumper):
        oid = postgres_types[kind.element].array_oid

        def dump(self, obj: IntArray) -> bytes:
            return obj.encode()

    return IntArrayDumper


ARRAY_DUMPERS = {kind: _array_dumper(kind) for kind in (SmallintArray, IntegerArray, BigintArray)}


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        for kind, dumper in ARRAY_DUMPERS.items():
            connection.adapters.register_dumper(kind, dumper)
        return connection

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        try:
            quiet = connection.info.transaction_status == TransactionStatus.IDLE and not has_input(
                connection.fileno()
            )
        except (OSError, ValueError, psycopg.Error):
            return False
        return quiet or bool(super().is_usable())
