"""How a reviewer hears about proposals."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from core.audit import audit_record
from core.errors import Forbidden, InvalidArgument
from reviews.models import NotificationPreference, ReviewerSettings
from wiki import permissions
from wiki.roles import can_review


@transaction.atomic
def reviewer_notifications_set(
    *, actor: User, preference: str, reviewer: User | None = None
) -> ReviewerSettings:
    """Choose how a reviewer hears about proposals: immediately, a daily digest, or not.

    A reviewer sets their own; an admin (superuser) may set anyone's, e.g. in the Django admin.
    """
    reviewer = reviewer or actor
    if reviewer.pk != actor.pk and not permissions.is_admin(actor):
        raise Forbidden("only admins can change another reviewer's email preference.")
    if not can_review(reviewer):
        raise Forbidden(
            f"{reviewer.get_username()} is not a reviewer and receives no review emails."
        )
    if preference not in NotificationPreference.values:
        choices = ", ".join(NotificationPreference.values)
        raise InvalidArgument(f"choose one of: {choices}.", field="notifications")
    row, _ = ReviewerSettings.objects.select_for_update().get_or_create(user=reviewer)
    if row.notifications != preference:
        row.notifications = preference
        row.save(update_fields=["notifications"])
        audit_record(
            action="reviewer.notifications",
            actor=actor,
            data={"to": preference, "reviewer": reviewer.get_username()},
        )
    return row
