"""What agents/ tells other apps without importing them (OAuth connections follow it)."""

from django.dispatch import Signal

# Sent inside the transaction that rotated or revoked an agent's token, with `agent`, `actor`
# and `reason`: every other credential for the agent must end with it.
agent_access_replaced = Signal()
