"""What a person was shown of a proposal: its whole change against one live version, in a
queue row, on its review page or over REST. A batch decision decides nothing else."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from django.contrib.auth.models import User

from reviews.models import DiffShown
from wiki.models import Version, VersionKind

WHERE = ("queue", "page", "api")


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
