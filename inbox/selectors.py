"""What a person's inbox shows, and the unread count in the top bar."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from inbox.models import Channel, ChannelChoice, InboxItem, Kind

INBOX_PAGE = 100


def unread_count(user: Any) -> int:
    if user is None or not user.is_authenticated:
        return 0
    return InboxItem.objects.filter(recipient=user, read_at__isnull=True).count()


def items(user: Any) -> QuerySet[InboxItem]:
    return (
        InboxItem.objects.filter(recipient=user)
        .select_related(
            "version__page",
            "version__author_user",
            "version__author_agent",
            "version__decided_by",
            "note_by",
        )
        .order_by("-created_at", "-id")[:INBOX_PAGE]
    )


def channel_choices(user: Any) -> list[tuple[str, str, str]]:
    """(kind, its label, the channel chosen) for every kind, the default where unset."""
    chosen = dict(ChannelChoice.objects.filter(user=user).values_list("kind", "channel"))
    return [(kind, label, chosen.get(kind, Channel.BOTH)) for kind, label in Kind.choices]
