"""What a person was shown of a proposal: its whole change against one live version, in a
queue row, on its review page or over REST. A batch decision decides nothing else.

No GET writes here: each screen renders a keyed digest (`shown_token`); the queue's and the
review page's "seen" POSTs record the rows whose digest is current (`DiffShown`), and a REST
batch item carries the digest its read answered."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from django.contrib.auth.models import User
from django.utils.crypto import constant_time_compare, salted_hmac

from core.errors import Conflict
from reviews.models import DiffShown
from wiki.models import Version, VersionKind, VersionStatus

WHERE = ("queue", "page", "api")  # "api": rows from before REST carried the digest


def shown_digest(version: Version, live: Version | None) -> str:
    """Names the change as shown: the proposal's own text and fields, against `live`. A new
    live version, a revision or a reviewer's edit makes another digest."""
    text = version.proposed_body if version.kind == VersionKind.APPEND else version.body
    parts = [
        str(version.pk),
        str(live.pk if live is not None else 0),
        version.kind,
        text,
        version.title,
        json.dumps(version.tags),
        str(version.parent_id),
        version.instructions,
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def diffs_shown_record(*, viewer: User, versions: Sequence[Version], where: str) -> None:
    """Note that `viewer` was shown each of `versions` whole against its page's live version
    (the rows as loaded, with `page.live_version`): one statement for a screen of rows."""
    assert where in WHERE
    if not versions or not viewer.is_authenticated:
        return
    DiffShown.objects.bulk_create(
        [
            DiffShown(
                user=viewer,
                version=version,
                digest=shown_digest(version, version.page.live_version),
                where=where,
            )
            for version in versions
        ],
        ignore_conflicts=True,
    )


def was_shown(viewer: User, version: Version, live: Version | None) -> bool:
    """Whether `viewer` was shown `version` as it stands, against `live`."""
    return DiffShown.objects.filter(
        user=viewer, version=version, digest=shown_digest(version, live)
    ).exists()


# The review page carries what it showed in its forms: a keyed digest of the change as shown
# to this person (below). A decision posted with it is refused when the proposal or its live
# version changed since the page was opened; the page's "seen" POST records the DiffShown row
# a batch asks for. A GET writes nothing.
_SALT = "reviews.shown.page"


def shown_token(viewer: User, version: Version, live: Version | None) -> str:
    """What the review page showed `viewer`, keyed with the site's secret (only a page this
    server rendered for this person carries it)."""
    value = f"{viewer.pk}:{shown_digest(version, live)}"
    return salted_hmac(_SALT, value, algorithm="sha256").hexdigest()


def shown_token_is_current(viewer: User, version: Version, token: str) -> bool:
    """Whether `token` names `version` as it stands now, against its page's live version."""
    current = shown_token(viewer, version, version.page.live_version)
    return constant_time_compare(token, current)


def shown_confirm(viewer: User, version: Version, token: str | None) -> None:
    """Refuse a decision taken on a diff that is no longer the proposal's: a revision, a
    reviewer's edit or a newer live version since the page was opened; a current one is
    recorded as shown. No token (a form without it, a script): nothing to compare, the
    decision's own checks apply."""
    if token is None:
        return
    if shown_token_is_current(viewer, version, token):
        # Decided from a page that showed it as it stands: shown, whatever the decision
        # meets next (its "seen" POST may not have arrived yet).
        diffs_shown_record(viewer=viewer, versions=[version], where="page")
        return
    raise Conflict(
        "the proposal changed since you opened it: review the new diff below, then "
        "decide again. Nothing was recorded.",
        detail={"reason": "shown_changed"},
    )


def page_shown_record(viewer: User, version: Version, token: str) -> bool:
    """The review page's "seen" POST: note that `viewer` was shown `version` whole on its
    page, when `token` is what the page showed and it is still current."""
    if not shown_token_is_current(viewer, version, token):
        return False
    diffs_shown_record(viewer=viewer, versions=[version], where="page")
    return True


def queue_shown_values(viewer: User, versions: Sequence[Version]) -> list[str]:
    """What the queue showed `viewer` whole, for its "seen" POST and its batch form: one
    "<version id>:<digest>" a row, keyed like the review page's (`shown_token`)."""
    return [
        f"{version.pk}:{shown_token(viewer, version, version.page.live_version)}"
        for version in versions
    ]


def queue_shown_record(viewer: User, values: Sequence[str], *, limit: int) -> int:
    """The queue's "seen" POST (and its batch form): note that `viewer` was shown whole each
    proposal whose value (`queue_shown_values`, at most `limit`) names it as it stands now.
    Only a digest this server rendered for this person counts; an id alone, another
    person's digest or one of a proposal changed since records nothing. Returns how many."""
    tokens: dict[int, str] = {}
    for value in values[:limit]:
        pk, _, token = str(value).partition(":")
        if pk.isdigit() and token:
            tokens[int(pk)] = token
    if not tokens or not viewer.is_authenticated:
        return 0
    versions = [
        version
        for version in Version.objects.filter(
            pk__in=tokens, status=VersionStatus.IN_REVIEW
        ).select_related("page__live_version")
        if shown_token_is_current(viewer, version, tokens[version.pk])
    ]
    diffs_shown_record(viewer=viewer, versions=versions, where="queue")
    return len(versions)
