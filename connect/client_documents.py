"""Fetching client ID metadata documents (a client_id that is an https URL).

django-oauth-toolkit's fetcher does the fetching: https only, public addresses only (the
resolved address is the one connected to), no redirects, a timeout and a size cap. Quire adds
its own rules for what a document may say (redirect URIs, name), and, for tests alone
(QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS), documents served on a loopback address.
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.settings import oauth2_settings

from connect import services


class ClientDocumentFetcher(SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
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
