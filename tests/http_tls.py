"""One TLS context for every HTTP client the tests make.

httpx builds a TLS context for each client it is not given one (loading certifi's CA bundle:
about 30 ms of CPU each time), even for a plain-HTTP URL. The tests make thousands of clients
for servers on 127.0.0.1 (one per MCP session, one per `httpx.post`), and building those
contexts was about a tenth of the parallel pass's CPU time (py-spy, PostgreSQL run). Every
client in the tests is given this one instead: `httpx.post(url, ..., verify=TLS)`.
"""

from __future__ import annotations

import httpx

TLS = httpx.create_ssl_context()
