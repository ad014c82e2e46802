"""Asking people by name to review, and reminding when a proposal waits past its due time.

`review_ask`: the author (or their agent's owner), a decider of the current step or an admin
asks one person who may decide that step (reviews.deciders); they get an inbox item and an
email, and the queue and the review page name them. `reviews_remind` (the beat, hourly, and
`manage.py remind_reviews`): a proposal that has not moved for its step's due time (the
step's own, else QUIRE_REVIEW_DUE_HOURS) reminds its step's deciders once, and
QUIRE_REVIEW_ESCALATE_HOURS later the admins, once; each also posts to the step's group's
chat webhook (reviews.webhooks).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from core.actors import SystemActor
from core.audit import audit_record
from core.errors import Conflict, Forbidden, NotFound
from reviews import outbox, webhooks
from reviews.deciders import deciders_of
from reviews.models import ReminderStage, Review, ReviewAsk, ReviewReminder, ReviewStatus
from wiki import permissions
from wiki.models import Version, VersionStatus


def _author_side(actor: Any, version: Version) -> bool:
    if version.author_user_id is not None:
        return bool(version.author_user_id == actor.pk)
    agent = version.author_agent
    return agent is not None and agent.owner_id == actor.pk


def may_ask(actor: Any, review: Review, version: Version) -> bool:
    if not permissions.is_active_person(actor):
        return False
    return (
        permissions.is_admin(actor)
        or _author_side(actor, version)
        or actor.pk in deciders_of([review])[review.version_id]
    )


def askable(actor: Any, review: Review, version: Version) -> list[User]:
    """Whom `actor` may ask: the step's deciders not yet asked, themselves aside."""
    if not may_ask(actor, review, version):
        return []
    asked = set(review.asks.values_list("person_id", flat=True))
    if review.version_id != version.pk or version.status != VersionStatus.IN_REVIEW:
        return []
    ids = deciders_of([review])[version.pk] - asked - {actor.pk}
    return list(User.objects.filter(pk__in=ids).order_by("username"))


def _check_may_ask(actor: Any, review: Review, version: Version) -> None:
    if not may_ask(actor, review, version):
        raise Forbidden(
            "only its author, someone who decides its current step, or an admin asks people "
            "to review it."
        )


@transaction.atomic
def review_ask_people(*, actor: User, version: Version, usernames: list[str]) -> list[ReviewAsk]:
    """Ask each person named (REST's list of user names): all of them, or nobody when one
    is refused. Who may ask is checked before names are looked up, so that a refused asker
    learns nothing about who exists."""
    review = Review.objects.filter(version=version).first()
    if review is not None:
        _check_may_ask(actor, review, version)
    wanted = list(dict.fromkeys(usernames))
    people = {u.username: u for u in User.objects.filter(username__in=wanted, is_active=True)}
    for username in wanted:
        if username not in people:
            raise NotFound(
                f"there is nobody named {username!r} who can sign in; give user names as "
                "the review page lists them.",
                detail={"person": username},
            )
    return [review_ask(actor=actor, version=version, person=people[name]) for name in wanted]


@transaction.atomic
def review_ask(*, actor: User, version: Version, person: User) -> ReviewAsk:
    version = Version.objects.select_related("page", "author_agent").get(pk=version.pk)
    review = Review.objects.filter(version=version).first()
    if version.status != VersionStatus.IN_REVIEW or review is None:
        raise Conflict(f"v{version.number} is not waiting for review: nobody can be asked.")
    _check_may_ask(actor, review, version)
    # Refusals that depend on where the review stands, not on the request's shape: 409.
    if person.pk == actor.pk:
        raise Conflict("ask someone other than yourself.", detail={"person": person.username})
    if person.pk not in deciders_of([review])[version.pk]:
        raise Conflict(
            f"{person.get_username()} cannot decide its current step: ask someone who can "
            "(the step's group, with read rights on the page).",
            detail={"person": person.get_username()},
        )
    try:
        with transaction.atomic():
            ask = ReviewAsk.objects.create(review=review, person=person, asked_by=actor)
    except IntegrityError:
        raise Conflict(f"{person.get_username()} is already asked to review it.") from None
    audit_record(
        action="review.ask",
        actor=actor,
        page=version.page,
        version_number=version.number,
        data={"person": person.get_username()},
    )
    outbox.queue_asked(version, person_id=person.pk)
    return ask


# --- reminders ----------------------------------------------------------------------------


def _moved_at(review: Any) -> datetime:
    """When the review last moved: proposed, revised, or approved at a step."""
    times = [review.started_at, review.last_approval, review.last_revision]
    return max(t for t in times if t is not None)


def reviews_remind(*, now: datetime | None = None) -> dict[str, int]:
    """Remind about every proposal waiting past its due time; returns how many reminders
    went to deciders and to admins. Each is sent once (ReviewReminder's unique rows)."""
    default_hours = settings.QUIRE_REVIEW_DUE_HOURS
    if not default_hours:
        return {}
    now = now or timezone.now()
    after = timedelta(hours=settings.QUIRE_REVIEW_ESCALATE_HOURS)
    # A step's own due time may be shorter than the default, down to an hour.
    shortest = timedelta(hours=1)
    waiting = (
        Review.objects.filter(
            status=ReviewStatus.OPEN,
            version__status=VersionStatus.IN_REVIEW,
            started_at__lte=now - shortest,
        )
        .select_related("version__page", "version__author_agent")
        .annotate(last_approval=Max("approvals__created_at"))
        .annotate(last_revision=Max("revisions__created_at"))
    )
    counts = {"deciders": 0, "admins": 0}
    for review in waiting:
        due = timedelta(hours=review.current_step.get("due_hours") or default_hours)
        waited = now - _moved_at(review)
        if waited >= due:
            counts["deciders"] += _remind(review, ReminderStage.DECIDERS, now, waited)
        if waited >= due + after:
            counts["admins"] += _remind(review, ReminderStage.ADMINS, now, waited)
    return counts


@transaction.atomic
def _remind(review: Review, stage: str, now: datetime, waited: timedelta) -> int:
    try:
        with transaction.atomic():
            ReviewReminder.objects.create(
                review=review, step=review.step, revision=review.revision, stage=stage, sent_at=now
            )
    except IntegrityError:
        return 0  # reminded already
    version = review.version
    if stage == ReminderStage.DECIDERS:
        recipients = deciders_of([review])[version.pk]
    else:
        recipients = set(permissions.admins().values_list("pk", flat=True))
    recipients -= {version.author_user_id}
    audit_record(
        action=f"review.remind_{stage}",
        actor=SystemActor("review reminders"),
        page=version.page,
        version_number=version.number,
        data={"step": review.step + 1, "recipients": len(recipients)},
    )
    outbox.queue_reminders(version, person_ids=sorted(recipients))
    webhooks.queue_reminder(review, escalated=stage == ReminderStage.ADMINS, waited=waited)
    return 1
