"""`{% agent_connections agent %}`: the agent screen's list of connected apps, rendered by this
app so that agents/ needs no import of it."""

from typing import Any

from django import template

from connect import selectors

register = template.Library()


@register.inclusion_tag("connect/_connections.html", takes_context=True)
def agent_connections(context: template.Context, agent: Any) -> dict[str, Any]:
    return {
        "connections": selectors.connections_for_agent(agent),
        "csrf_token": context.get("csrf_token"),
    }
