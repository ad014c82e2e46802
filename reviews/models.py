"""Review-side state: reviewers' notification preferences."""

from django.conf import settings
from django.db import models


class NotificationPreference(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately"
    DAILY = "daily", "Daily digest"
    OFF = "off", "Off"


class ReviewerSettings(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviewer_settings"
    )
    notifications = models.CharField(
        max_length=10,
        choices=NotificationPreference.choices,
        default=NotificationPreference.IMMEDIATE,
    )

    class Meta:
        verbose_name = "reviewer's email setting"
        verbose_name_plural = "reviewers' email settings"

    def __str__(self) -> str:
        return f"{self.user} ({self.notifications})"


class NotificationKind(models.TextChoices):
    REVIEW_REQUESTED = "review_requested", "Review requested"
    DECISION = "decision", "Decision"


class NotificationDelivery(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately"
    DIGEST = "digest", "In the daily digest"


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    SKIPPED = "skipped", "Skipped"
    FAILED = "failed", "Failed"


class Notification(models.Model):
    """Outbox: one email owed to one person, written in the transaction of the change.

    A broker or SMTP outage leaves the row pending; the sweep task sends it later.
    """

    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    delivery = models.CharField(
        max_length=10, choices=NotificationDelivery.choices, default=NotificationDelivery.IMMEDIATE
    )
    version = models.ForeignKey(
        "wiki.Version", on_delete=models.CASCADE, related_name="notifications"
    )
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    status = models.CharField(
        max_length=10, choices=NotificationStatus.choices, default=NotificationStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "delivery"], name="notification_status_delivery")]

    def __str__(self) -> str:
        return f"{self.kind} to {self.recipient_id} ({self.status})"


class ApiToken(models.Model):
    """A REST API key: only its SHA-256 is stored (like agent tokens); the key is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    prefix = models.CharField(
        max_length=12, help_text="The key's first characters, to tell keys apart."
    )
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
