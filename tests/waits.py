"""How long a test waits for another process, on a machine that may be very busy.

CI once failed on a 2-core machine with a load average of 5 to 28 on two fixed waits: a
gunicorn that took more than 30 s to start and a login whose answer took more than httpx's
default 5 s. A test here waits for the thing it waits for (a server that answers, a worker that
says it is ready, an HTTP answer) and gives up only after PATIENCE seconds, or at once when the
process it waits for has died: a broken server still fails fast, and a slow machine only makes
the run slower. QUIRE_TEST_PATIENCE sets it (300 s by default).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

from tests.http_tls import TLS

T = TypeVar("T")

PATIENCE = float(os.environ.get("QUIRE_TEST_PATIENCE", "") or 300)

# For every HTTP client a test points at one of its servers: a request waits for its answer.
HTTP_TIMEOUT = httpx.Timeout(PATIENCE)

# Playwright's waits (page.set_default_timeout, expect), in milliseconds. A page the test's own
# live server renders answers in well under a minute even at load 20; a failing expectation
# then costs a minute, not PATIENCE (CI once ran out of time on many such 300 s waits).
# QUIRE_BROWSER_PATIENCE sets it (60 s by default).
BROWSER_TIMEOUT_MS = float(os.environ.get("QUIRE_BROWSER_PATIENCE", "") or 60) * 1000


def wait_until(
    condition: Callable[[], T | None],
    *,
    what: str,
    alive: Callable[[], bool] = lambda: True,
    every: float = 0.1,
) -> T:
    """Call `condition` until it returns something other than None (or False) and return
    that; fail once `alive()` turns false or after PATIENCE seconds, saying `what` it was."""
    deadline = time.monotonic() + PATIENCE
    while True:
        result = condition()
        if result is not None and result is not False:
            return result
        if not alive():
            raise AssertionError(f"{what}: the process waited for has exited")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {PATIENCE:.0f} s (QUIRE_TEST_PATIENCE)")
        time.sleep(every)


def answered(url: str) -> httpx.Response | None:
    """GET `url`, waiting as long as its answer takes; None while nothing listens there."""
    try:
        return httpx.get(url, timeout=HTTP_TIMEOUT, verify=TLS)
    except httpx.ConnectError:
        return None
