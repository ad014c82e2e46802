"""`make test`: the suite in two passes, each a pytest run with the same arguments, side by side.

1. In parallel (pytest-xdist, `QUIRE_TEST_WORKERS` processes, the CPU count by default and at
   least 2): every test that works on its own database, its own live server thread and its
   own Chromium. With `--dist worksteal` each worker starts on a run of consecutive tests, so
   a module's tests mostly share a worker and its module-scoped fixtures (Chromium, a large
   site built once), and a worker that runs out takes half of another's remaining tests, so
   a slow module near the end does not leave a core idle (SQLite parallel pass on the idle
   machine: 354 s with the default scheduling, 321 s with this one).
2. One test at a time: the tests that start a Celery worker or gunicorn (tests/conftest.py,
   SERIAL_FIXTURES and the `serial` marker). Its tests mostly wait on those processes, so it
   runs beside the first pass instead of after it, with what it shares kept apart: its test
   database has no xdist suffix (PostgreSQL) or its own file (SQLite), its servers take free
   ports, and with REDIS_URL set it gets the next Redis database number, so its Celery
   workers consume only its own tasks and a cache it empties is its own. Its output is
   shown when the first pass ends.

It fails if either pass fails, and if no test ran at all (pytest's "no tests collected", 5).
When the arguments name only some tests, one pass may find none of them, which is fine.
With QUIRE_TEST_WORKERS=0 it is one plain pytest run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

NO_TESTS = 5
REDIS_DATABASES = 16  # Redis's default `databases`


def workers() -> int:
    wanted = os.environ.get("QUIRE_TEST_WORKERS", "").strip()
    if not wanted:
        return max(2, os.cpu_count() or 1)
    if not wanted.isdigit():
        raise SystemExit(f"QUIRE_TEST_WORKERS must be a whole number, not {wanted!r}")
    return int(wanted)


def next_redis_database(url: str) -> str:
    """`url` with the next database number (redis://host:6379/0 -> redis://host:6379/1)."""
    parts = urlsplit(url)
    number = parts.path.strip("/") or "0"
    if not number.isdigit():
        raise SystemExit(f"REDIS_URL must end in a database number or nothing, not {url!r}")
    following = (int(number) + 1) % REDIS_DATABASES
    return urlunsplit(parts._replace(path=f"/{following}"))


def serial_environment() -> dict[str, str]:
    environment = dict(os.environ)
    if environment.get("REDIS_URL"):
        environment["REDIS_URL"] = next_redis_database(environment["REDIS_URL"])
    return environment


def pytest(*args: str, env: dict[str, str] | None = None, output: Path | None = None) -> int:
    """One pytest run; its output goes to `output` when given (and is shown by the caller)."""
    command = [sys.executable, "-m", "pytest", *args]
    if output is None:
        return subprocess.call(command, env=env)
    with output.open("wb") as sink:
        return subprocess.call(command, env=env, stdout=sink, stderr=subprocess.STDOUT)


def report(args: tuple[str, ...], status: int, began: float) -> None:
    print(f"\n==> pytest {' '.join(args)}: exit {status} in {time.monotonic() - began:.0f} s\n")


def main(arguments: list[str]) -> int:
    count = workers()
    if count == 0:
        began = time.monotonic()
        status = pytest(*arguments)
        report(tuple(arguments), status, began)
        return status
    parallel_args = ("--part=parallel", "-n", str(count), "--dist", "worksteal", *arguments)
    serial_args = ("--part=serial", *arguments)
    with tempfile.TemporaryDirectory(prefix="quire-serial-") as directory:
        log = Path(directory) / "serial.log"
        serial: dict[str, float] = {}

        def run_serial() -> None:
            began = time.monotonic()
            serial["status"] = pytest(*serial_args, env=serial_environment(), output=log)
            serial["seconds"] = time.monotonic() - began

        beside = threading.Thread(target=run_serial, name="serial pass")
        beside.start()
        began = time.monotonic()
        parallel_status = pytest(*parallel_args)
        report(parallel_args, parallel_status, began)
        beside.join()
        if log.exists():
            sys.stdout.write(log.read_text(errors="replace"))
        serial_status = int(serial.get("status", 1))
        print(f"\n==> pytest {' '.join(serial_args)} (beside the parallel pass): ", end="")
        print(f"exit {serial_status} in {serial.get('seconds', 0):.0f} s\n")
    statuses = [parallel_status, serial_status]
    if all(status == NO_TESTS for status in statuses):
        return NO_TESTS
    failed = [status for status in statuses if status not in (0, NO_TESTS)]
    return failed[0] if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
