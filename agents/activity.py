"""recent_activity: what changed in an agent's set since a time, for an agent coming back.

Pages published in the set, newest first, and, for an editing agent, the decisions on its own
proposals; two queries per answer (the set's entries, the versions) whatever the size of the
set, paged like browse.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from agents import selectors
from agents.models import Agent
from core.errors import InvalidArgument
from reviews.models import CommentKind, ReviewComment
from wiki.models import Page, Version, VersionStatus

PAGE_SIZE = 200  # at most, with `limit`
DEFAULT_LIMIT = 50  # an agent coming back after an import wants the gist, not every page
DEFAULT_DAYS = 7
# A decision is any move out of review but the author's own withdrawal.
_NOT_DECISIONS = (VersionStatus.IN_REVIEW, VersionStatus.WITHDRAWN)


@dataclass(frozen=True)
class Activity:
    since: datetime
    published: list[dict[str, Any]]
    decisions: list[dict[str, Any]] | None  # None for an agent that cannot propose
    next_cursor: str | None


def recent_activity(
    agent: Agent, *, since: str | None, cursor: str | None, limit: int = DEFAULT_LIMIT
) -> Activity:
    """What was published in the agent's set since `since` (default: 7 days ago), and the
    decisions on its own proposals (a reviewer's request for changes among them), newest
    first, `limit` versions at a time (at most PAGE_SIZE)."""
    limit = max(1, min(limit, PAGE_SIZE))
    start, after = _start_and_place(since, cursor)
    scope = selectors.agent_scope(agent)
    readable = Page.objects.filter(scope.q())
    wanted = Q(status=VersionStatus.APPROVED, page__in=readable)
    # Its own proposals on pages of its set, live or not (yet): a new page it proposed that
    # was rejected never went live.
    own_pages = Page.objects.filter(scope.q(readable=False), archived=False)
    if agent.can_edit_pages:
        wanted |= Q(author_agent=agent, page__in=own_pages) & ~Q(status__in=_NOT_DECISIONS)
    versions = Version.objects.filter(wanted, decided_at__gte=start)
    if after is not None:
        at, pk = after
        versions = versions.filter(Q(decided_at__lt=at) | Q(decided_at=at, pk__lt=pk))
    rows = list(
        versions.select_related("page")
        .annotate(page_hidden_prefix=scope.hidden_prefix("page__path"))
        .only(
            "pk",
            "number",
            "title",
            "status",
            "change_summary",
            "decision_comment",
            "decided_at",
            "author_agent_id",
            "page__public_id",
            "page__path",
        )
        .order_by("-decided_at", "-pk")[: limit + 1]
    )
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = _encode_cursor(start, rows[-1]) if more else None
    decisions = None
    if agent.can_edit_pages:
        decisions = [_decision(v) for v in rows if v.author_agent_id == agent.pk]
        # The same stretch of time as this answer's versions: from the last one (or `start`
        # on the last answer) to the cursor's place (or now).
        oldest = rows[-1].decided_at if more and rows[-1].decided_at else start
        decisions += _change_requests(agent, own_pages, oldest, after[0] if after else None)
        decisions.sort(key=lambda decision: decision["decidedAt"], reverse=True)
    return Activity(
        since=start,
        published=[
            _published(v, scope.shown(v.page.path, v.page_hidden_prefix))  # type: ignore[attr-defined]
            for v in rows
            if v.status == VersionStatus.APPROVED
        ],
        decisions=decisions,
        next_cursor=next_cursor,
    )


def _start_and_place(
    since: str | None, cursor: str | None
) -> tuple[datetime, tuple[datetime, int] | None]:
    """Where an answer starts (`since`, the cursor's own, or 7 days ago) and the place in
    the versions a cursor continues from (None: the newest)."""
    start = _parse_since(since) if since is not None else None
    after: tuple[datetime, int] | None = None
    if cursor:
        from_cursor, after = _decode_cursor(cursor)
        if start is not None and start != from_cursor:
            raise InvalidArgument(
                "this cursor continues a recent_activity with another since; pass the same "
                "since, or leave since out with a cursor."
            )
        start = from_cursor
    if start is None:
        start = timezone.now() - timedelta(days=DEFAULT_DAYS)
    return start, after


def _change_requests(
    agent: Agent, own_pages: Any, oldest: datetime, before: datetime | None
) -> list[dict[str, Any]]:
    """Reviewers' requests for changes to the agent's proposals on pages of its set, made
    from `oldest` up to `before` (None: now), newest first."""
    requests = ReviewComment.objects.filter(
        kind=CommentKind.CHANGES_REQUESTED,
        version__author_agent=agent,
        version__page__in=own_pages,
        created_at__gte=oldest,
    )
    if before is not None:
        requests = requests.filter(created_at__lt=before)
    return [
        _change_request(comment)
        for comment in requests.select_related("version__page").order_by("-created_at")
    ]


def _iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment is not None else ""


def _published(version: Version, path: str) -> dict[str, Any]:
    return {
        "pageId": version.page.public_id,
        "title": version.title,
        "path": path,
        "versionNumber": version.number,
        "publishedAt": _iso(version.decided_at),
        "changeSummary": version.change_summary,
    }


def _decision(version: Version) -> dict[str, Any]:
    return {
        "pageId": version.page.public_id,
        "title": version.title,
        "versionNumber": version.number,
        "status": version.status,
        "comment": version.decision_comment,
        "decidedAt": _iso(version.decided_at),
    }


def _change_request(comment: ReviewComment) -> dict[str, Any]:
    """A reviewer's request for changes on one of the agent's proposals: it stays in review,
    waiting for the agent's revision (get_page_source shows the draft and the reason)."""
    return {
        "pageId": comment.version.page.public_id,
        "title": comment.version.title,
        "versionNumber": comment.version.number,
        "status": "changes_requested",
        "comment": comment.body,
        "decidedAt": _iso(comment.created_at),
    }


def _parse_since(since: str) -> datetime:
    try:
        moment = datetime.fromisoformat(since.strip())
    except ValueError:
        raise InvalidArgument(
            f"since must be an ISO 8601 time such as 2026-11-30T09:00:00Z, not {since[:40]!r}."
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _encode_cursor(since: datetime, last: Version) -> str:
    assert last.decided_at is not None
    raw = json.dumps(
        {"since": since.isoformat(), "at": last.decided_at.isoformat(), "id": last.pk},
        separators=(",", ":"),
    )
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, tuple[datetime, int]]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        position = json.loads(raw)
        if isinstance(position, dict) and isinstance(position.get("id"), int):
            since = datetime.fromisoformat(position["since"])
            at = datetime.fromisoformat(position["at"])
            return since, (at, position["id"])
    except (binascii.Error, ValueError, UnicodeDecodeError, TypeError, KeyError):
        pass
    raise InvalidArgument(
        "cursor is not one that recent_activity gave; call recent_activity without a cursor "
        "to start again."
    )
