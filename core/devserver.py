"""The development server's sockets send at once (TCP_NODELAY), for `make run` and the tests.

Django's development server (runserver, and the live server of the tests) writes a
response's headers and its body in two sends. With Nagle's algorithm on, the body waits
for the client's delayed acknowledgement of the headers, 40 ms on Linux, so every request
took 40 ms more than its work: an MCP tool call through the official client (initialize,
initialized, tools/list, tools/call: four requests) about 160 ms instead of 40. gunicorn,
which the deployment runs, answers without that wait.
"""

from __future__ import annotations

import socket
from typing import Any

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIServer


class SendAtOnce:
    """A socketserver mixin: each accepted connection has TCP_NODELAY set."""

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()  # type: ignore[misc]
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class PromptWSGIServer(SendAtOnce, WSGIServer):
    """runserver's server (`core/management/commands/runserver.py`)."""


class PromptThreadedWSGIServer(SendAtOnce, ThreadedWSGIServer):
    """The tests' live server (tests/conftest.py)."""
