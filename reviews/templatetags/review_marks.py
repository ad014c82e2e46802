"""Template filter that shows invisible and bidirectional-control characters as badges."""

from django import template
from django.utils.safestring import SafeString, mark_safe

from reviews.diff import show

register = template.Library()


@register.filter
def visible_chars(value: object) -> SafeString:
    """Escape `value` and make every invisible character visible (see reviews.diff.show)."""
    return mark_safe(show("" if value is None else str(value)))
