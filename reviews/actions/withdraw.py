"""The author takes back their own waiting proposal."""

from __future__ import annotations

from core.actors import Actor, is_agent
from core.audit import audit_record
from core.errors import Forbidden
from core.transactions import atomic_retried
from reviews.actions.flow import reviews_end
from reviews.actions.publish import lock_version
from wiki.models import Version, VersionStatus


@atomic_retried
def version_withdraw(*, actor: Actor, version: Version) -> Version:
    """Take back one's own waiting proposal."""
    mine = (
        version.author_agent_id == actor.pk
        if is_agent(actor)
        else version.author_user_id == actor.pk
    )
    if not mine:
        raise Forbidden("only the author of a proposal can withdraw it.")
    page, version = lock_version(version)
    version.move_to(VersionStatus.WITHDRAWN)
    version.save()
    reviews_end(version)
    audit_record(action="version.withdraw", actor=actor, page=page, version_number=version.number)
    return version
