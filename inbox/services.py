"""Filling and reading the inbox, and each person's choice of channel per kind.

reviews/outbox.py calls `deliver` in the one place where it writes the notifications it owes,
inside the transaction of the change: the inbox gets what the person chose to see there, and
the outbox keeps only the emails they still want.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import InvalidArgument, NotFound
from inbox.models import Channel, ChannelChoice, InboxItem, Kind


def channels_for(recipient_ids: Iterable[int]) -> dict[tuple[int, str], str]:
    """(person, kind) -> channel for the given people, in one query; missing: both."""
    rows = ChannelChoice.objects.filter(user_id__in=set(recipient_ids)).values_list(
        "user_id", "kind", "channel"
    )
    return {(user_id, kind): channel for user_id, kind, channel in rows}


def deliver(
    owed: list[tuple[int, str, int, bool]], *, note: str = "", note_by_id: int | None = None
) -> set[int]:
    """Inbox items for (recipient, kind, version, wants_email) owed at once, each carrying
    `note`, what `note_by_id` wrote with it.

    Returns the positions in `owed` whose email should still be sent. A person whose email
    preference is off (`wants_email` false) still gets the inbox item unless they chose
    email only.
    """
    if not owed:
        return set()
    channels = channels_for(recipient for recipient, _, _, _ in owed)
    items, emails = [], set()
    for position, (recipient, kind, version_id, wants_email) in enumerate(owed):
        channel = channels.get((recipient, kind), Channel.BOTH)
        if channel in (Channel.BOTH, Channel.INBOX):
            items.append(
                InboxItem(
                    recipient_id=recipient,
                    kind=kind,
                    version_id=version_id,
                    note=note,
                    note_by_id=note_by_id,
                )
            )
        if wants_email and channel in (Channel.BOTH, Channel.EMAIL):
            emails.add(position)
    InboxItem.objects.bulk_create(items)
    return emails


@transaction.atomic
def channel_set(*, actor: Any, kind: str, channel: str) -> None:
    if kind not in Kind.values:
        raise InvalidArgument(f"unknown kind of news {kind!r}.", field="kind")
    if channel not in Channel.values:
        raise InvalidArgument(
            f"choose one of: {', '.join(Channel.values)}.", field=f"channel-{kind}"
        )
    ChannelChoice.objects.update_or_create(user=actor, kind=kind, defaults={"channel": channel})
    audit_record(action="inbox.channel", actor=actor, data={"kind": kind, "channel": channel})


def item_open(*, actor: Any, item_id: int) -> InboxItem:
    """The person opened an item: it is read from now on. Only their own items."""
    item = (
        InboxItem.objects.select_related("version__page")
        .filter(pk=item_id, recipient=actor)
        .first()
    )
    if item is None:
        raise NotFound("no such item in your inbox.")
    if item.read_at is None:
        item.read_at = timezone.now()
        InboxItem.objects.filter(pk=item.pk, read_at__isnull=True).update(read_at=item.read_at)
    return item


def items_read_all(*, actor: Any) -> int:
    return InboxItem.objects.filter(recipient=actor, read_at__isnull=True).update(
        read_at=timezone.now()
    )


def withdraw(*, version_id: int, kind: str, besides: Iterable[int] = ()) -> int:
    """News taken back before anyone read it (an approval undone): its unread items go,
    but those of the people in `besides` (for whom it still holds)."""
    deleted, _ = (
        InboxItem.objects.filter(version_id=version_id, kind=kind, read_at__isnull=True)
        .exclude(recipient_id__in=list(besides))
        .delete()
    )
    return deleted
