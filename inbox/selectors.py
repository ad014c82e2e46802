"""What a person's inbox shows, and the unread count in the top bar."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from inbox.models import WAITING_KINDS, Channel, ChannelChoice, InboxItem, Kind
from wiki.models import VersionStatus

INBOX_PAGE = 100


# Items asking to act on a proposal that no longer waits for review (withdrawn, decided): they
# leave "waiting" and the unread count at once, whichever door ended the review; an approval
# undone makes them wait again.
SETTLED = Q(kind__in=WAITING_KINDS) & ~Q(version__status=VersionStatus.IN_REVIEW)


def unread_count(user: Any) -> int:
    if user is None or not user.is_authenticated:
        return 0
    return InboxItem.objects.filter(recipient=user, read_at__isnull=True).exclude(SETTLED).count()


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
