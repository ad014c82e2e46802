"""What reaches a person inside Quire: inbox items, and how each kind of news reaches them."""

from django.conf import settings
from django.db import models


class Kind(models.TextChoices):
    """The same names as the outbox's kinds of email (reviews.models.NotificationKind)."""

    REVIEW_REQUESTED = "review_requested", "Waiting on you"
    DECISION = "decision", "Decided about yours"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    NOBODY_DECIDES = "nobody_decides", "Nobody can decide"
    REVIEW_ASKED = "review_asked", "Asked of you by name"
    REVIEW_REMINDER = "review_reminder", "Reminder: still waiting"
    REVIEW_WITHDRAWN = "review_withdrawn", "No longer waits on you"


# The kinds of news that ask the recipient to act on a proposal while it waits for review.
WAITING_KINDS = frozenset(
    {Kind.REVIEW_REQUESTED, Kind.REVIEW_ASKED, Kind.REVIEW_REMINDER, Kind.NOBODY_DECIDES}
)


class Channel(models.TextChoices):
    BOTH = "both", "Inbox and email"
    INBOX = "inbox", "Inbox only"
    EMAIL = "email", "Email only"


class InboxItem(models.Model):
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="inbox_items"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    version = models.ForeignKey("wiki.Version", on_delete=models.CASCADE, related_name="+")
    # What the reviewer wrote with it, as they wrote it then (a request for changes; a
    # rejection's words are on the version itself).
    note = models.TextField(blank=True, default="")
    note_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["recipient", "read_at"], name="inbox_recipient_read")]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id}"

    @property
    def settled(self) -> bool:
        """A call to act on a proposal that no longer waits (withdrawn, decided): shown as no
        longer waiting, never counted unread (inbox.selectors.unread_count)."""
        return self.kind in WAITING_KINDS and self.version.status != "in_review"


class ChannelChoice(models.Model):
    """How one kind of news reaches one person; without a row, both ways."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="channel_choices"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.BOTH)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="channel_choice_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind}: {self.channel}"
