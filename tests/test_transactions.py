"""A service transaction that lost a deadlock is run once more, after a pause that lets the
winner take the rows first (a loser that came straight back could take a row before the
woken winner and lose the same deadlock again: CI saw it on PostgreSQL)."""

from __future__ import annotations

import time

import pytest
from django.db import OperationalError

from core import transactions
from core.transactions import RETRY_PAUSE, atomic_retried

# Outside a test transaction: inside a caller's transaction a service is plain `atomic`.
pytestmark = pytest.mark.django_db(transaction=True)


class Deadlock(Exception):
    sqlstate = "40P01"


def lost_a_deadlock() -> OperationalError:
    error = OperationalError("deadlock detected")
    error.__cause__ = Deadlock()
    return error


def test_it_pauses_before_running_a_transaction_that_lost_a_deadlock_again() -> None:
    runs: list[float] = []

    @atomic_retried
    def service() -> str:
        runs.append(time.monotonic())
        if len(runs) == 1:
            raise lost_a_deadlock()
        return "done"

    assert service() == "done"
    assert len(runs) == 2
    assert runs[1] - runs[0] >= RETRY_PAUSE[0]


def test_it_answers_a_second_loss_and_leaves_other_errors_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transactions, "RETRY_PAUSE", (0.0, 0.0))
    runs: list[int] = []

    @atomic_retried
    def always_loses() -> None:
        runs.append(1)
        raise lost_a_deadlock()

    with pytest.raises(OperationalError):
        always_loses()
    assert len(runs) == 2

    @atomic_retried
    def fails_otherwise() -> None:
        runs.append(1)
        raise OperationalError("disk full")

    with pytest.raises(OperationalError, match="disk full"):
        fails_otherwise()
    assert len(runs) == 3
