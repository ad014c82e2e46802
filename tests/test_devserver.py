"""`make run`'s server (and the tests' live server) answers without Nagle's 40 ms wait.

Django's development server writes a response's headers and body in two sends; with Nagle's
algorithm on, the body waited for the client's delayed ACK: 40 ms more on every request, four
times per MCP tool call through the official client (core/devserver.py).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.core.management import get_commands, load_command_class
from django.core.servers.basehttp import WSGIRequestHandler, WSGIServer
from django.test.testcases import LiveServerThread

from core.devserver import PromptWSGIServer, SendAtOnce


@pytest.fixture
def client_socket() -> Iterator[socket.socket]:
    with socket.socket() as client:
        yield client


def accepted_without_delay(server_class: type[WSGIServer], client: socket.socket) -> bool:
    server = server_class(("127.0.0.1", 0), WSGIRequestHandler)
    try:
        client.connect(server.server_address)
        connection, _ = server.get_request()
        with connection:
            return bool(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    finally:
        server.server_close()


def test_its_connections_send_at_once_where_djangos_wait_for_nagle(
    client_socket: socket.socket,
) -> None:
    assert accepted_without_delay(PromptWSGIServer, client_socket)
    with socket.socket() as other:
        assert not accepted_without_delay(WSGIServer, other)


def test_runserver_is_quires_with_whitenoise_static_files_and_the_prompt_server() -> None:
    assert get_commands()["runserver"] == "core"
    command = load_command_class("core", "runserver")
    assert getattr(command, "server_cls", None) is PromptWSGIServer
    parser = command.create_parser("manage.py", "runserver")
    # WhiteNoise's runserver (the command it extends) leaves static files to WhiteNoise.
    assert parser.get_default("use_static_handler") is False


def test_the_live_server_of_the_tests_sends_at_once() -> None:
    assert issubclass(LiveServerThread.server_class, SendAtOnce)
