"""Who acts: a person, an agent, or the system itself (a management command).

A command run on the server is trusted as its operator, but it still acts under a name that
the audit trail records; nothing is ever done by "nobody".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from django.contrib.auth.models import User

if TYPE_CHECKING:
    from agents.models import Agent


@dataclass(frozen=True)
class SystemActor:
    """The server acting for its operator, e.g. `SystemActor("create_agent command")`."""

    name: str

    def __str__(self) -> str:
        return f"system ({self.name})"


Actor: TypeAlias = "User | Agent"
# Who may manage agents and page sets: an admin, or the system for its operator.
Operator: TypeAlias = "User | SystemActor"


def is_person(actor: object) -> bool:
    return isinstance(actor, User)


def is_agent(actor: object) -> bool:
    # Known by its model's label, so that this bottom layer need not import the agents app.
    meta = getattr(actor, "_meta", None)
    return meta is not None and meta.label == "agents.Agent"
