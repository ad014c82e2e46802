"""What the /mcp door asks of OAuth: which agent an access token acts as, and the 401
challenge that tells a client where to start (RFC 9728)."""

from __future__ import annotations

from django.http import HttpRequest

from agents.models import Agent
from connect import selectors, services
from connect.tokens import is_oauth_access_token

__all__ = ["agent_for_access_token", "bearer_challenge", "is_oauth_access_token"]


def agent_for_access_token(request: HttpRequest, token: str) -> Agent | None:
    """The agent a live OAuth access token for this server's /mcp acts as, named with its
    client for the audit rows; None when the token does not (any more) give access."""
    connection = selectors.connection_for_access_token(token, resource=selectors.mcp_resource())
    if connection is None or services.connection_end_if_not_allowed(connection):
        return None
    services.connection_mark_used(connection)
    agent = connection.agent
    agent.oauth_client = connection.application.name or connection.application.client_id
    # Whoever allowed the connection may not decide what the agent proposes through it.
    agent.oauth_allowed_by_id = connection.allowed_by_id
    return agent


def bearer_challenge(request: HttpRequest, *, invalid_token: bool) -> str:
    """`WWW-Authenticate` for a 401 from /mcp: where the protected-resource metadata is."""
    error = 'error="invalid_token", ' if invalid_token else ""
    return f'Bearer {error}resource_metadata="{selectors.resource_metadata_url()}"'
