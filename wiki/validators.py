"""The rules for what a page and a version may hold, each written once.

Every door calls these through the services (and the web forms through `clean_*`), so a limit
and its message are the same for a person in a form and an agent in a tool error.
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import InvalidArgument
from wiki.models import CHANGE_SUMMARY_MAX, MARKDOWN_MAX, TAG_MAX, TAGS_MAX, TITLE_MAX

QUERY_MAX = 200


def validate_title(title: Any) -> str:
    if not isinstance(title, str):
        raise InvalidArgument("title must be a string of 1 to 200 characters.", field="title")
    title = title.strip()
    if not 1 <= len(title) <= TITLE_MAX:
        raise InvalidArgument(
            f"title must be 1 to {TITLE_MAX} characters; it has {len(title)}. "
            "Shorten it and try again.",
            field="title",
        )
    return title


def validate_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
        raise InvalidArgument("tags must be a list of strings.", field="tags")
    cleaned: list[str] = []
    for tag in tags:
        tag = tag.strip()
        if not tag:
            continue
        if len(tag) > TAG_MAX:
            raise InvalidArgument(
                f"each tag must be 1 to {TAG_MAX} characters; {tag[:20]!r}... has {len(tag)}.",
                field="tags",
            )
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > TAGS_MAX:
        raise InvalidArgument(
            f"a page can have at most {TAGS_MAX} tags; you gave {len(cleaned)}. "
            "Keep the most useful ones.",
            field="tags",
        )
    return cleaned


def validate_markdown(text: Any, *, field: str = "markdown", required: bool = False) -> str:
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise InvalidArgument(f"{field} must be a string of markdown.", field=field)
    text = text.replace("\r\n", "\n").replace("\x00", "")
    if len(text) > MARKDOWN_MAX:
        raise InvalidArgument(
            f"{field} can be at most {MARKDOWN_MAX:,} characters; it has {len(text):,}. "
            "Split the content over several pages.",
            field=field,
        )
    if required and not text.strip():
        raise InvalidArgument(f"{field} must not be empty.", field=field)
    return text


_CONFLICT_MARKER = re.compile(r"^(<<<<<<<|=======|>>>>>>>)( |$)", re.MULTILINE)


def validate_resolved_markdown(text: Any) -> str:
    """Markdown that came out of a three-way merge, with every conflict resolved."""
    text = validate_markdown(text)
    if _CONFLICT_MARKER.search(text):
        raise InvalidArgument(
            "the text still has conflict markers (<<<<<<<, =======, >>>>>>>). Keep the lines "
            "you want, delete the markers, then save.",
            field="markdown",
        )
    return text


def validate_change_summary(summary: Any, *, required: bool = False) -> str:
    if summary is None:
        summary = ""
    if not isinstance(summary, str):
        raise InvalidArgument("changeSummary must be a string.", field="change_summary")
    summary = " ".join(summary.split())
    if len(summary) > CHANGE_SUMMARY_MAX:
        raise InvalidArgument(
            f"the change summary can be at most {CHANGE_SUMMARY_MAX} characters; "
            f"it has {len(summary)}. Say it in one sentence.",
            field="change_summary",
        )
    if required and not summary:
        raise InvalidArgument(
            "a change summary is required: say in one sentence what you changed and why.",
            field="change_summary",
        )
    return summary


def validate_query(query: Any, *, required: bool = True) -> str:
    """A search query: its words, with runs of white space folded, 1 to QUERY_MAX characters."""
    if query is None:
        query = ""
    if not isinstance(query, str):
        raise InvalidArgument("query must be a string of words.", field="query")
    query = " ".join(query.split())
    if len(query) > QUERY_MAX or (required and not query):
        raise InvalidArgument(
            f"query must be 1 to {QUERY_MAX} characters; it has {len(query)}. "
            "Use a few distinctive words.",
            field="query",
        )
    return query
