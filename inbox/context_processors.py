"""The unread count beside "Inbox" in the top bar."""

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from inbox.selectors import unread_count


def inbox_unread(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    # Lazy: screens without the top bar (errors, the login page) ask nothing.
    return {"inbox_unread": SimpleLazyObject(lambda: unread_count(user))}
