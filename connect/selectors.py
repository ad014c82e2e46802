"""Reads for OAuth: the agent an access token acts as, and what the screens show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, Exists, JSONField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

from agents.models import Agent, PageSetEntry
from agents.services import can_manage_agents
from connect.models import Connection, Grant
from core.tokens import token_hash
from wiki.models import Page
from wiki.scope import person_scope

RESOURCE_PATH = "/mcp"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
SUMMARY_ENTRIES = 5


def mcp_resource() -> str:
    """The MCP endpoint as an OAuth resource (RFC 8707/9728): `<QUIRE_BASE_URL>/mcp`. Never
    from the request's Host header, which the client chooses: a token's audience and the
    metadata a client trusts name the server the operator configured."""
    return settings.QUIRE_BASE_URL + RESOURCE_PATH


def resource_metadata_url() -> str:
    return settings.QUIRE_BASE_URL + RESOURCE_METADATA_PATH


def same_resource(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def connection_for_access_token(token: str, *, resource: str) -> Connection | None:
    """The live connection an unexpired access token for `resource` belongs to, with its
    agent and client, in one query; None for anything else (unknown, expired, other
    audience, ended, agent revoked, the person who allowed it deactivated)."""
    digest = token_hash(token)
    token_rows = AccessToken.objects.filter(token_checksum=digest, expires__gt=timezone.now())
    connection = (
        Connection.objects.select_related("agent", "application", "allowed_by")
        .annotate(audiences=Subquery(token_rows.values("resource")[:1], output_field=JSONField()))
        .filter(
            family=Subquery(token_rows.values("refresh_token__token_family")[:1]),
            ended_at__isnull=True,
            agent__is_active=True,
            allowed_by__is_active=True,
        )
        .first()
    )
    if connection is None:
        return None
    audiences = connection.audiences  # type: ignore[attr-defined]
    if not any(same_resource(resource, audience) for audience in audiences or []):
        return None
    return connection


@dataclass(frozen=True)
class AgentChoice:
    """An agent on the authorize screen: what it would read, and whether it may edit."""

    agent: Agent
    entry_titles: list[str]
    entry_count: int

    @property
    def more(self) -> int:
        return self.entry_count - len(self.entry_titles)


def connectable_agents(person: User) -> list[AgentChoice]:
    """The agents `person` may connect a client as: any active one for admins, else their own."""
    agents: QuerySet[Agent] = Agent.objects.filter(is_active=True)
    if not can_manage_agents(person):
        agents = agents.filter(owner=person)
    # The first few entries of each set, however large the sets are.
    first_entries = PageSetEntry.objects.select_related("page").order_by("position", "id")
    # By name: the count's GROUP BY leaves the order to the plan otherwise.
    agents = (
        agents.annotate(entry_count=Count("page_set"))
        .prefetch_related(
            Prefetch("page_set", queryset=first_entries[:SUMMARY_ENTRIES], to_attr="first_entries")
        )
        .order_by("name", "pk")
    )
    return [
        AgentChoice(
            agent=agent,
            entry_titles=[entry.page.title for entry in agent.first_entries],  # type: ignore[attr-defined]
            entry_count=agent.entry_count,  # type: ignore[attr-defined]
        )
        for agent in agents
    ]


# The top-level pages a person may pick for an agent of their own on the consent screen.
PICKABLE_PAGES = 100


def pickable_pages(person: User) -> list[Page]:
    """The top-level pages `person` may read, by title: what an agent of their own may be
    given on the consent screen (each with every page under it)."""
    pages = Page.objects.filter(person_scope(person).q(), parent__isnull=True)
    return list(pages.only("pk", "public_id", "title").order_by("title", "pk")[:PICKABLE_PAGES])


def pages_picked(person: User, page_ids: list[str]) -> list[Page]:
    """Of the page ids `person` picked on the consent screen, the top-level pages they may
    read, in the order they were sent."""
    wanted = [int(pk) for pk in page_ids if pk.isdigit()]
    pages = Page.objects.filter(person_scope(person).q(), parent__isnull=True, pk__in=wanted)
    found = pages.in_bulk()
    return [found[pk] for pk in dict.fromkeys(wanted) if pk in found]


def own_agents(person: User) -> list[Agent]:
    """The agents `person` owns, active first, for their Connected apps screen."""
    return list(Agent.objects.filter(owner=person).order_by("-is_active", "name", "pk"))


def connections_for_agent(agent: Agent) -> list[Connection]:
    """The agent's live connections, newest first, for its screen."""
    return list(
        Connection.objects.filter(agent=agent, ended_at__isnull=True).select_related(
            "application", "allowed_by"
        )
    )


def connections_allowed_by(person: User) -> list[Connection]:
    """The live connections `person` allowed, newest first, for their own list."""
    return list(
        Connection.objects.filter(allowed_by=person, ended_at__isnull=True).select_related(
            "application", "agent"
        )
    )


def unused_clients() -> QuerySet[Application]:
    """Clients that registered or were fetched and never got a connection."""
    return Application.objects.filter(
        registration_source__in=[
            Application.RegistrationSource.DCR,
            Application.RegistrationSource.CIMD,
        ]
    ).exclude(Exists(Connection.objects.filter(application=OuterRef("pk"))))


def client_exists(client_id: str) -> bool:
    return Application.objects.filter(client_id=client_id).exists()


def connection_by_id(connection_id: int) -> Connection | None:
    return (
        Connection.objects.select_related("application", "agent").filter(pk=connection_id).first()
    )


# --- for the consent screen and the validator ------------------------------------------------


def application_by_client_id(client_id: str | None) -> Application | None:
    return Application.objects.filter(client_id=client_id).first() if client_id else None


def agent_by_id(agent_id: Any) -> Agent | None:
    return Agent.objects.filter(pk=agent_id).first() if agent_id else None


def grant_by_code(code: str, application: Any) -> Grant:
    """The code's grant with its agent, person and client (the code is stored hashed)."""
    return Grant.objects.select_related("agent", "user", "application").get(
        code=code, application=application
    )


def code_is_live(code: str, application: Any) -> bool:
    """Whether the code still stands for a grant (not exchanged, not burnt)."""
    return Grant.objects.filter(code=code, application=application).exists()


def revoked_refresh_family(refresh_token: str) -> Any:
    """The chain a refresh token belonged to, if it was used (revoked) already: None else."""
    return (
        RefreshToken.objects.filter(token_checksum=token_hash(refresh_token), revoked__isnull=False)
        .values_list("token_family", flat=True)
        .first()
    )


def live_refresh_family(token: str, application: Any) -> Any:
    """The chain of a live refresh token, or of a live refresh token's access token."""
    digest = token_hash(token)
    return (
        RefreshToken.objects.filter(
            Q(token_checksum=digest) | Q(access_token__token_checksum=digest),
            application=application,
            revoked__isnull=True,
        )
        .values_list("token_family", flat=True)
        .first()
    )


def connection_is_live(family: Any) -> bool:
    """Whether the connection of a token chain still stands: not ended, its agent and the
    person who allowed it both active."""
    return Connection.objects.filter(
        family=family,
        ended_at__isnull=True,
        agent__is_active=True,
        allowed_by__is_active=True,
    ).exists()
