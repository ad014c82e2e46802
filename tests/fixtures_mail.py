"""Fixtures for the mail tests: a real SMTP server (aiosmtpd) and a real Celery worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection

from config.celery import app as celery_app
from tests.prerequisites import CELERY, reachable, require
from tests.servers import SMTPServer, free_port
from tests.waits import PATIENCE, wait_until

__all__ = ["SMTPServer", "free_port"]  # for the tests that import them from here

PROJECT_ROOT = Path(__file__).resolve().parent.parent
WORKER_OPTIONS = (
    "--loglevel=info",
    "--purge",
    "--without-gossip",
    "--without-mingle",
    "--without-heartbeat",
)


@pytest.fixture
def smtp_down(settings: Any) -> Iterator[SMTPServer]:
    """Django sends to a free port where nothing listens yet; `.start()` brings SMTP up."""
    server = SMTPServer(free_port())
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = server.port
    settings.EMAIL_TIMEOUT = 5
    yield server
    server.stop()


@pytest.fixture
def smtp_server(smtp_down: SMTPServer) -> SMTPServer:
    """A running SMTP server that Django's SMTP backend sends to."""
    smtp_down.start()
    return smtp_down


@contextmanager
def celery_settings(**values: Any) -> Iterator[None]:
    """Change settings of this process's Celery app inside the block, then put them back.

    The app reads Django's CELERY_* settings before its own (celery 5.6), so each value is
    set under that name: `celery_settings(task_always_eager=True)`.
    """
    conf = celery_app.conf
    names = {f"CELERY_{key.upper()}": value for key, value in values.items()}
    before = {name: conf.get(name) for name in names}
    conf.update(names)
    try:
        yield
    finally:
        conf.update(before)


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run Celery tasks in process, as the embedded default does, even when REDIS_URL is set."""
    with celery_settings(task_always_eager=True):
        yield


def _database_url_for_worker() -> str:
    """The URL of the database the tests use right now (the test database, not the real one)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    auth = db["USER"] or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    host = db["HOST"] or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{db['NAME']}"


class CeleryWorker:
    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=PATIENCE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


@pytest.fixture
def celery_worker(tmp_path: Path) -> Iterator[Callable[..., CeleryWorker]]:
    """Start `celery -A config worker --pool=solo --purge` on the test database.

    Needs REDIS_URL (the test process publishes there); skipped without it unless
    QUIRE_REQUIRE_CELERY=1. Use it from tests marked `django_db(transaction=True)`, so the
    worker, another process, sees the rows the test commits.
    """
    shared_redis = django_settings.REDIS_URL
    require(CELERY, bool(shared_redis), "needs REDIS_URL: a Redis broker for a real Celery worker")
    require(CELERY, reachable(shared_redis), f"Redis at {shared_redis} is not reachable")
    workers: list[CeleryWorker] = []

    def start(
        *,
        smtp_port: int,
        extra_env: dict[str, str] | None = None,
        redis_url: str | None = None,
        pool: str = "solo",
    ) -> CeleryWorker:
        """`redis_url`: the worker's broker and stores, the shared Redis by default; `pool`:
        solo (one process) or prefork, production's pool (docker-compose.yml)."""
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": _database_url_for_worker(),
            "REDIS_URL": redis_url or shared_redis,
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(smtp_port),
            "SECRET_KEY": django_settings.SECRET_KEY,
            "QUIRE_BASE_URL": django_settings.QUIRE_BASE_URL,
            **(extra_env or {}),
        }
        log = tmp_path / f"worker-{len(workers)}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "celery", "-A", "config", "worker"),
                    *(f"--pool={pool}", "--concurrency=2", *WORKER_OPTIONS),
                ],
                cwd=PROJECT_ROOT,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        worker = CeleryWorker(process, log)
        workers.append(worker)
        try:
            wait_until(
                lambda: " ready." in worker.output(),
                what="the Celery worker",
                alive=lambda: process.poll() is None,
                every=0.2,
            )
        except AssertionError as error:
            worker.stop()
            raise AssertionError(
                f"the Celery worker did not start ({error}):\n{worker.output()}"
            ) from None
        return worker

    with celery_settings(task_always_eager=False):
        yield start
    for worker in workers:
        worker.stop()


@contextmanager
def celery_publishing_to(broker_url: str) -> Iterator[None]:
    """This process's Celery app publishes to `broker_url` inside the block, then as before."""
    app = celery_app
    pools = (app._pool, app.amqp._producer_pool)
    app._pool = app.amqp._producer_pool = None  # connect afresh, to the new broker
    try:
        with celery_settings(broker_url=broker_url, broker_write_url=broker_url):
            yield
    finally:
        app._pool, app.amqp._producer_pool = pools


@pytest.fixture
def broker_down() -> Iterator[None]:
    """Celery publishes to a Redis port where nothing listens."""
    with (
        celery_settings(task_always_eager=False),
        celery_publishing_to(f"redis://127.0.0.1:{free_port()}/0"),
    ):
        yield
