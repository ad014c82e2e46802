"""`{% page_workflow page as applied %}`: the review workflow a page's proposals go through."""

from __future__ import annotations

from django import template

from reviews.workflows import AppliedWorkflow, applicable_workflow
from wiki.models import Page

register = template.Library()


@register.simple_tag
def page_workflow(page: Page) -> AppliedWorkflow:
    return applicable_workflow(page)
