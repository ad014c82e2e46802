"""Every change to OAuth clients and connections: one function each, audited.

A connection is the grant one person gave one client to act as one agent. Ending it revokes
its whole chain of refresh tokens and deletes its access tokens in the same transaction, so
the next request with any of them gets 401.
"""

from __future__ import annotations

import ipaddress
import time
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import Application, RefreshToken

from agents.models import Agent
from agents.services import can_manage_agents
from config.cache import counter_hit
from connect import selectors
from connect.models import Connection, Grant, code_digest
from core.actors import SystemActor
from core.audit import audit_record
from core.errors import Forbidden, InvalidArgument, RateLimited
from wiki.validators import check_one_line

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
REDIRECT_URIS_MAX = 10
REDIRECT_URI_CHARS_MAX = 2000
CLIENT_NAME_MAX = 100
REGISTRATION_WINDOW_SECONDS = 3600
LAST_USED_RESOLUTION = timedelta(minutes=1)


class InvalidClientMetadata(InvalidArgument):
    """RFC 7591's `invalid_client_metadata` (or `invalid_redirect_uri`, by `field`)."""


# --- who may connect what -----------------------------------------------------------------


def can_connect(person: Any, agent: Agent) -> bool:
    """Admins may connect any active agent; other people only the active agents they own."""
    if not isinstance(person, User) or not person.is_active or not agent.is_active:
        return False
    return agent.owner_id == person.pk or can_manage_agents(person)


# --- clients --------------------------------------------------------------------------------


def redirect_uri_problem(uri: Any) -> str | None:
    """Why `uri` cannot be a redirect URI, or None: https, or http on a loopback address
    (any port, RFC 8252), or a native app's scheme that the operator allowed."""
    if not isinstance(uri, str) or not uri or len(uri) > REDIRECT_URI_CHARS_MAX:
        return f"each redirect URI must be a URL of at most {REDIRECT_URI_CHARS_MAX} characters."
    if any(ord(char) <= 0x20 or 0x7F <= ord(char) <= 0x9F for char in uri) or not uri.isascii():
        # Stored space-separated: a space would make two redirect URIs of one.
        return f"{uri!r} holds a space, a control or a non-ASCII character; percent-encode it."
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        return f"{uri!r} is not a valid URL."
    if parts.fragment or "#" in uri:
        return f"{uri!r} has a fragment; a redirect URI must not."
    if parts.username or parts.password:
        return f"{uri!r} carries a user name or password; a redirect URI must not."
    scheme = parts.scheme.lower()
    if scheme in settings.QUIRE_OAUTH_EXTRA_REDIRECT_SCHEMES:
        return None
    if scheme == "https" and parts.hostname:
        return None
    if scheme == "http" and parts.hostname and is_loopback(parts.hostname):
        return None
    return (
        f"{uri!r} is not allowed: a redirect URI must use https, or http on a loopback "
        "address (127.0.0.1, [::1] or localhost)."
    )


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_client_metadata(metadata: Any) -> dict[str, Any]:
    """The fields of a registration (RFC 7591) Quire keeps, or InvalidClientMetadata."""
    if not isinstance(metadata, dict):
        raise InvalidClientMetadata("the registration must be a JSON object.")
    redirect_uris = metadata.get("redirect_uris")
    if (
        not isinstance(redirect_uris, list)
        or not redirect_uris
        or len(redirect_uris) > REDIRECT_URIS_MAX
    ):
        raise InvalidClientMetadata(
            f"redirect_uris must list 1 to {REDIRECT_URIS_MAX} URLs.", field="redirect_uri"
        )
    for uri in redirect_uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise InvalidClientMetadata(problem, field="redirect_uri")
    grant_types = metadata.get("grant_types", ["authorization_code"])
    if (
        not isinstance(grant_types, list)
        or "authorization_code" not in grant_types
        or not set(grant_types) <= {"authorization_code", "refresh_token"}
    ):
        raise InvalidClientMetadata(
            "grant_types must be authorization_code (and refresh_token): Quire offers no other."
        )
    response_types = metadata.get("response_types", ["code"])
    if not isinstance(response_types, list) or set(response_types) != {"code"}:
        raise InvalidClientMetadata('response_types must be ["code"]: Quire offers no other.')
    name = metadata.get("client_name")
    if name is None or name == "":
        name = urlsplit(redirect_uris[0]).hostname or redirect_uris[0]
    if not isinstance(name, str):
        raise InvalidClientMetadata("client_name must be text.")
    try:
        name = check_one_line(name, field="client_name").strip()
    except InvalidArgument as error:
        raise InvalidClientMetadata(error.message) from None
    if not 1 <= len(name) <= CLIENT_NAME_MAX:
        raise InvalidClientMetadata(f"client_name must be 1 to {CLIENT_NAME_MAX} characters.")
    return {"name": name, "redirect_uris": redirect_uris}


def client_rows_check(*, address: str) -> None:
    """RateLimited unless one more client row may be made for `address`: by registration
    (RFC 7591) or by a first fetch of a client ID metadata document, together at most
    QUIRE_OAUTH_REGISTRATIONS_PER_HOUR an hour per address; and, from all addresses, at most
    QUIRE_OAUTH_CLIENTS_MAX clients that never connected (the hourly clean-up deletes them)."""
    held = selectors.unused_clients().count()
    ceiling = settings.QUIRE_OAUTH_CLIENTS_MAX
    if held >= ceiling:
        raise RateLimited(
            f"Quire already holds {held:,} clients that never finished connecting, its limit "
            f"(QUIRE_OAUTH_CLIENTS_MAX = {ceiling:,}). Those are deleted "
            f"{settings.QUIRE_OAUTH_UNUSED_CLIENT_HOURS} hours after they were made: try again "
            "later, or ask the operator to run delete_unused_oauth_clients.",
            detail={"retryAfter": REGISTRATION_WINDOW_SECONDS},
        )
    limit = settings.QUIRE_OAUTH_REGISTRATIONS_PER_HOUR
    window = int(time.time() // REGISTRATION_WINDOW_SECONDS)
    count = counter_hit(
        f"quire:oauth-register:{address}:{window}", timeout=REGISTRATION_WINDOW_SECONDS * 2
    )
    if count > limit:
        wait = REGISTRATION_WINDOW_SECONDS - int(time.time()) % REGISTRATION_WINDOW_SECONDS
        raise RateLimited(
            f"this address made more than {limit} clients this hour (registrations and "
            "client ID metadata documents fetched for the first time, "
            f"QUIRE_OAUTH_REGISTRATIONS_PER_HOUR). Try again in {wait // 60 + 1} minutes.",
            detail={"retryAfter": wait},
        )


@transaction.atomic
def client_register(*, metadata: Any, address: str) -> Application:
    """Dynamic client registration (RFC 7591): a public client with exact redirect URIs."""
    client_rows_check(address=address)
    fields = check_client_metadata(metadata)
    application = Application(
        name=fields["name"],
        redirect_uris=" ".join(fields["redirect_uris"]),
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        registration_source=Application.RegistrationSource.DCR,
        client_secret="",
        hash_client_secret=False,
    )
    try:
        application.full_clean(exclude=["client_secret"])
    except ValidationError as exc:
        raise InvalidClientMetadata(" ".join(exc.messages), field="redirect_uri") from None
    application.save()
    audit_record(
        action="oauth.client_register",
        actor=SystemActor("client registration"),
        data={"clientId": application.client_id, "client": application.name, "address": address},
    )
    return application


def clients_delete_unused(*, older_than: timedelta) -> int:
    """Delete registered or fetched clients that never got a connection; how many."""
    cutoff = timezone.now() - older_than
    _, by_model = selectors.unused_clients().filter(created__lt=cutoff).delete()
    count = by_model.get(Application._meta.label, 0)
    if count:
        audit_record(
            action="oauth.clients_delete_unused",
            actor=SystemActor("cleanup"),
            data={"deleted": count},
        )
    # Codes that expired unused go too.
    Grant.objects.filter(expires__lt=cutoff).delete()
    return count


# --- consent and connections ------------------------------------------------------------------


def consent_record(
    *, actor: User, application: Application, agent: Agent | None, allowed: bool
) -> None:
    """The person's decision on the authorize screen, for the audit trail."""
    if allowed and (agent is None or not can_connect(actor, agent)):
        raise Forbidden("you may not connect this agent; pick one of the agents listed.")
    audit_record(
        action="oauth.allow" if allowed else "oauth.deny",
        actor=actor,
        data={
            "clientId": application.client_id,
            "client": application.name,
            "agent": agent.name if agent is not None else None,
            "agentId": agent.pk if agent is not None else None,
        },
    )


def grant_agent_set(*, grant: Grant, agent_id: int | None) -> None:
    """Keep on a new code the agent the person picked (the library saved the code without)."""
    grant.agent_id = agent_id
    Grant.objects.filter(pk=grant.pk).update(agent_id=agent_id)


def connection_open(*, grant: Grant) -> Connection:
    """Exchanging a code opens its connection; called inside the token endpoint's transaction."""
    agent = grant.agent
    if agent is None or not can_connect(grant.user, agent):
        raise Forbidden("the agent this code was issued for can no longer be connected.")
    connection = Connection.objects.create(
        # The grant's code as stored: its digest.
        application=grant.application,
        agent=agent,
        allowed_by=grant.user,
        code=grant.code,
    )
    audit_record(
        action="oauth.connect",
        actor=grant.user,
        data={
            "connection": connection.pk,
            "clientId": grant.application.client_id,
            "client": grant.application.name,
            "agent": agent.name,
            "agentId": agent.pk,
        },
    )
    return connection


def _end(connections: list[Connection], *, actor: User | Agent | SystemActor, reason: str) -> None:
    now = timezone.now()
    for connection in connections:
        # Revokes the chain's refresh tokens and deletes their access tokens.
        RefreshToken.revoke_family(connection.family)
        connection.ended_at, connection.ended_reason = now, reason
        connection.save(update_fields=["ended_at", "ended_reason"])
        audit_record(
            action="oauth.disconnect",
            actor=actor,
            data={
                "connection": connection.pk,
                "clientId": connection.application.client_id,
                "client": connection.application.name,
                "agent": connection.agent.name,
                "agentId": connection.agent_id,
                "reason": reason,
            },
        )


def _check_can_disconnect(actor: User, connection: Connection) -> None:
    if connection.allowed_by_id == actor.pk or can_manage_agents(actor):
        return
    raise Forbidden("only an admin or the person who allowed this connection can end it.")


@transaction.atomic
def connection_disconnect(*, actor: User, connection: Connection) -> None:
    _check_can_disconnect(actor, connection)
    connection = (
        Connection.objects.select_for_update()
        .select_related("application", "agent")
        .get(pk=connection.pk)
    )
    if connection.is_live:
        _end([connection], actor=actor, reason="disconnected")


def _live(**lookup: Any) -> list[Connection]:
    return list(
        Connection.objects.select_for_update()
        .select_related("application", "agent")
        .filter(ended_at__isnull=True, **lookup)
    )


def connections_end_for_agent(
    *, agent: Agent, actor: User | Agent | SystemActor, reason: str
) -> None:
    """The agent's token was rotated or revoked: every client acting as it stops at once."""
    with transaction.atomic():
        _end(_live(agent=agent), actor=actor, reason=reason)


def connections_end_for_person(*, person: User, reason: str) -> None:
    """The person who allowed them was deactivated."""
    with transaction.atomic():
        _end(_live(allowed_by=person), actor=SystemActor("account deactivated"), reason=reason)


def connection_end_if_not_allowed(connection: Connection) -> bool:
    """End `connection` when the person who allowed it may no longer connect its agent (the
    agent was given to another owner, or they lost the admin group that let them): their
    grant does not outlive their right. True when it ended."""
    if can_connect(connection.allowed_by, connection.agent):
        return False
    with transaction.atomic():
        _end(
            _live(pk=connection.pk),
            actor=SystemActor("the right to connect this agent ended"),
            reason="no longer allowed to connect this agent",
        )
    return True


def connection_end_chain(*, family: Any, reason: str) -> None:
    """The library ended the connection's chain of tokens (a used refresh token came back, so
    someone else may hold it; or the app revoked its token): the connection ends with it."""
    with transaction.atomic():
        _end(_live(family=family), actor=SystemActor(f"oauth: {reason}"), reason=reason)


def code_burn(*, grant: Grant) -> None:
    """A code presented with the wrong PKCE verifier is used up: whoever sent it does not
    hold the verifier, and the client starts again."""
    Grant.objects.filter(pk=grant.pk).delete()


def connection_end_for_replayed_code(*, code: str, application: Any) -> None:
    """A code that was exchanged already came back: someone else may hold it, so the
    connection it opened ends and its tokens with it (RFC 6749 4.1.2)."""
    digest = code_digest(code)
    with transaction.atomic():
        live = Connection.objects.filter(code=digest, application=application, ended_at=None)
        _end(list(live), actor=SystemActor("oauth: code replayed"), reason="code replayed")


def connection_mark_used(connection: Connection) -> None:
    """Written at most once a minute, like an agent's last use."""
    now = timezone.now()
    last = connection.last_used_at
    if last is not None and now - last < LAST_USED_RESOLUTION:
        return
    Connection.objects.filter(pk=connection.pk).update(last_used_at=now)
    connection.last_used_at = now
