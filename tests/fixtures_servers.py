"""Quire under gunicorn in its own processes, as production runs it, on free ports."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fixtures_mail import _database_url_for_worker, free_port
from tests.waits import PATIENCE, answered, wait_until

ROOT = Path(__file__).resolve().parent.parent
SECRET = "a-test-secret-shared-by-every-server-of-one-test"


class QuireServer:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.port = port
        self.log = log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.wait_stopped()

    def wait_stopped(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=PATIENCE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start_server(
    directory: Path, *, workers: int = 1, env: dict[str, str] | None = None
) -> QuireServer:
    """gunicorn on a free port, serving the test database; waits until it answers."""
    port = free_port()
    full_env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": _database_url_for_worker(),
        "QUIRE_BASE_URL": f"http://127.0.0.1:{port}",
        **(env or {}),
    }
    log = directory / f"gunicorn-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--timeout",  # a worker silent this long is killed: not on a busy machine
                str(int(PATIENCE)),
                "--graceful-timeout",
                "5",
            ],
            cwd=ROOT,
            env=full_env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    server = QuireServer(process, port, log)
    try:
        wait_until(
            lambda: healthy(server),
            what=f"gunicorn on port {port}",
            alive=lambda: process.poll() is None,
        )
    except AssertionError as error:
        server.stop()
        raise AssertionError(f"gunicorn did not start ({error}):\n{server.output()}") from None
    return server


def healthy(server: QuireServer) -> bool:
    # 503 too: a server whose database is down still answers.
    response = answered(server.url + "/healthz")
    return response is not None and response.status_code in (200, 503)


@pytest.fixture
def quire_servers(tmp_path: Path) -> Iterator[Callable[..., QuireServer]]:
    started: list[QuireServer] = []

    def start(*, workers: int = 1, env: dict[str, str] | None = None) -> QuireServer:
        server = start_server(tmp_path, workers=workers, env=env)
        started.append(server)
        return server

    yield start
    # All told to stop first, then waited for: each takes about two seconds to wind down.
    for server in started:
        if server.process.poll() is None:
            server.process.terminate()
    for server in started:
        server.wait_stopped()
