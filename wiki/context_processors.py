"""Template context shared by every page of the web UI."""

from typing import Any

from django.http import HttpRequest

from wiki.roles import can_publish, can_review


def quire(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    return {
        "can_publish": can_publish(user),
        "can_review": can_review(user),
    }
