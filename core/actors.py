"""Who acts: a person, an agent, or the system itself (a management command).

A command run on the server is trusted as its operator, but it still acts under a name that
the audit trail records; nothing is ever done by "nobody". Apps below agents (reviews, wiki)
ask `is_agent(actor)` here rather than import the agents app to test for its model.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, TypeAlias

from django.contrib.auth.models import User

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from agents.models import Agent


class ActorKind(enum.Enum):
    PERSON = "person"
    AGENT = "agent"
    SYSTEM = "system"


@dataclass(frozen=True)
class SystemActor:
    """The server acting for its operator, e.g. `SystemActor("create_agent command")`."""

    name: str
    actor_kind: ClassVar[ActorKind] = ActorKind.SYSTEM

    def __str__(self) -> str:
        return f"system ({self.name})"


Actor: TypeAlias = "User | Agent"
# Who may manage agents and page sets: an admin, or the system for its operator.
Operator: TypeAlias = "User | SystemActor"


def actor_kind(actor: object) -> ActorKind | None:
    """What kind of actor `actor` is: a person (Django's user), or whatever declares its kind
    in a class attribute `actor_kind` (an agent, the system); None for anything else, such
    as an anonymous visitor."""
    if isinstance(actor, User):
        return ActorKind.PERSON
    kind = getattr(type(actor), "actor_kind", None)
    return kind if isinstance(kind, ActorKind) else None


def is_person(actor: object) -> TypeIs[User]:
    return actor_kind(actor) is ActorKind.PERSON


def is_agent(actor: object) -> TypeIs[Agent]:
    return actor_kind(actor) is ActorKind.AGENT
