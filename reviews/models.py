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

    def __str__(self) -> str:
        return f"{self.user} ({self.notifications})"
