"""The Reviews link and the number of proposals waiting in the person's queue."""

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from reviews.selectors import sees_queue, waiting_count


def review_count(request: HttpRequest) -> dict[str, Any]:
    """Whoever may decide something has the Reviews link; its count is their queue's (only
    what they may read, and for a non-reviewer only what they may decide). Lazy: screens
    without the top bar ask nothing."""
    user = getattr(request, "user", None)
    link = SimpleLazyObject(lambda: sees_queue(user))
    return {
        "reviews_link": link,
        "reviews_waiting": SimpleLazyObject(lambda: waiting_count(user) if link else 0),
    }
