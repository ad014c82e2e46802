"""What the people and groups screens show, each in a constant number of queries."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db.models import Count, Prefetch, Q, QuerySet

from connect.models import Connection
from reviews.models import ApiToken, GroupWebhook, WorkflowStep
from wiki.models import PageGrant


def people_list(*, query: str = "") -> QuerySet[User]:
    people = (
        User.objects.order_by("-is_active", "username")
        .select_related("sso_identity")
        .prefetch_related(Prefetch("groups", queryset=Group.objects.order_by("name")))
    )
    if query:
        people = people.filter(
            Q(username__icontains=query)
            | Q(email__icontains=query)
            | Q(first_name__icontains=query)
            | Q(last_name__icontains=query)
        )
    return people


def person_by_id(person_id: int) -> User | None:
    return User.objects.select_related("sso_identity").filter(pk=person_id).first()


@dataclass(frozen=True)
class Ways:
    """Every way a person is in: what deactivating them ends."""

    sessions: int
    api_keys: int
    connections: int


def ways_in(person: User) -> Ways:
    return Ways(
        sessions=person.sign_in_sessions.count(),
        api_keys=ApiToken.objects.filter(user=person).count(),
        connections=Connection.objects.filter(allowed_by=person, ended_at__isnull=True).count(),
    )


def groups_list() -> QuerySet[Group]:
    return Group.objects.order_by("name").annotate(
        member_count=Count("user", filter=Q(user__is_active=True), distinct=True),
        grant_count=Count("page_grants", distinct=True),
    )


def group_by_id(group_id: int) -> Group | None:
    return Group.objects.filter(pk=group_id).first()


def group_members(group: Group) -> QuerySet[User]:
    return group.user_set.order_by("-is_active", "username")


def group_grants(group: Group) -> list[PageGrant]:
    """What the group may do and where: its grants, the pages by path."""
    return list(PageGrant.objects.filter(group=group).select_related("page").order_by("page__path"))


def group_steps(group: Group) -> list[WorkflowStep]:
    """The review workflow steps this group decides."""
    return list(
        WorkflowStep.objects.filter(group=group)
        .select_related("workflow")
        .prefetch_related("workflow__assignments__page")
        .order_by("workflow__name", "position")
    )


def not_members(group: Group) -> QuerySet[User]:
    return User.objects.filter(is_active=True).exclude(groups=group).order_by("username")


def groups_by_name() -> QuerySet[Group]:
    return Group.objects.order_by("name")


def active_people() -> QuerySet[User]:
    return User.objects.filter(is_active=True).order_by("username")


def group_webhook_url(group: Group) -> str:
    """Where the group's review requests are posted, or empty."""
    hook = GroupWebhook.objects.filter(group=group).first()
    return hook.url if hook is not None else ""


def people_by_email(email: str) -> QuerySet[User]:
    """Who may be sent a password reset link for `email`: active people with that address,
    an invited person who never chose a password included."""
    return User.objects.filter(email__iexact=email.strip(), is_active=True).exclude(email="")
