"""Where a group's chat webhook may post: a public address, over https.

A webhook is an address Quire's server posts to, so one pointing inside the network (the
server itself, a database's admin port, the cloud's metadata service at 169.254.169.254)
would make Quire send requests there for whoever set it. Checked when an admin sets the
address and again before each post (a name can be made to resolve elsewhere later). An
operator lets named hosts through with QUIRE_WEBHOOK_ALLOWED_HOSTS (a chat server inside
the network, a test's receiver).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def refusal(url: str) -> str | None:
    """Why Quire will not post to `url`, as a sentence; None when it may. A name that does
    not resolve (now) is not refused here: nothing can be posted to it."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if host in _allowed_hosts():
        return None
    if parts.scheme != "https" and not settings.DEBUG:
        return (
            "a webhook's address must start with https:// (plain http only with DEBUG on, "
            "or for a host the operator lists in QUIRE_WEBHOOK_ALLOWED_HOSTS)"
        )
    for address in _addresses(host, parts.port or (443 if parts.scheme == "https" else 80)):
        kind = _internal_kind(address)
        if kind is not None:
            return (
                f"the webhook's host resolves to {address}, {kind}: Quire posts only to public "
                "addresses (an operator can allow a host with QUIRE_WEBHOOK_ALLOWED_HOSTS)"
            )
    return None


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
