"""`make test`: the suite in two passes, each a pytest run with the same arguments.

1. In parallel (pytest-xdist, `QUIRE_TEST_WORKERS` processes, the CPU count by default and at
   least 2): every test that works on its own database, its own live server thread and its
   own Chromium. With `--dist worksteal` each worker starts on a run of consecutive tests, so
   a module's tests mostly share a worker and its module-scoped fixtures (Chromium, a large
   site built once), and a worker that runs out takes half of another's remaining tests, so
   a slow module near the end does not leave a core idle (SQLite parallel pass on the idle
   machine: 354 s with the default scheduling, 321 s with this one).
2. Serially: the tests that start a Celery worker or gunicorn (tests/conftest.py,
   SERIAL_FIXTURES and the `serial` marker).

It fails if either pass fails, and if no test ran at all (pytest's "no tests collected", 5).
When the arguments name only some tests, one pass may find none of them, which is fine.
With QUIRE_TEST_WORKERS=0 it is one plain pytest run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

NO_TESTS = 5


def workers() -> int:
    wanted = os.environ.get("QUIRE_TEST_WORKERS", "").strip()
    if not wanted:
        return max(2, os.cpu_count() or 1)
    if not wanted.isdigit():
        raise SystemExit(f"QUIRE_TEST_WORKERS must be a whole number, not {wanted!r}")
    return int(wanted)


def pytest(*args: str) -> int:
    began = time.monotonic()
    status = subprocess.call([sys.executable, "-m", "pytest", *args])
    print(f"\n==> pytest {' '.join(args)}: exit {status} in {time.monotonic() - began:.0f} s\n")
    return status


def main(arguments: list[str]) -> int:
    count = workers()
    if count == 0:
        return pytest(*arguments)
    statuses = [
        pytest("--part=parallel", "-n", str(count), "--dist", "worksteal", *arguments),
        pytest("--part=serial", *arguments),
    ]
    if all(status == NO_TESTS for status in statuses):
        return NO_TESTS
    failed = [status for status in statuses if status not in (0, NO_TESTS)]
    return failed[0] if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
