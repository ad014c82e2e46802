"""Fetching client ID metadata documents (a client_id that is an https URL).

django-oauth-toolkit's fetcher does the fetching: https only, public addresses only (the
resolved address is the one connected to), no redirects, a timeout and a size cap. Quire adds
its own rules for what a document may say (redirect URIs, name, its own URL as client_id), a
deadline for the whole fetch, a reason for every refusal that the person at the authorize step
is shown, the limits on client rows (ClientDocumentPermission), and, for tests alone
(QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS), documents served on a loopback address.

The library's timeout bounds the connection and each read, not the body: urllib3 restarts
the read timeout at every byte, so a document sent a byte a second held a worker for a
minute through a 5-second timeout. The body is read here in pieces until the deadline, each
wait on the socket no longer than what is left of it.

The library keeps a refusal's reason to its log and answers "unknown client"; Quire keeps the
reason in the cache as long as the library waits before fetching that URL again
(CIMD_FAILURE_BACKOFF_SECONDS), so each try in that time is told the same reason.
"""

from __future__ import annotations

import hashlib
import re
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from django.core.cache import cache
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.settings import oauth2_settings

from connect import selectors, services
from core.errors import QuireError

REFUSAL_KEY = "quire:oauth-document-refused:"
CLIENT_ID_SHOWN_MAX = 200


class DocumentRefused(CIMDError):
    """A refusal whose reason Quire wrote itself, to show as it is."""


def _reason(error: CIMDError) -> str:
    """What went wrong with a document, in words a person can pass on to the app's makers."""
    if isinstance(error, DocumentRefused):
        return str(error)
    message = str(error)
    status = re.search(r"returned HTTP (\d+)", message)
    if status and status.group(1).startswith("3"):
        return (
            f"its URL answered with a redirect (HTTP {status.group(1)}), and Quire follows "
            "none: the document must be served at the client_id URL itself."
        )
    if status:
        return f"its URL answered HTTP {status.group(1)}, not the document."
    for words, reason in [
        ("https scheme", "its URL is not https: a document is fetched only over https."),
        (
            "non-public address",
            "its host is not at a public address (it resolves to a private, "
            "loopback or link-local one), and Quire fetches documents only from public addresses.",
        ),
        ("resolve", "its host name does not resolve to an address."),
        (
            "maximum allowed size",
            f"it is larger than {oauth2_settings.CIMD_MAX_DOCUMENT_SIZE:,} bytes.",
        ),
        ("is not JSON", "it is not served as application/json."),
        ("not valid JSON", "it is not valid JSON."),
        ("JSON object", "it is not a JSON object."),
        (
            "took longer than",
            f"it took longer than {oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS} seconds to arrive.",
        ),
        ("could not fetch", "it could not be fetched (the connection failed or timed out)."),
    ]:
        if words in message:
            return reason
    return f"{message}."


def _refusal_key(client_id: str) -> str:
    return REFUSAL_KEY + hashlib.sha256(client_id.encode()).hexdigest()


def _remember_refusal(client_id: str, reason: str) -> None:
    cache.set(_refusal_key(client_id), reason, oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS)


def refusal(client_id: str, request: Any) -> str | None:
    """Why the client `client_id` was not found, in a sentence that says what to do; None
    when it is simply unknown (not a metadata document's URL, and nothing refused)."""
    shown = client_id[:CLIENT_ID_SHOWN_MAX]
    limit = getattr(request, "quire_client_refusal", None)
    if limit:
        return f"Quire did not fetch the client ID metadata document at {shown}: {limit}"
    if client_id.lower().startswith("http://"):
        return (
            f"The client_id {shown} is an http URL: a client ID metadata document is fetched "
            "only over https. Whoever publishes the app must serve it at an https URL."
        )
    reason = (
        cache.get(_refusal_key(client_id)) if client_id.lower().startswith("https://") else None
    )
    if not reason:
        return None
    return (
        f"Quire refused the client ID metadata document at {shown}: {reason} Whoever publishes "
        "the app must fix it; Quire fetches it again "
        f"{oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS} seconds after a refusal."
    )


class ClientDocumentPermission:
    """Whether the document of a client not seen before may be fetched, and a row made of it
    (CIMD_REGISTRATION_PERMISSION_CLASSES): only at the authorize step, where the person is
    signed in (a token request for a client never authorized cannot succeed), and within the
    limits on client rows per address and in total. A document fetched again refreshes its
    row and makes none."""

    def has_permission(self, request: Any, client_id: str) -> bool:
        if selectors.client_exists(client_id):
            return True
        if not getattr(request, "response_type", None):
            request.quire_client_refusal = (
                "a client is first seen at the authorize step, where a person signs in; start "
                "connecting again from the app."
            )
            return False
        try:
            services.client_rows_check(address=str(request.headers.get("REMOTE_ADDR") or "unknown"))
        except QuireError as error:
            request.quire_client_refusal = error.message
            return False
        return True


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
        try:
            return self._fetch_and_check(client_id)
        except CIMDError as error:
            _remember_refusal(client_id, _reason(error))
            raise

    def _fetch_and_check(self, client_id: str) -> tuple[dict[str, Any], int]:
        host = urlsplit(client_id).hostname or ""
        if settings.QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS and services.is_loopback(host):
            metadata, max_age = self._fetch_from_loopback(client_id)
        else:
            metadata, max_age = super().fetch(client_id)
        named = metadata.get("client_id")
        if named != client_id:
            # The library refuses it too, after this; the reason is said here.
            raise DocumentRefused(
                f"its client_id ({str(named)[:CLIENT_ID_SHOWN_MAX]!r}) is not the URL it was "
                "fetched from: a document must name its own URL."
            )
        if metadata.get("token_endpoint_auth_method", "none") != "none" or (
            "client_secret" in metadata
        ):
            raise DocumentRefused(
                "it describes a client with a secret: Quire takes public clients only "
                '(token_endpoint_auth_method "none", no client_secret).'
            )
        try:
            services.check_client_metadata(metadata)
        except services.InvalidClientMetadata as error:
            what = "a redirect URI is refused" if error.field == "redirect_uri" else "it is refused"
            raise DocumentRefused(f"{what}: {error.message}") from None
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
