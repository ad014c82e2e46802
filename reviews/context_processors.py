"""The number of proposals waiting, shown in the navigation for reviewers."""

from typing import Any

from django.http import HttpRequest

from reviews.selectors import waiting_count
from wiki.roles import can_review


def review_count(request: HttpRequest) -> dict[str, Any]:
    if not can_review(getattr(request, "user", None)):
        return {}
    return {"reviews_waiting": waiting_count()}
