"""QUIRE_SERVER_TIMING: each response says the CPU and wall time its worker spent on it."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import pytest

from tests.fixtures_servers import QuireServer
from tests.waits import HTTP_TIMEOUT

pytestmark = pytest.mark.django_db(transaction=True)

TIMING = re.compile(r"^cpu;dur=(\d+\.\d{3}), app;dur=(\d+\.\d{3})$")


def test_it_reports_the_workers_cpu_and_wall_time_only_when_asked(
    quire_servers: Callable[..., QuireServer],
) -> None:
    timed = quire_servers(env={"QUIRE_SERVER_TIMING": "1"})
    plain = quire_servers()

    answer = httpx.get(timed.url + "/healthz", timeout=HTTP_TIMEOUT)
    untimed = httpx.get(plain.url + "/healthz", timeout=HTTP_TIMEOUT)

    found = TIMING.match(answer.headers["Server-Timing"])
    assert found is not None, answer.headers["Server-Timing"]
    cpu, wall = float(found[1]), float(found[2])
    assert 0 < cpu
    assert 0 < wall
    assert "Server-Timing" not in untimed.headers
