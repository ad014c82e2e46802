"""A new version of a page: proposed for review (withdrawing or carrying the author's
waiting one), or published at once by an editor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.actors import Actor, is_agent
from core.audit import audit_record
from core.errors import Conflict, InvalidArgument, NotFound
from core.transactions import atomic_retried
from core.unset import UNSET, Unset
from reviews import outbox
from reviews.actions.flow import connector_of, review_continue, reviews_end, reviews_start
from reviews.actions.publish import author_fields, fill_append, publish_version
from reviews.actions.rules import (
    PUBLISHED_DIRECTLY,
    check_can_propose,
    check_can_propose_here,
    check_can_publish,
)
from reviews.classify import classify_into
from reviews.merge import appended_body, merge_proposal
from wiki.models import CHANGE_SUMMARY_MAX, MARKDOWN_MAX, Page, Version, VersionKind, VersionStatus
from wiki.services import allocate_version_number, check_parent, lock_page, lock_page_under
from wiki.validators import (
    validate_change_summary,
    validate_markdown,
    validate_tags,
    validate_title,
)


def _pending_of(page: Page, actor: Actor) -> list[Version]:
    """The author's waiting proposals on `page` (one at most: a partial unique constraint)."""
    author = "author_agent" if is_agent(actor) else "author_user"
    return list(
        Version.objects.filter(
            page=page, status=VersionStatus.IN_REVIEW, **{author: actor}
        ).select_related("base_version")
    )


def _withdraw(pending: list[Version], *, carried_into: int | None = None) -> list[int]:
    """Withdraw the author's older proposals: one pending proposal per author and page."""
    note = f"Carried into v{carried_into} with the author's next addition." if carried_into else ""
    for version in pending:
        version.move_to(VersionStatus.WITHDRAWN, comment=note)
        version.save(update_fields=["status", "decided_by", "decided_at", "decision_comment"])
    return [version.number for version in pending]


def _carried_summary(earlier: str, new: str) -> str:
    joined = "; ".join(summary for summary in (earlier, new) if summary)
    return joined if len(joined) <= CHANGE_SUMMARY_MAX else new


def _carried_text(earlier: Version, text: str) -> str:
    if len(text) > MARKDOWN_MAX:
        raise InvalidArgument(
            f"together with your waiting proposal v{earlier.number} the markdown would be "
            f"{len(text):,} characters; the limit is {MARKDOWN_MAX:,}. Wait for a reviewer to "
            f"decide v{earlier.number}, or put the new text on another page.",
            field="markdown",
        )
    return text


def _carry(earlier: Version, fields: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An append made while the author's own proposal waits keeps that proposal's words.

    After a waiting append: one append with the earlier blocks, then the new ones. After a
    waiting replace draft: the draft with the new blocks at its end (it keeps its base).
    Returns the kind and fields of the proposal that replaces `earlier`.
    """
    block = fields["proposed_body"]
    if earlier.kind == VersionKind.APPEND:
        text = _carried_text(earlier, appended_body(earlier.proposed_body, block))
        return VersionKind.APPEND, {**fields, "proposed_body": text}
    text = _carried_text(earlier, appended_body(earlier.body, block))
    return VersionKind.REPLACE, {
        "title": earlier.title,
        "body": text,
        "proposed_body": text,
        "tags": earlier.tags,
        "parent": earlier.parent,
        "instructions": earlier.instructions,
    }


def _base_version(page: Page, *, base_number: int | None) -> Version | None:
    """The live version the author started from (the live one when not said)."""
    live = page.live_version
    if base_number is None or live is None or live.number == base_number:
        return live
    base = page.versions.filter(number=base_number, status=VersionStatus.APPROVED).first()
    if base is None:
        raise InvalidArgument(
            f"v{base_number} of {page.public_id} never went live, so nothing can start from "
            f"it; send the live version you read (v{live.number} is live now).",
            field="base_version",
        )
    return base


def _merge_onto_live(page: Page, base: Version, fields: dict[str, Any]) -> dict[str, Any]:
    """An editor's save started from `base` while a newer version went live: the two edits
    merged three-way, as a reviewer would merge a stale proposal. Where they overlap, nothing
    is published: the Conflict carries the merged text with conflict markers to resolve."""
    draft = Version(page=page, base_version=base, **fields)
    merge = merge_proposal(draft)
    live_number = page.live_version.number if page.live_version else None
    if merge["conflicts"]:
        names = ", ".join(sorted({c["field"] for c in merge["conflicts"]}))
        raise Conflict(
            f"v{live_number} was published while you were editing v{base.number}, and both "
            f"changed the same part ({names}). Nothing was saved: resolve the conflicts marked "
            "in the text (keep the lines you want, delete the <<<<<<<, ======= and >>>>>>> "
            "lines), then save again.",
            detail={
                "liveVersion": live_number,
                "baseVersion": base.number,
                "conflicts": merge["conflicts"],
                "mergedText": merge["text_with_markers"],
            },
        )
    merged = merge["fields"]
    kept = {name: value for name, value in fields.items() if name != "parent"}
    return {
        **kept,
        "body": merged["body"],
        "title": merged["title"],
        "tags": merged["tags"],
        "parent_id": merged["parent_id"],
        "instructions": merged["instructions"],
        "merged": True,
    }


def check_can_append(page: Page) -> None:
    """An append needs a live page that is not archived to land on."""
    if page.archived:
        raise Conflict(f"page {page.public_id} is archived; restore it before changing it.")
    if page.live_version_id is None:
        raise Conflict(
            f"page {page.public_id} is not live yet, so there is nothing to append to. Revise "
            "the proposal that creates it instead, sending the whole markdown (update_page, or "
            "Edit in the browser).",
        )


def _append_fields(
    page: Page, current: Version, *, body: Any, changes_more: bool
) -> dict[str, Any]:
    """An append carries only the markdown to add, on top of a page that is live."""
    if changes_more:
        raise InvalidArgument(
            "an append carries only markdown; use a replace to change title or tags.",
            field="kind",
        )
    check_can_append(page)
    return {
        "title": current.title,
        "body": "",
        "proposed_body": validate_markdown(body, required=True),
        "tags": current.tags,
        "parent": current.parent,
        "instructions": current.instructions,
    }


def _replace_fields(
    page: Page,
    current: Version,
    *,
    body: Any,
    title: Any,
    tags: Any,
    parent: Page | Unset | None,
    instructions: Any,
) -> dict[str, Any]:
    """A replace carries the whole new content; fields left out keep their current value."""
    if body is None and title is None and tags is None and parent is UNSET and instructions is None:
        raise InvalidArgument(
            "give at least one of markdown, title or tags to change.", field="markdown"
        )
    if not isinstance(parent, Unset):
        check_parent(page, parent)
    new_body = current.body if body is None else validate_markdown(body)
    fields = {
        "title": current.title if title is None else validate_title(title),
        "body": new_body,
        "proposed_body": new_body,
        "tags": current.tags if tags is None else validate_tags(list(tags)),
        "parent": current.parent if isinstance(parent, Unset) else parent,
        "instructions": current.instructions
        if instructions is None
        else validate_markdown(instructions, field="instructions"),
    }
    unchanged = all(getattr(current, k) == v for k, v in fields.items() if k != "proposed_body")
    if page.live_version_id is not None and unchanged:
        raise InvalidArgument(
            "this is identical to the live version; change something before submitting.",
            field="markdown",
        )
    return fields


def _check_proposing(
    actor: Actor, page: Page, *, kind: str, publish: bool, parent: Page | Unset | None
) -> None:
    """The policy's answer for proposing (or publishing, moving under `parent`) on `page`."""
    check_can_propose(actor)
    if publish:
        check_can_publish(actor, page, move_under=parent)
    else:
        check_can_propose_here(actor, page)
    if kind not in VersionKind.values:
        raise InvalidArgument("kind must be 'replace' or 'append'.", field="kind")


def _locked(page: Page, parent: Page | Unset | None) -> tuple[Page, Page | Unset | None, Version]:
    """The page row locked (with the new parent's branch when it moves), and its current
    version: the live one, or the newest when none went live yet."""
    if isinstance(parent, Unset):
        page = lock_page(page)
    else:
        page, parent = lock_page_under(page, parent)
    if page.archived:
        raise Conflict(f"page {page.public_id} is archived; restore it before changing it.")
    current = page.live_version or page.versions.order_by("-number").first()
    if current is None:
        raise NotFound(f"page {page.public_id} has no versions.")
    return page, parent, current


def _started_from(pending: list[Version], kind: str, base_number: int | None) -> int | None:
    """A revised draft keeps the version its author started from: the author revises the
    draft they were shown, never the live text published since (an agent that sends the
    liveVersion get_page_source gave beside its draft would otherwise make the revision look
    current, and approving it would erase what went live since)."""
    drafts = [v for v in pending if v.kind == VersionKind.REPLACE and v.base_version]
    if kind == VersionKind.REPLACE and drafts:
        started = drafts[0].base_version.number  # type: ignore[union-attr]
        if base_number is None or base_number > started:
            return started
    return base_number


@atomic_retried
def version_propose(
    *,
    actor: Actor,
    page: Page,
    kind: str = VersionKind.REPLACE,
    body: str | None = None,
    title: str | None = None,
    tags: Iterable[str] | None = None,
    parent: Page | Unset | None = UNSET,
    instructions: str | None = None,
    change_summary: str = "",
    publish: bool = False,
    base_number: int | None = None,
) -> Version:
    """Propose a new version of `page`, or publish it at once (editors).

    A replace carries the whole new content; an append only the markdown to add at the end.
    The author's older pending proposal on the page is withdrawn; a proposed append carries
    its words first (see `_carry`), so nothing the author wrote is dropped. `base_number` is
    the live version the author started from: publishing over a newer one is refused, and a
    proposal keeps that base so the reviewer sees it as stale.
    """
    _check_proposing(actor, page, kind=kind, publish=publish, parent=parent)
    change_summary = validate_change_summary(change_summary)
    page, parent, current = _locked(page, parent)
    pending = _pending_of(page, actor)
    base = _base_version(page, base_number=_started_from(pending, kind, base_number))
    if kind == VersionKind.APPEND:
        more = title is not None or tags is not None or parent is not UNSET or bool(instructions)
        fields = _append_fields(page, current, body=body, changes_more=more)
    else:
        fields = _replace_fields(
            page,
            current,
            body=body,
            title=title,
            tags=tags,
            parent=parent,
            instructions=instructions,
        )
        if publish and base is not None and base.pk != page.live_version_id:
            fields = _merge_onto_live(page, base, fields)
    carried = kind == VersionKind.APPEND and not publish and bool(pending)
    if carried:
        earlier = pending[0]
        kind, fields = _carry(earlier, fields)
        change_summary = _carried_summary(earlier.change_summary, change_summary)
        if kind == VersionKind.REPLACE:
            base = earlier.base_version
    number = allocate_version_number(page)
    withdrawn = _withdraw(pending, carried_into=number if carried else None)
    version = Version(
        page=page,
        number=number,
        kind=kind,
        change_summary=change_summary,
        base_version=base,
        **fields,
        **author_fields(actor),
    )
    live = page.live_version
    classify_into(version, (base or live) if kind == VersionKind.REPLACE and live else live)
    version.save(force_insert=True)
    _submit(
        page,
        version,
        actor=actor,
        publish=publish,
        withdrawn=withdrawn,
        carried=withdrawn if carried else [],
        earlier=pending[0] if pending else None,
    )
    return version


def _submit(
    page: Page,
    version: Version,
    *,
    actor: Actor,
    publish: bool,
    withdrawn: list[int],
    carried: list[int],
    earlier: Version | None,
) -> None:
    """Publish a new version at once (an editor's save) or queue it for review; audit either.

    A proposal that replaces the author's waiting one is a revision: it continues that
    review from its first step, with the conversation so far.
    """
    if publish:
        if version.kind == VersionKind.APPEND:
            fill_append(page, version)
        publish_version(page, version, approver=actor, comment=PUBLISHED_DIRECTLY)
    audit_record(
        action="version.publish" if publish else "version.propose",
        actor=actor,
        page=page,
        version_number=version.number,
        outcome=version.status,
        data={"kind": version.kind, "withdrawn": withdrawn, "carried": carried},
    )
    if publish:
        reviews_end(earlier)
        return
    connected_by = connector_of(actor)
    review = (
        review_continue(earlier, version, connected_by=connected_by)
        if earlier is not None
        else None
    )
    if review is None:
        reviews_start([version], connected_by=connected_by)
    outbox.queue_review_requested(version)
