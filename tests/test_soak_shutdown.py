"""The soak (what CI runs) survives a worker that is slow to stop: it is killed after the
grace period and the run goes on to its checks and report."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from bench import soak

IGNORES_SIGTERM = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)


def test_it_kills_a_process_still_running_after_the_grace_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(soak, "STOP_GRACE_SECONDS", 1)
    slow = subprocess.Popen([sys.executable, "-c", IGNORES_SIGTERM], stdout=subprocess.PIPE)
    assert slow.stdout is not None and slow.stdout.readline() == b"ready\n"
    notes: list[str] = []

    soak.stop_process(slow, "the Celery worker", notes)

    # Killed, not waited for: it ignores SIGTERM and would sleep on for two minutes.
    assert slow.poll() == -signal.SIGKILL
    assert notes == ["the Celery worker still running 1 s after SIGTERM: killed"]


def test_it_leaves_a_process_that_stops_on_sigterm_alone() -> None:
    quick = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    notes: list[str] = []
    soak.stop_process(quick, "gunicorn", notes)
    assert quick.poll() is not None and notes == []
