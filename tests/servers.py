"""Servers that tests and the soak (bench/soak.py) start, kill and restart on free ports:
a Redis server and an SMTP server (aiosmtpd). Neither Django nor pytest is needed here."""

from __future__ import annotations

import email
import logging
import socket
import subprocess
import threading
import time
from email.message import EmailMessage as ParsedMessage
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import redis
from aiosmtpd.controller import Controller

from tests.waits import PATIENCE


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A redis-server of its own that keeps nothing on disk: killing it loses every key."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--bind", "127.0.0.1", "--port", str(self.port)),
                *("--save", "", "--appendonly", "no", "--dir", str(self.directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                redis.Redis.from_url(self.url, socket_timeout=0.5).ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"redis-server did not start on port {self.port}"
                    ) from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Kill it (no shutdown save: an outage, not a maintenance stop)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


class Inbox:
    """The aiosmtpd handler: keeps every message it accepts, parsed."""

    def __init__(self) -> None:
        self.messages: list[ParsedMessage] = []
        self._arrived = threading.Condition()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=default_policy)
        with self._arrived:
            self.messages.append(message)
            self._arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, *, timeout: float = PATIENCE) -> list[ParsedMessage]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"expected {count} email(s) within {timeout:.0f}s, got {len(self.messages)}"
                    )
                self._arrived.wait(left)
            return list(self.messages)


class SMTPServer:
    """A real SMTP server on 127.0.0.1 that can be started late (to simulate an outage)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.inbox = Inbox()
        self._controller: Controller | None = None

    @property
    def messages(self) -> list[ParsedMessage]:
        return self.inbox.messages

    def start(self) -> None:
        logging.getLogger("mail.log").setLevel(logging.WARNING)
        self._controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def wait_for(self, count: int, *, timeout: float = PATIENCE) -> list[ParsedMessage]:
        return self.inbox.wait_for(count, timeout=timeout)
