"""Django's PostgreSQL backend, with the parameter limit of server-side binding, and a flush
that empties small tables quickly.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.backends.postgresql import base, operations

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


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
