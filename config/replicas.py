"""Reads from PostgreSQL streaming replicas (DATABASE_REPLICA_URL), writes to the primary.

A request that only reads (a web or REST GET, an MCP read tool) reads from a replica; every
write goes to the primary, and so does every read of a request once it has written, every
read inside a transaction, and the tables of credentials, sessions and counters. Whoever
wrote (a browser, a REST token, an agent) reads the primary for `pin_seconds()` after, so a
reviewer who approves, or an agent that proposes, never sees the world before its own write.

A replica is checked at most every CHECK_SECONDS in each process: one that is down, is no
longer a standby, or lags past QUIRE_REPLICA_MAX_LAG_SECONDS is skipped (a log line when it
goes and when it comes back), and a read that fails on it is run again on the primary.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How often a process checks a usable replica's lag; one that was skipped, less often.
CHECK_SECONDS = 2.0
RECHECK_SKIPPED_SECONDS = 10.0
# Tables read on the primary whatever the request: a revoked credential or an ended session
# stops at once, and counters are read to be incremented.
PRIMARY_APP_LABELS = frozenset({"config", "django_cache", "sessions", "oauth2_provider"})
PRIMARY_MODELS = frozenset({"reviews.apitoken", "connect.grant"})
PIN_COOKIE = "quire_primary_until"


def aliases() -> list[str]:
    """The replicas' database aliases, in DATABASE_REPLICA_URL's order."""
    return list(getattr(settings, "QUIRE_REPLICA_ALIASES", []))


def configured() -> bool:
    return bool(aliases())


def pin_seconds() -> float:
    """How long a writer reads the primary: a replica within the lag bound has its write by
    then, even if it fell behind just after its last check."""
    return settings.QUIRE_REPLICA_MAX_LAG_SECONDS + CHECK_SECONDS


# --- which database a read goes to --------------------------------------------------------


@dataclass
class Reads:
    """The reads of one request (or tool call) that may go to replica `alias`."""

    alias: str
    wrote: bool = False


_reads: ContextVar[Reads | None] = ContextVar("quire_replica_reads", default=None)


class ReplicaRouter:
    """Django's database router: see the module's docstring."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str:
        if _kept_on_primary(model):
            return DEFAULT_DB_ALIAS
        return reading_alias() or DEFAULT_DB_ALIAS

    def db_for_write(self, model: type[Any], **hints: Any) -> str:
        # Django also asks this when a related object is merely assigned: what the request
        # wrote is seen in its SQL instead (`_NoteWrites`).
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # every alias holds the same rows

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


def _kept_on_primary(model: type[Any]) -> bool:
    return model._meta.app_label in PRIMARY_APP_LABELS or model._meta.label_lower in PRIMARY_MODELS


def reading_alias() -> str | None:
    """The replica the current reads go to, or None (the primary)."""
    reads = _reads.get()
    if reads is None or reads.wrote or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return None
    return reads.alias


def read_connection() -> BaseDatabaseWrapper:
    """The connection for a read in plain SQL, which the router does not see: the replica's
    when the current reads go to one, the primary's otherwise."""
    return connections[reading_alias() or DEFAULT_DB_ALIAS]


@contextmanager
def reads_from(alias: str | None) -> Iterator[None]:
    """Route this block's reads to replica `alias` (None: the primary) until it writes."""
    reads = None if alias is None else Reads(alias)
    token = _reads.set(reads)
    try:
        if reads is None:
            yield
        else:
            with connections[DEFAULT_DB_ALIAS].execute_wrapper(_NoteWrites(reads)):
                yield
    finally:
        _reads.reset(token)


# What a request writes there says nothing about what it reads next.
_UNRELATED_TABLES = ("quire_cache", "quire_counter", "django_session", "reviews_apitoken")


class _NoteWrites:
    """Once the block writes to the primary, its later reads go there too."""

    def __init__(self, reads: Reads) -> None:
        self.reads = reads

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        if (
            not self.reads.wrote
            and sql.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE")
            and not any(table in sql for table in _UNRELATED_TABLES)
        ):
            self.reads.wrote = True
        return execute(sql, params, many, context)


def run_reading(run: Callable[[], T], *, pin: str | None) -> T:
    """`run()` with its reads on a usable replica, unless `pin`'s owner wrote lately; if the
    replica fails under it, `run()` again on the primary (reads may be repeated; the writes
    a read makes, its audit row and read record, are written after its reads)."""
    alias = None if pin is not None and pinned(pin) else usable_replica()
    if alias is None:
        return run()
    try:
        with reads_from(alias):
            return run()
    except (OperationalError, InterfaceError) as exc:
        if not replica_failed(alias, exc):
            raise
    return run()


def replica_failed(alias: str, exc: BaseException) -> bool:
    """Whether `exc`, raised while reading from `alias`, came from the replica (now skipped)."""
    if _check(alias):
        return False
    logger.warning("A read failed on database replica %s (%s): read on the primary", alias, exc)
    return True


# --- the replicas' health ------------------------------------------------------------------


@dataclass
class _Health:
    usable: bool = True
    checked_at: float = float("-inf")
    why: str = ""


_health: dict[str, _Health] = {}
_health_lock = threading.Lock()


def usable_replica() -> str | None:
    """A replica that is up and within the lag bound, at random; None when there is none."""
    usable = [alias for alias in aliases() if _usable(alias)]
    return random.choice(usable) if usable else None


def _usable(alias: str) -> bool:
    with _health_lock:
        health = _health.setdefault(alias, _Health())
        due = CHECK_SECONDS if health.usable else RECHECK_SKIPPED_SECONDS
        if time.monotonic() - health.checked_at < due:
            return health.usable
    return _check(alias)


_LAG_SQL = """
SELECT pg_is_in_recovery(),
       coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, false),
       extract(epoch FROM now() - pg_last_xact_replay_timestamp())
"""


def _check(alias: str) -> bool:
    """Ask the replica how far behind the primary it is; note and log a change of state."""
    why = _why_unusable(alias)
    with _health_lock:
        health = _health.setdefault(alias, _Health())
        was_usable, health.usable, health.why = health.usable, why == "", why
        health.checked_at = time.monotonic()
    if was_usable and why:
        logger.warning("Database replica %s skipped: %s; reads go to the primary", alias, why)
    elif not was_usable and not why:
        logger.warning("Database replica %s is back: reads go to it again", alias)
    return not why


def _why_unusable(alias: str) -> str:
    """Why the replica cannot serve reads now, or '' when it can."""
    bound = settings.QUIRE_REPLICA_MAX_LAG_SECONDS
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            primary_lsn = cursor.fetchone()[0]
        with connections[alias].cursor() as cursor:
            cursor.execute(_LAG_SQL, [primary_lsn])
            standby, caught_up, seconds = cursor.fetchone()
    except (OperationalError, InterfaceError) as exc:
        connections[alias].close()
        return f"unreachable ({str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r})"
    if not standby:
        return "it is not a standby (promoted?), so it may not hold the primary's writes"
    if caught_up:
        return ""
    # Behind the primary: by the age of the last transaction it replayed (an overestimate
    # after a quiet spell on the primary, so the replica is skipped early, never late).
    if seconds is None or float(seconds) > bound:
        lag = "an unknown time" if seconds is None else f"{float(seconds):.1f} s"
        return f"it lags {lag}, past QUIRE_REPLICA_MAX_LAG_SECONDS={bound}"
    return ""


def forget_health() -> None:
    """Check every replica again at its next use (tests)."""
    with _health_lock:
        _health.clear()


# --- pins: whoever wrote reads the primary for a while -------------------------------------


_local_pins: dict[str, float] = {}


def pin(key: str) -> None:
    """`key`'s owner wrote: its reads go to the primary for `pin_seconds()`."""
    until = time.time() + pin_seconds()
    _local_pins[key] = until
    if settings.REDIS_URL:
        caches["default"].set(f"quire:primary-pin:{key}", until, timeout=int(pin_seconds()) + 1)
    if len(_local_pins) > 10_000:
        now = time.time()
        for stale in [k for k, moment in _local_pins.items() if moment < now]:
            _local_pins.pop(stale, None)


def pinned(key: str) -> bool:
    """Whether `key`'s owner wrote within `pin_seconds()` (in Redis: in any process)."""
    now = time.time()
    if _local_pins.get(key, 0.0) > now:
        return True
    if settings.REDIS_URL:
        until = caches["default"].get(f"quire:primary-pin:{key}")
        return isinstance(until, int | float) and until > now
    return False


def agent_pin(agent_id: int) -> str:
    return f"agent:{agent_id}"


def credential_pin(authorization: str) -> str:
    """The pin of a REST client, by its Authorization header (never kept as it is)."""
    return "auth:" + hashlib.sha256(authorization.encode()).hexdigest()[:32]
