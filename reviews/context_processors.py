"""The number of proposals waiting, shown in the navigation for reviewers."""

from typing import Any

from django.http import HttpRequest


def review_count(request: HttpRequest) -> dict[str, Any]:
    return {}
