"""Service transactions that lose a race to another are run once more before anyone sees it."""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.db import OperationalError, transaction

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

# PostgreSQL's codes for a transaction it rolled back so that another could go on.
LOST_RACE = {"40P01": "a deadlock", "40001": "a serialization failure"}

# The pause before the second run, in seconds: long enough for the transaction that won to
# take the rows the loser let go (PostgreSQL wakes it, but a loser that comes straight back
# can take a row first and lose the same deadlock again), short beside a request's time.
RETRY_PAUSE = (0.05, 0.15)


def lost_race(exc: BaseException) -> str | None:
    """What race `exc` (a database error) says the transaction lost, if any."""
    return LOST_RACE.get(getattr(exc.__cause__, "sqlstate", None) or "")


def atomic_retried(func: Callable[P, R]) -> Callable[P, R]:
    """`transaction.atomic` for a service that another transaction can beat to a row: when
    PostgreSQL rolls it back for a deadlock or a serialization failure, it is run once more
    from the start after a short random pause (its on_commit hooks were dropped with it),
    and only a second loss is an error. Inside a caller's transaction it is plain `atomic`:
    the outermost one decides."""

    @functools.wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if transaction.get_connection().in_atomic_block:
            with transaction.atomic():
                return func(*args, **kwargs)
        try:
            with transaction.atomic():
                return func(*args, **kwargs)
        except OperationalError as exc:
            race = lost_race(exc)
            if race is None:
                raise
            logger.info("%s lost %s; running it once more", func.__qualname__, race)
        time.sleep(random.uniform(*RETRY_PAUSE))
        with transaction.atomic():
            return func(*args, **kwargs)

    return run
