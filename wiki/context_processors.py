"""Template context shared by every page of the web UI."""

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from wiki.permissions import is_admin
from wiki.roles import can_publish, can_review
from wiki.scope import person_scope
from wiki.selectors import page_tree


def quire(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    # Every screen shows the same sidebar; screens that do not pass their own tree get the
    # top level, read only if the template shows it (the login and error pages do not).
    tree = SimpleLazyObject(lambda: page_tree(reader=person_scope(user)))
    return {
        "can_publish": can_publish(user),
        "can_review": can_review(user),
        # Who is an admin, as wiki.permissions says it (an active superuser).
        "is_admin": is_admin(user),
        "tree": tree,
    }
