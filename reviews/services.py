"""State changes on the review side that are not decisions (those live in wiki/services.py)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from reviews.models import NotificationPreference, ReviewerSettings
from wiki.audit import audit_record
from wiki.errors import Forbidden, InvalidArgument
from wiki.roles import can_review


@transaction.atomic
def reviewer_notifications_set(*, actor: User, preference: str) -> ReviewerSettings:
    """Choose how a reviewer hears about proposals: immediately, a daily digest, or not."""
    if not can_review(actor):
        raise Forbidden("only reviewers receive review emails.")
    if preference not in NotificationPreference.values:
        choices = ", ".join(NotificationPreference.values)
        raise InvalidArgument(f"choose one of: {choices}.", field="notifications")
    row, _ = ReviewerSettings.objects.select_for_update().get_or_create(user=actor)
    if row.notifications != preference:
        row.notifications = preference
        row.save(update_fields=["notifications"])
        audit_record(action="reviewer.notifications", actor=actor, data={"to": preference})
    return row
