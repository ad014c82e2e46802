"""An earlier approved version made live again, as a new version."""

from __future__ import annotations

from core.actors import Actor
from core.audit import audit_record
from core.errors import Forbidden, InvalidArgument
from core.transactions import atomic_retried
from reviews.actions.publish import author_fields, publish_version
from wiki import permissions
from wiki.models import Page, Version, VersionKind, VersionStatus
from wiki.services import allocate_version_number, lock_page_under
from wiki.validators import validate_change_summary


@atomic_retried
def page_revert(*, actor: Actor, page: Page, to_version: Version, comment: str = "") -> Version:
    """Make an earlier approved version live again, as a new approved version."""
    if not (
        permissions.holds(actor, permissions.PUBLISH, page)
        or permissions.holds(actor, permissions.DECIDE, page)
    ):
        # Whoever may publish or decide here reverts (an agent neither publishes nor decides).
        who = permissions.holders_of(page, permissions.PUBLISH, permissions.DECIDE)
        raise Forbidden(f"only members of {who} can revert this page; ask one of them.")
    refusal = permissions.refusal(actor, permissions.PUBLISH, page)
    if refusal is not None and permissions.access_at(page).workflow_path is not None:
        raise Forbidden(refusal[0].upper() + refusal[1:])
    if to_version.page_id != page.pk:
        raise InvalidArgument("that version belongs to another page.", field="version")
    moving = to_version.parent_id != page.parent_id
    page, parent = lock_page_under(page, to_version.parent if moving else None)
    if not moving:
        parent = page.parent
    if to_version.status != VersionStatus.APPROVED:
        raise InvalidArgument(
            f"v{to_version.number} was never live ({to_version.status}); revert only to a "
            "version that was approved.",
            field="version",
        )
    if page.live_version_id == to_version.pk:
        raise InvalidArgument(f"v{to_version.number} is already live.", field="version")
    if to_version.merged_into_id is not None:
        merged_into = to_version.merged_into.number  # type: ignore[union-attr]
        raise InvalidArgument(
            f"v{to_version.number} went live merged with newer changes as v{merged_into}; "
            f"revert to v{merged_into} instead.",
            field="version",
        )
    version = Version.objects.create(
        page=page,
        number=allocate_version_number(page),
        kind=VersionKind.REPLACE,
        **to_version.content(
            parent=parent if parent is None or not parent.archived else page.parent
        ),
        change_summary=validate_change_summary(comment) or f"Reverted to v{to_version.number}.",
        base_version=page.live_version,
        reverted_from=to_version,
        **author_fields(actor),
    )
    publish_version(
        page, version, approver=actor, comment=comment or f"Reverted to v{to_version.number}."
    )
    audit_record(
        action="page.revert",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
        data={"reverted_to": to_version.number},
    )
    return version
