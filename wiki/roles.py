"""Who may do what: the Editors and Reviewers groups, superusers may do everything."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

EDITORS = "Editors"
REVIEWERS = "Reviewers"


def group_names(user: Any) -> set[str]:
    """The names of the groups `user` is in."""
    # Cached on the user object so a request asks the database once.
    cached: set[str] | None = getattr(user, "_quire_group_names", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._quire_group_names = cached
    return cached


def can_publish(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return bool(getattr(user, "is_superuser", False)) or EDITORS in group_names(user)


def can_review(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return bool(getattr(user, "is_superuser", False)) or REVIEWERS in group_names(user)


def in_group(user: AbstractBaseUser | AnonymousUser | None, group: str) -> bool:
    """Whether `user` is an active member of `group` (a review workflow step's group)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return group in group_names(user)
