"""The MCP rate limit: each agent's calls counted in fixed one-minute windows."""

import time

from django.conf import settings

from agents.models import Agent
from config.cache import counter_hit
from core.errors import RateLimited

RATE_WINDOW_SECONDS = 60
# A window's counter outlives it, so that a clock a little behind still finds it.
RATE_COUNTER_SECONDS = RATE_WINDOW_SECONDS * 2
# The rate limit's clock (seconds since the epoch); tests fix it so their calls share a window.
rate_clock = time.time


def rate_counter(agent: Agent) -> str:
    """The counter of the agent's calls in the current one-minute window."""
    return f"quire:mcp-calls:{agent.pk}:{int(rate_clock() // RATE_WINDOW_SECONDS)}"


def rate_limited(agent: Agent, counted: int | None = None) -> RateLimited | None:
    """Count this call in the agent's fixed one-minute window (unless `counted`: its count,
    already made with the token's check); past the limit, refuse it."""
    limit = settings.QUIRE_AGENT_RATE_LIMIT
    count = (
        counted
        if counted is not None
        else counter_hit(rate_counter(agent), timeout=RATE_COUNTER_SECONDS)
    )
    if count <= limit:
        return None
    wait = RATE_WINDOW_SECONDS - int(rate_clock()) % RATE_WINDOW_SECONDS
    return RateLimited(
        f"you made more than {limit} calls this minute. Wait {wait} seconds and try again."
    )
