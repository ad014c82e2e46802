"""Where a group's chat webhook may post: a public address, over https.

A webhook is an address Quire's server posts to, so one pointing inside the network (the
server itself, a database's admin port, the cloud's metadata service at 169.254.169.254)
would make Quire send requests there for whoever set it. Checked when an admin sets the
address and again at each post, which connects to the very address it checked (`post`): a
name can be made to resolve elsewhere later, even between the check and the post. An
operator lets named hosts through with QUIRE_WEBHOOK_ALLOWED_HOSTS (a chat server inside
the network, a test's receiver).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(ValueError):
    """Quire will not post to the address; the message says why."""


def refusal(url: str) -> str | None:
    """Why Quire will not post to `url`, as a sentence; None when it may. A name that does
    not resolve (now) is not refused here: nothing can be posted to it."""
    try:
        _checked(url)
    except Refused as refused:
        return str(refused)
    except _Unresolved:
        pass
    return None


def post(url: str, body: dict[str, Any], *, timeout: float) -> requests.Response:
    """POST `body` as JSON to `url`, connected to the address its host resolved to when
    checked (TLS and the Host header still name the host); redirects are not followed.
    Raises Refused, or requests' errors (a host that does not resolve: ConnectionError)."""
    address = _checked(url)
    if address is None:  # a host the operator allows: posted as to any address
        return requests.post(url, json=body, timeout=timeout, allow_redirects=False)
    parts = urlsplit(url)
    host = parts.hostname or ""
    literal = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{literal}:{parts.port}" if parts.port else literal
    with requests.Session() as session:
        session.trust_env = False  # a proxy would resolve the name again
        session.mount("https://", _PinnedTls(host))
        return session.post(
            urlunsplit(parts._replace(netloc=netloc)),
            json=body,
            headers={"Host": f"{host}:{parts.port}" if parts.port else host},
            timeout=timeout,
            allow_redirects=False,
        )


class _PinnedTls(HTTPAdapter):
    """TLS to an address, with the name of the host it was resolved from for SNI and the
    certificate's check."""

    def __init__(self, host: str) -> None:
        self.host = host
        super().__init__()

    def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
        pool_kwargs.update(server_hostname=self.host, assert_hostname=self.host)
        super().init_poolmanager(*args, **pool_kwargs)


def _checked(url: str) -> IPAddress | None:
    """The public address `url`'s host resolves to, which a post must connect to; None for
    a host the operator allows. Raises Refused."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if host in _allowed_hosts():
        return None
    if parts.scheme != "https" and not settings.DEBUG:
        raise Refused(
            "a webhook's address must start with https:// (plain http only with DEBUG on, "
            "or for a host the operator lists in QUIRE_WEBHOOK_ALLOWED_HOSTS)"
        )
    addresses = _addresses(host, parts.port or (443 if parts.scheme == "https" else 80))
    for address in addresses:
        kind = _internal_kind(address)
        if kind is not None:
            raise Refused(
                f"the webhook's host resolves to {address}, {kind}: Quire posts only to public "
                "addresses (an operator can allow a host with QUIRE_WEBHOOK_ALLOWED_HOSTS)"
            )
    if not addresses:
        # Not refused (the address may be right, the name service down), but not posted to
        # an address nobody checked.
        raise _Unresolved()
    return addresses[0]


class _Unresolved(requests.ConnectionError):
    def __init__(self) -> None:
        super().__init__("the webhook's host does not resolve now")


def _allowed_hosts() -> set[str]:
    return {host.lower().rstrip(".") for host in settings.QUIRE_WEBHOOK_ALLOWED_HOSTS}


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        return []
    addresses = []
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        addresses.append(address)
    return addresses


def _internal_kind(address: IPAddress) -> str | None:
    """What kind of non-public address `address` is ("a loopback address"...), or None."""
    if address.is_loopback:
        return "a loopback address (this server)"
    if address.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if address.is_private:
        return "a private network address"
    if address.is_multicast or address.is_reserved or address.is_unspecified:
        return "a reserved address"
    if not address.is_global:
        return "an address that is not public"
    return None
