"""Django's PostgreSQL backend, with the parameter limit of server-side binding.

Bound on the server (`server_side_binding`, see config/settings.py), one statement takes at
most 65,535 parameters, and Django 5.2's bulk_create and bulk_update do not know it (Django
6.1 does: ticket #36822): a bulk import of a large folder would fail. This backend splits
them into batches that fit.
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


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
