"""Fetching client ID metadata documents (a client_id that is an https URL).

django-oauth-toolkit's fetcher does the fetching: https only, public addresses only (the
resolved address is the one connected to), no redirects, a timeout and a size cap. Quire adds
its own rules for what a document may say (redirect URIs, name), a deadline for the whole
fetch, and, for tests alone (QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS), documents served on a
loopback address.

The library's timeout bounds the connection and each read, not the body: urllib3 restarts
the read timeout at every byte, so a document sent a byte a second held a worker for a
minute through a 5-second timeout. The body is read here in pieces until the deadline, each
wait on the socket no longer than what is left of it.
"""

from __future__ import annotations

import ssl
import time
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.settings import oauth2_settings

from connect import services


class _BoundedBody:
    """A response whose `read` stops at `deadline`, for the library's `_read_document`."""

    def __init__(self, response: Any, deadline: float) -> None:
        self.response = response
        self.deadline = deadline
        self.status = response.status
        self.headers = response.headers

    def read(self, limit: int) -> bytes:
        body = bytearray()
        while len(body) < limit:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise CIMDError(
                    "client_id document took longer than "
                    f"{oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS} seconds to arrive"
                )
            connection = getattr(self.response, "connection", None)
            if connection is not None and getattr(connection, "sock", None) is not None:
                connection.sock.settimeout(left)
            try:
                piece = self.response.read1(limit - len(body))
            except (TimeoutError, urllib3.exceptions.ReadTimeoutError):
                continue  # the deadline check above says so
            if not piece:
                break
            body += piece
        return bytes(body)


class ClientDocumentFetcher(SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        self._deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        host = urlsplit(client_id).hostname or ""
        if settings.QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS and services.is_loopback(host):
            metadata, max_age = self._fetch_from_loopback(client_id)
        else:
            metadata, max_age = super().fetch(client_id)
        try:
            services.check_client_metadata(metadata)
        except services.InvalidClientMetadata as error:
            raise CIMDError(f"client ID metadata document refused: {error.message}") from None
        return metadata, max_age

    def _read_document(self, response: Any) -> tuple[dict[str, Any], int]:
        deadline = getattr(self, "_deadline", None)
        if deadline is None:
            deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        read: tuple[dict[str, Any], int] = super()._read_document(_BoundedBody(response, deadline))
        return read

    def _fetch_from_loopback(self, client_id: str) -> tuple[dict[str, Any], int]:
        parts = urlsplit(client_id)
        if parts.scheme != "https":
            raise CIMDError("client_id URL must use the https scheme")
        context = ssl.create_default_context(
            cafile=settings.QUIRE_OAUTH_CLIENT_DOCUMENT_CA_FILE or None
        )
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        pool = urllib3.HTTPSConnectionPool(
            host=parts.hostname or "",
            port=parts.port or 443,
            timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
            retries=False,
            maxsize=1,
            ssl_context=context,
        )
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            response = pool.urlopen(
                "GET",
                path,
                headers={"Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                return self._read_document(response)  # the library's size cap and checks
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
