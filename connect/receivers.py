"""Connections end when what they rely on ends: the agent's token, or the person's account."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models.signals import post_save
from django.dispatch import receiver

from agents.signals import agent_access_replaced
from connect import services


@receiver(agent_access_replaced)
def end_agent_connections(
    sender: Any, *, agent: Any, actor: Any, reason: str, **kwargs: Any
) -> None:
    services.connections_end_for_agent(agent=agent, actor=actor, reason=reason)


@receiver(post_save, sender=User)
def end_deactivated_person_connections(
    sender: Any, instance: User, created: bool, **kwargs: Any
) -> None:
    if not created and not instance.is_active:
        services.connections_end_for_person(person=instance, reason="account deactivated")
