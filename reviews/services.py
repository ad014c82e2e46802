"""The life of a version: propose, publish, approve (as written, edited or merged), reject,
withdraw and revert; and the reviewer's email preference.

Every door (web, REST, MCP, commands, Django admin) calls these. Each is one transaction with a
keyword-only actor: it validates first, locks the page row it decides on, writes its audit
event inside, and queues email through the outbox, sent after commit. The allowed moves of a
version are stated once, on `Version.move_to`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.actors import Actor, is_agent
from core.audit import audit_event, audit_record, audit_record_many
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound
from core.transactions import atomic_retried
from core.unset import UNSET, Unset
from reviews import outbox
from reviews.classify import classify_into
from reviews.deciders import counted_approvers, deciders_of, refusal_reason, transient_review
from reviews.merge import appended_body, is_stale, merge_proposal
from reviews.models import (
    Approval,
    CommentKind,
    NotificationPreference,
    Review,
    ReviewComment,
    ReviewerSettings,
    ReviewRevision,
    ReviewVisit,
)
from reviews.selectors import review_of
from reviews.workflows import review_workflows
from wiki import permissions
from wiki.credentials import refuse_credentials
from wiki.models import (
    CHANGE_SUMMARY_MAX,
    MARKDOWN_MAX,
    Page,
    Version,
    VersionKind,
    VersionStatus,
)
from wiki.roles import can_review
from wiki.services import (
    PageRow,
    allocate_version_number,
    check_parent,
    lock_page,
    lock_page_under,
    new_pages_make_live,
    page_make_live,
    page_rows_create,
)
from wiki.validators import (
    check_text,
    check_visible_text,
    validate_change_summary,
    validate_markdown,
    validate_resolved_markdown,
    validate_tags,
    validate_title,
)

COMMENT_MAX = 5000
REASON_REQUIRED = (
    "give a reason to reject: a reason is required; tell the author what to change so the "
    "next proposal can be approved."
)
COMMENT_TOO_LONG = f"the comment can be at most {COMMENT_MAX:,} characters."
CHANGES_REASON_REQUIRED = (
    "say what to change: a comment is required to send a proposal back to its author."
)
PUBLISHED_DIRECTLY = "Published directly."


# --- rules ----------------------------------------------------------------------------------


def validate_comment(comment: Any, *, required: bool = False) -> str:
    """A reviewer's note; required (as the reason) to reject."""
    if comment is None:
        comment = ""
    if not isinstance(comment, str):
        raise InvalidArgument("the comment must be text.", field="comment")
    comment = check_text(comment, field="comment").strip()
    if len(comment) > COMMENT_MAX:
        raise InvalidArgument(
            f"the comment can be at most {COMMENT_MAX:,} characters; it has {len(comment):,}.",
            field="comment",
        )
    if required and not comment:
        raise InvalidArgument(REASON_REQUIRED, field="comment")
    # A comment is emailed to the author (an agent's owner) and kept in the history.
    refuse_credentials(comment, field="comment")
    # Emailed and shown to the author: no escape that recolours or reorders what they read.
    return check_visible_text(comment, field="comment", what="a comment")


def _check_can_propose(actor: Actor) -> None:
    """`actor` may propose at all (a revoked agent, one that only reads, or nobody signed in
    may not): the policy's answer before any page is known."""
    refusal = permissions.kind_refusal(actor, permissions.PROPOSE)
    if refusal is not None:
        raise Forbidden(refusal)


def _check_can_propose_here(actor: Actor, page: Page | None) -> None:
    """`actor` may propose on `page` (None: a new top-level page): wiki.permissions, for a
    person by their grants, for an agent by its owner's and its own flags."""
    refusal = permissions.refusal(actor, permissions.PROPOSE, page)
    if refusal is not None:
        raise Forbidden(refusal)


def _check_can_publish(actor: Actor, page: Page | None, *, move_under: Any = UNSET) -> User:
    """`actor` may change `page` (None: add at the top level) without review, and move it
    under `move_under` (a page, or None for the top level) when given: wiki.permissions'
    rule, a review workflow included."""
    refusal = permissions.refusal(actor, permissions.PUBLISH, page)
    moving = (
        page is not None
        and not isinstance(move_under, Unset)
        and (move_under.pk if move_under is not None else None) != page.parent_id
    )
    if refusal is None and moving:
        refusal = permissions.move_refusal(actor, page, move_under)  # type: ignore[arg-type]
    if refusal is not None:
        raise Forbidden(refusal[0].upper() + refusal[1:])
    return actor  # type: ignore[return-value]


def decision_refusal(
    actor: Actor, version: Version, *, deciders: set[int] | None = None
) -> str | None:
    """Why `actor` may not approve, reject or send back `version` now, or None when they may.

    The one statement of who decides, for every door and screen: `actor` is among
    `reviews.deciders` of the step the proposal waits on (`deciders`: that set when the
    caller worked it out for many rows at once).
    """
    if is_agent(actor) or not isinstance(actor, User) or not actor.is_active:
        return "only people can approve or reject proposals."
    review = review_of(version) or transient_review(version)
    if deciders is None:
        deciders = deciders_of([review])[version.pk]
    if actor.pk in deciders:
        return None
    return refusal_reason(actor, review, version)


def _check_decider_first(actor: Actor, version: Version, step: int | None) -> None:
    """Refuse someone who may not decide before reading what they sent (as the doors
    loaded the proposal); a decision for a step the review has left is answered once the
    rows are locked (409, it moved on), not as a lack of right."""
    if version.status != VersionStatus.IN_REVIEW:
        return  # decided already: the version's own move check says by whom
    review = review_of(version)
    # Without a step (a caller holding an older copy), the locked rows alone decide.
    if step is not None and (review is None or review.step + 1 == step):
        _check_can_decide(actor, version)


def _check_can_decide(actor: Actor, version: Version) -> User:
    refusal = decision_refusal(actor, version)
    if refusal is not None:
        review = review_of(version)
        if review is not None and actor.pk in counted_approvers([review])[review.pk]:
            raise _approved_twice(review)  # a conflict with the state, not a lack of right
        raise Forbidden(refusal)
    assert isinstance(actor, User)
    return actor


# --- small steps ----------------------------------------------------------------------------


def _author_fields(actor: Actor) -> dict[str, Any]:
    if is_agent(actor):
        return {"author_agent": actor, "author_user": None}
    return {"author_user": actor, "author_agent": None}


def _lock_version(version: Version) -> tuple[Page, Version]:
    """The page row locked (every decision on a page holds it, so two reviewers approving at
    once are two approvals in turn), with its branch in the tree's lock order (a move's new
    parent too), and the version and its review as they are now."""
    moving = version.parent_id != version.page.parent_id
    page, _ = lock_page_under(version.page, version.parent if moving else None)
    locked = Version.objects.select_related("base_version", "page", "decided_by", "review").get(
        pk=version.pk
    )
    return page, locked


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


def _approve(version: Version, *, approver: Actor, comment: str) -> None:
    """Mark `version` approved by `approver` (the caller saves it and makes it live)."""
    version.move_to(
        VersionStatus.APPROVED, by=approver if isinstance(approver, User) else None, comment=comment
    )


def _publish(page: Page, version: Version, *, approver: Actor, comment: str) -> Version:
    """Approve `version` as it stands and make it, or its copy, the page's live version.

    Version numbers run forwards: a proposal approved after a newer version went live (a
    stale one merged, an append landing on later changes) goes live as a new version with the
    next number, and the proposal keeps its own number, approved and "merged into" that one.
    Returns the version that is live now.
    """
    _approve(version, approver=approver, comment=comment)
    live = page.live_version
    if live is None or live.number < version.number:
        version.save()
        page_make_live(page, version)
        return version
    published = Version(
        page=page,
        number=allocate_version_number(page),
        kind=version.kind,
        title=version.title,
        body=version.body,
        proposed_body=version.proposed_body,
        tags=version.tags,
        parent=version.parent,
        instructions=version.instructions,
        change_summary=version.change_summary,
        author_user=version.author_user,
        author_agent=version.author_agent,
        base_version=live,
        edited_by_reviewer=version.edited_by_reviewer,
        merged=version.merged,
    )
    published.move_to(VersionStatus.APPROVED, by=version.decided_by, comment=comment)
    published.save()
    version.merged_into = published
    version.save()
    page_make_live(page, published)
    return published


def _fill_append(page: Page, version: Version) -> None:
    """An append's full content: what is live now with the appended blocks at the end."""
    live = page.live_version
    version.body = appended_body(live.body if live else "", version.proposed_body)
    if live is not None:
        version.title, version.tags = live.title, live.tags
        version.parent, version.instructions = live.parent, live.instructions


# --- proposing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewPage:
    """One page for `pages_create` to make: the arguments of `page_create` but the actor."""

    title: str
    body: str
    parent: Page | None = None
    tags: Sequence[str] | None = None
    instructions: str = ""
    change_summary: str = ""
    source_path: str | None = None
    extra_frontmatter: dict[str, Any] | None = None
    public_id: str | None = None


def _checked(new: NewPage) -> NewPage:
    return replace(
        new,
        title=validate_title(new.title),
        body=validate_markdown(new.body),
        tags=validate_tags(list(new.tags) if new.tags is not None else []),
        instructions=validate_markdown(new.instructions, field="instructions"),
        change_summary=validate_change_summary(new.change_summary) or "Created the page.",
    )


def page_create(
    *,
    actor: Actor,
    title: str,
    body: str,
    parent: Page | None = None,
    tags: Iterable[str] | None = None,
    instructions: str = "",
    change_summary: str = "",
    publish: bool = False,
    source_path: str | None = None,
    extra_frontmatter: dict[str, Any] | None = None,
    public_id: str | None = None,
) -> Version:
    """A new page with version 1: live at once when an editor publishes, otherwise in review."""
    new = NewPage(
        title=title,
        body=body,
        parent=parent,
        tags=list(tags) if tags is not None else None,
        instructions=instructions,
        change_summary=change_summary,
        source_path=source_path,
        extra_frontmatter=extra_frontmatter,
        public_id=public_id,
    )
    return pages_create(actor=actor, pages=[new], publish=publish)[0]


@atomic_retried
def pages_create(*, actor: Actor, pages: Sequence[NewPage], publish: bool = False) -> list[Version]:
    """New pages with version 1 each, made as `page_create` makes one, all or none.

    A bulk import makes a folder's pages this way: however many pages, it costs the same
    few queries (the rows are inserted together), not a transaction per page.
    """
    if not pages:
        return []
    checked = [_checked(new) for new in pages]
    _check_can_propose(actor)
    parents = {new.parent.pk if new.parent else None: new.parent for new in checked}
    for parent in parents.values():
        if publish:
            _check_can_publish(actor, parent)
        else:
            _check_can_propose_here(actor, parent)
    rows = page_rows_create(
        [
            PageRow(
                title=new.title,
                parent=new.parent,
                tags=list(new.tags or []),
                instructions=new.instructions,
                source_path=new.source_path,
                extra_frontmatter=new.extra_frontmatter,
                public_id=new.public_id,
                slug_with_id=is_agent(actor),
            )
            for new in checked
        ]
    )
    versions = [
        Version(
            page=page,
            number=page.last_version_number,
            kind=VersionKind.REPLACE,
            title=new.title,
            body=new.body,
            proposed_body=new.body,
            tags=list(new.tags or []),
            parent=page.parent,
            instructions=new.instructions,
            change_summary=new.change_summary,
            **_author_fields(actor),
        )
        for page, new in zip(rows, checked, strict=True)
    ]
    for version in versions:
        classify_into(version, None)
        if publish:
            _approve(version, approver=actor, comment=PUBLISHED_DIRECTLY)
    Version.objects.bulk_create(versions)
    if publish:
        new_pages_make_live(versions)
    audit_record_many(
        [
            audit_event(
                action="page.create",
                actor=actor,
                page=version.page,
                version_number=version.number,
                outcome=version.status,
                data={"title": version.title},
            )
            for version in versions
        ]
    )
    if not publish:
        _reviews_start(versions, connected_by=_connected_by(actor))
        outbox.queue_reviews_requested(versions)
    return versions


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
    _check_can_propose(actor)
    if publish:
        _check_can_publish(actor, page, move_under=parent)
    else:
        _check_can_propose_here(actor, page)
    change_summary = validate_change_summary(change_summary)
    if kind not in VersionKind.values:
        raise InvalidArgument("kind must be 'replace' or 'append'.", field="kind")
    if isinstance(parent, Unset):
        page = lock_page(page)
    else:
        page, parent = lock_page_under(page, parent)
    if page.archived:
        raise Conflict(f"page {page.public_id} is archived; restore it before changing it.")
    current = page.live_version or page.versions.order_by("-number").first()
    if current is None:
        raise NotFound(f"page {page.public_id} has no versions.")
    pending = _pending_of(page, actor)
    drafts = [v for v in pending if v.kind == VersionKind.REPLACE and v.base_version]
    if kind == VersionKind.REPLACE and drafts:
        # A revised draft keeps the version its author started from: the author revises
        # the draft they were shown, never the live text published since (an agent that
        # sends the liveVersion get_page_source gave beside its draft would otherwise make
        # the revision look current, and approving it would erase what went live since).
        started = drafts[0].base_version.number  # type: ignore[union-attr]
        if base_number is None or base_number > started:
            base_number = started
    base = _base_version(page, base_number=base_number)
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
        **_author_fields(actor),
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
            _fill_append(page, version)
        _publish(page, version, approver=actor, comment=PUBLISHED_DIRECTLY)
    audit_record(
        action="version.publish" if publish else "version.propose",
        actor=actor,
        page=page,
        version_number=version.number,
        outcome=version.status,
        data={"kind": version.kind, "withdrawn": withdrawn, "carried": carried},
    )
    if publish:
        _reviews_end(earlier)
        return
    connected_by = _connected_by(actor)
    review = (
        _review_continue(earlier, version, connected_by=connected_by)
        if earlier is not None
        else None
    )
    if review is None:
        _reviews_start([version], connected_by=connected_by)
    outbox.queue_review_requested(version)


# --- reviews: a proposal's way through its workflow --------------------------------------


def _connected_by(actor: Actor) -> int | None:
    """The person whose OAuth connection the agent acts through (set by the MCP door), if
    any: like the agent's owner, they may not decide what it proposes."""
    return getattr(actor, "oauth_allowed_by_id", None) if is_agent(actor) else None


def _reviews_start(versions: Sequence[Version], *, connected_by: int | None = None) -> None:
    """Start the review of each new proposal at step 1 of the workflow that applies to its
    page, the steps copied so that later changes to the workflow leave it alone."""
    applied = review_workflows(versions)
    reviews = []
    for version in versions:
        workflow = applied[version.page_id]
        reviews.append(
            Review(
                page_id=version.page_id,
                version=version,
                workflow=workflow.workflow,
                workflow_name=workflow.name,
                workflow_page=workflow.source,
                steps=workflow.steps,
                connected_by_id=connected_by,
            )
        )
    Review.objects.bulk_create(reviews)
    ReviewRevision.objects.bulk_create(
        ReviewRevision(review=review, version=review.version, number=1) for review in reviews
    )
    for review in reviews:
        review.version.review = review


def _review_continue(
    earlier: Version, version: Version, *, connected_by: int | None
) -> Review | None:
    """The author revised `earlier`: its review goes on with `version`, from step 1."""
    review = Review.objects.select_for_update().filter(version=earlier).first()
    if review is None:
        return None
    review.move_to("revise")
    review.version = version
    review.step = 0
    review.connected_by_id = connected_by
    review.revision += 1
    review.save()
    ReviewRevision.objects.create(review=review, version=version, number=review.revision)
    version.review = review
    return review


def _reviews_end(version: Version | None) -> None:
    """The author withdrew `version` (or published over it): its review ends with it."""
    if version is None:
        return
    review = Review.objects.select_for_update().filter(version=version).first()
    if review is not None:
        review.move_to("withdraw")
        review.save(update_fields=["status", "updated_at"])


def _checked_review(version: Version, transition: str, *, step: int | None = None) -> Review:
    """The review of a locked version, checked for `transition` (given for `step`, from 1)
    against the table in `Review.TRANSITIONS`."""
    review = review_of(version)
    if review is None:
        # A proposal made before workflows existed: it goes through the workflow of its page.
        _reviews_start([version])
        review = version.review
    review.check_move(transition, step=step)
    return review


def _counted(review: Review, version: Version) -> list[Approval]:
    """The approvals of the text under review that count (a reviewer's edit resets the ones
    given before it), at every step."""
    return list(
        Approval.objects.filter(review=review, version=version, reset=False).select_related("user")
    )


def _open_step(review: Review, approvals: list[Approval]) -> int | None:
    """The first step still short of approvals (a reviewer's edit can send a review back to
    an earlier step), or None when every step has its approvals."""
    for index, step in enumerate(review.steps):
        if sum(1 for a in approvals if a.step == index) < step["approvals"]:
            return index
    return None


def _record_approval(
    review: Review, version: Version, approver: User, comment: str, *, edited: bool
) -> Approval:
    """One approval row; the partial unique constraint (one counted approval per person and
    text) makes a second one by the same person a 409 even if two requests of theirs race."""
    try:
        with transaction.atomic():
            return Approval.objects.create(
                review=review,
                version=version,
                step=review.step,
                user=approver,
                comment=comment,
                edited=edited,
            )
    except IntegrityError:
        raise _approved_twice(review) from None


def _approved_twice(review: Review) -> Conflict:
    step = review.current_step
    return Conflict(
        f"you already approved this text in this review, and one person counts once across "
        f"its steps; step {review.step + 1} ({step['name']}) needs approvals from other "
        f"members of {step['group']}.",
        detail={"step": review.step + 1},
    )


def _reset_approvals(review: Review, version: Version) -> list[str]:
    """A reviewer edited the text: the approvals given to the text before no longer count
    (kept in the history, marked reset). Returns who gave them."""
    earlier = list(
        Approval.objects.filter(review=review, version=version, reset=False).select_related("user")
    )
    Approval.objects.filter(pk__in=[a.pk for a in earlier]).update(reset=True)
    return [a.user.get_username() for a in earlier]


# --- deciding -------------------------------------------------------------------------------


def _apply_merge(version: Version, *, keep: set[str], live_number: int | None) -> None:
    """Merge a stale replace three-way, except the fields in `keep` (a reviewer edited them).

    Refused, naming the fields, where both sides changed something the reviewer did not resolve.
    """
    merge = merge_proposal(version)
    unresolved = [c for c in merge["conflicts"] if c["field"] not in keep]
    if unresolved:
        base_number = version.base_version.number if version.base_version else 0
        names = ", ".join(sorted({c["field"] for c in unresolved}))
        raise Conflict(
            f"v{version.number} was written against v{base_number} but v{live_number} is live "
            f"now, and the two changes overlap in {names}. Resolve the conflict in the editor or "
            "reject the proposal.",
            detail={"conflicts": unresolved, "liveVersion": live_number},
        )
    fields = merge["fields"]
    if "markdown" not in keep:
        version.body = fields["body"]
    if "title" not in keep:
        version.title = fields["title"]
    if "tags" not in keep:
        version.tags = fields["tags"]
    version.parent_id, version.instructions = fields["parent_id"], fields["instructions"]
    version.merged = True


def _apply_edit(
    page: Page, version: Version, *, body: str | None, title: str | None, tags: Iterable[str] | None
) -> None:
    """The reviewer's edit, made against the live version that is still live."""
    live = page.live_version
    if version.kind == VersionKind.APPEND:
        # Title, tags and parent come from what is live now, as for an unedited append.
        _fill_append(page, version)
        if body is not None:
            version.body = appended_body(
                live.body if live else "", validate_resolved_markdown(body)
            )
    else:
        if is_stale(version):
            edited = {"markdown": body, "title": title, "tags": tags}
            keep = {name for name, value in edited.items() if value is not None}
            _apply_merge(version, keep=keep, live_number=live.number if live else None)
        if body is not None:
            version.body = validate_resolved_markdown(body)
    if title is not None:
        version.title = validate_title(title)
    if tags is not None:
        version.tags = validate_tags(list(tags))
    version.edited_by_reviewer = True


@atomic_retried
def version_approve(
    *,
    actor: Actor,
    version: Version,
    comment: str = "",
    edited_body: str | None = None,
    edited_title: str | None = None,
    edited_tags: Iterable[str] | None = None,
    expected_live_number: int | None = None,
    step: int | None = None,
    narrowing: bool = False,
) -> Version:
    """Approve a proposal at the step of its workflow it waits on (`step`, from 1: the step
    the reviewer saw; refused with a 409 when the review has moved on since).

    The approval is recorded; when the step has its approvals the proposal moves to the
    next step (whose deciders are emailed then), and the last approval of the last step
    publishes it. One person counts once per review, across steps. Publishing: an append
    lands on top of whatever is live now; a replace whose base is still live goes live as
    written; a stale one is merged three-way when the changes do not overlap and refused with
    the conflicts when they do (at every step). A reviewer may edit the proposal first
    (`edited_*`) against the live version they saw (`expected_live_number`), which must still
    be live, so nothing is overwritten unseen; the edit resets the approvals given to the
    text before it, so the review goes back to the first step they were given at, unless it
    is `narrowing`: it only leaves out changes of the text they approved (reviews.partial).
    """
    _check_decider_first(actor, version, step)
    comment = validate_comment(comment)
    page, version = _lock_version(version)
    version.check_move(VersionStatus.APPROVED)
    review = _checked_review(version, "approve", step=step)
    approver = _check_can_decide(actor, version)
    live_number = page.live_version.number if page.live_version else None
    if expected_live_number is not None and expected_live_number != (live_number or 0):
        raise Conflict(
            f"the live version changed to v{live_number} while you were reviewing; "
            "reload the proposal and decide again.",
            detail={"liveVersion": live_number},
        )
    edited = any(value is not None for value in (edited_body, edited_title, edited_tags))
    reset: list[str] = []
    if edited:
        if is_stale(version) and expected_live_number is None:
            raise Conflict(
                "this proposal is stale; edit it against the current live version and say "
                "which live version you edited against.",
                detail={"liveVersion": live_number},
            )
        _apply_edit(page, version, body=edited_body, title=edited_title, tags=edited_tags)
        reset = [] if narrowing else _reset_approvals(review, version)
    elif version.kind == VersionKind.APPEND:
        _fill_append(page, version)
    elif is_stale(version):
        _apply_merge(version, keep=set(), live_number=live_number)
    _record_approval(review, version, approver, comment, edited=edited)
    waiting = _open_step(review, _counted(review, version))
    if waiting is not None:
        _approve_step(
            page,
            version,
            review,
            approver=approver,
            comment=comment,
            to_step=waiting,
            edited=edited,
            reset=reset,
        )
        return version
    published = _publish(page, version, approver=approver, comment=comment)
    review.move_to("merge" if version.merged else "publish")
    review.save(update_fields=["status", "updated_at"])
    audit_record(
        action="version.approve",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
        data={
            "edited": version.edited_by_reviewer,
            "merged": version.merged,
            "step": review.step + 1,
            "published_as": published.number,
            "reset": reset,
        },
    )
    outbox.queue_decision(version)
    return version


def _approve_step(
    page: Page,
    version: Version,
    review: Review,
    *,
    approver: User,
    comment: str,
    to_step: int,
    edited: bool,
    reset: list[str],
) -> None:
    """An approval that does not publish yet: the proposal stays in review, at `to_step` (the
    next step once this one has its approvals; an earlier one after a reviewer's edit reset
    approvals). A reviewer's edit is kept as the text under review, written against the live
    version (an append becomes the whole page)."""
    if edited:
        version.kind = VersionKind.REPLACE
        version.proposed_body = version.proposed_body or version.body
        version.base_version = page.live_version
        version.save()
    else:
        # Approving here changes nothing yet; the merge or append is worked out again when
        # the last step publishes, on whatever is live then.
        version.refresh_from_db()
    step_number = review.step + 1
    moved = to_step != review.step
    review.move_to("approve")
    if moved:
        review.step = to_step
        review.save(update_fields=["step", "status", "updated_at"])
    audit_record(
        action="version.approval",
        actor=approver,
        page=page,
        version_number=version.number,
        comment=comment,
        data={
            "step": step_number,
            "advanced": moved,
            "to_step": to_step + 1,
            "edited": edited,
            "reset": reset,
        },
    )
    if moved or reset:
        outbox.queue_review_requested(version)


def approval_undo_seconds() -> int:
    """How long a reviewer may take back an approval that published a proposal (setting
    QUIRE_APPROVAL_UNDO_SECONDS); after that, or once anything newer went live, the page is
    reverted instead. The author's decision email waits as long (reviews.outbox)."""
    return int(settings.QUIRE_APPROVAL_UNDO_SECONDS)


def approval_undo_refusal(actor: Actor, version: Version) -> str | None:
    """Why `actor` cannot take back the approval that published `version` now (None: they
    can). The one rule the web door and the service share."""
    if is_agent(actor) or version.status != VersionStatus.APPROVED:
        return "only an approved proposal's approval can be taken back."
    if version.decided_by_id != actor.pk or review_of(version) is None:
        return "only the reviewer who approved a proposal can take the approval back."
    if version.edited_by_reviewer:
        return "an approval with the reviewer's edits cannot be taken back; revert instead."
    decided_at = version.decided_at or timezone.now()
    window = approval_undo_seconds()
    if (timezone.now() - decided_at).total_seconds() > window:
        return (
            f"it is more than {window} seconds since the approval, so it can no "
            "longer be taken back; revert the page from its history instead."
        )
    published_id = version.merged_into_id or version.pk
    if version.page.live_version_id != published_id:
        return (
            "a newer version went live since the approval, so it can no longer be taken back; "
            "revert the page from its history instead."
        )
    return None


@atomic_retried
def version_approve_undo(*, actor: Actor, version: Version) -> Version:
    """Take back one's approval that published a proposal, while it is still short and
    nothing newer went live: the page shows again what it showed before, the version it
    published (a copy under a new number) is gone, and the proposal waits again at its last
    step, without this reviewer's approval."""
    page, version = _lock_version(version)
    refusal = approval_undo_refusal(actor, version)
    if refusal is not None:
        raise Conflict(refusal, detail={"status": version.status})
    published = version.merged_into or version
    previous = (
        Version.objects.filter(
            page=page,
            status=VersionStatus.APPROVED,
            number__lt=published.number,
            merged_into__isnull=True,
        )
        .exclude(pk=version.pk)
        .order_by("-number")
        .first()
    )
    newest_number = published.pk != version.pk and page.last_version_number == published.number
    if previous is None or (published.pk != version.pk and not newest_number):
        raise Conflict(
            "this approval can no longer be taken back (the page had no live version before, "
            "or newer versions were numbered since); revert the page from its history instead."
        )
    page_make_live(page, previous)
    version.reopen()
    version.body = "" if version.kind == VersionKind.APPEND else version.proposed_body
    try:
        with transaction.atomic():
            version.save()
    except IntegrityError:
        raise Conflict(
            "the author proposed again since the approval, so it cannot be taken back; revert "
            "the page from its history instead."
        ) from None
    if published.pk != version.pk:
        published.delete()
        page.last_version_number -= 1
        Page.objects.filter(pk=page.pk).update(last_version_number=page.last_version_number)
    review = review_of(version)
    assert review is not None
    Approval.objects.filter(
        review=review, version=version, step=review.step, user_id=actor.pk
    ).delete()
    review.move_to("undo")
    review.save(update_fields=["status", "updated_at"])
    # The author was not told yet (the email waits out the window): now they never are.
    outbox.drop_decision(version)
    audit_record(
        action="version.approve_undo",
        actor=actor,
        page=page,
        version_number=version.number,
        data={
            "live": previous.number,
            "removed": published.number if published != version else None,
        },
    )
    version.page = page  # as the undo left it: `previous` is live again
    return version


@atomic_retried
def version_reject(
    *, actor: Actor, version: Version, comment: str, step: int | None = None
) -> Version:
    """Decline a proposal, at any step, with a reason the author reads."""
    _, version = _review_answer(
        actor=actor, version=version, comment=comment, transition="reject", step=step
    )
    outbox.queue_decision(version)
    return version


@atomic_retried
def version_request_changes(
    *, actor: Actor, version: Version, comment: str, step: int | None = None
) -> Version:
    """Send a proposal back to its author with what to change. It stays in review, waiting
    on the author; their revision continues the same review from step 1."""
    reviewer, version = _review_answer(
        actor=actor, version=version, comment=comment, transition="request_changes", step=step
    )
    outbox.queue_changes_requested(version, requested_by=reviewer)
    return version


_ANSWERS = {
    "reject": (CommentKind.REJECTED, "version.reject"),
    "request_changes": (CommentKind.CHANGES_REQUESTED, "version.request_changes"),
}


def _review_answer(
    *, actor: Actor, version: Version, comment: str, transition: str, step: int | None
) -> tuple[User, Version]:
    """A reviewer's "no" or "not yet", with the reason: the checks, the version's move (a
    rejection ends it; a request for changes leaves it in review), the review's transition,
    the reason in its conversation, and the audit row. Returns the reviewer and the version
    as locked."""
    kind, action = _ANSWERS[transition]
    rejecting = transition == "reject"
    _check_decider_first(actor, version, step)
    comment = validate_comment(comment, required=rejecting)
    if not comment:
        raise InvalidArgument(CHANGES_REASON_REQUIRED, field="comment")
    page, version = _lock_version(version)
    version.check_move(VersionStatus.REJECTED)  # refuses, saying why, unless in review
    review = _checked_review(version, transition, step=step)
    reviewer = _check_can_decide(actor, version)
    if rejecting:
        version.move_to(VersionStatus.REJECTED, by=reviewer, comment=comment)
        version.save()
    review.move_to(transition, step=step)
    review.save(update_fields=["status", "updated_at"])
    ReviewComment.objects.create(
        review=review, version=version, author=reviewer, kind=kind, body=comment
    )
    audit_record(
        action=action,
        actor=reviewer,
        page=page,
        version_number=version.number,
        comment=comment,
        data={"step": review.step + 1},
    )
    return reviewer, version


def may_comment(actor: Actor, version: Version) -> bool:
    """Those holding `decide` on its page (wiki.permissions: Reviewers unless a grant names
    others), the people deciding its steps and the proposal's author (a person, or the
    owner of the agent) talk on it."""
    if is_agent(actor) or not actor.is_authenticated or not actor.is_active:
        return False
    if version.author_user_id == actor.pk or permissions.can(
        actor, permissions.DECIDE, version.page
    ):
        return True
    agent = version.author_agent
    if agent is not None and agent.owner_id == actor.pk:
        return True
    # A member of a step's group who decides it, or approved it at an earlier step.
    review = review_of(version)
    return review is not None and (
        decision_refusal(actor, version) is None
        or actor.pk in counted_approvers([review])[review.pk]
    )


@atomic_retried
def review_comment_add(
    *, actor: Actor, version: Version, comment: Any, line: int | None = None
) -> ReviewComment:
    """A note in the proposal's conversation; with `line`, on that line of the proposed text
    (the note keeps the line's words, so it finds the line again in a later revision)."""
    if not may_comment(actor, version):
        raise Forbidden("only reviewers and the proposal's author can comment on it.")
    assert isinstance(actor, User)
    body = validate_comment(comment)
    if not body:
        raise InvalidArgument("write the comment first: it is empty.", field="comment")
    page, version = _lock_version(version)
    review = review_of(version)
    if review is None or version.status != VersionStatus.IN_REVIEW:
        raise Conflict(
            f"v{version.number} is not in review any more; comments go on waiting proposals."
        )
    line_text = ""
    if line is not None:
        lines = _proposed_lines(page, version)
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise InvalidArgument("line must be a line number, from 1.", field="line")
        if line > len(lines):
            # The text is the proposal's as it stands now (a revision may have shortened it).
            raise Conflict(
                f"v{version.number} has {len(lines)} lines; comment on one of them, or "
                "leave the line out to comment on the whole proposal.",
            )
        line_text = lines[line - 1]
    note = ReviewComment.objects.create(
        review=review, version=version, author=actor, body=body, line=line, line_text=line_text
    )
    audit_record(
        action="version.comment",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=body,
        data={"line": line},
    )
    return note


def _proposed_lines(page: Page, version: Version) -> list[str]:
    if version.kind == VersionKind.APPEND:
        live = page.live_version
        return appended_body(live.body if live else "", version.proposed_body).splitlines()
    return version.body.splitlines()


def review_visit(*, actor: User, version: Version) -> Version | None:
    """Note that `actor` is looking at `version` now (others see them reviewing it for a few
    minutes). Returns the revision they last looked at before, if another one."""
    review = review_of(version)
    if review is None or not actor.is_authenticated:
        return None
    now = timezone.now()
    earlier = (
        ReviewVisit.objects.filter(review=review, user=actor).select_related("version").first()
    )
    if earlier is None:
        try:
            with transaction.atomic():
                ReviewVisit.objects.create(review=review, user=actor, version=version, seen_at=now)
        except IntegrityError:  # the same person in two tabs at once
            pass
        return None
    ReviewVisit.objects.filter(pk=earlier.pk).update(version=version, seen_at=now)
    return earlier.version if earlier.version_id != version.pk else None


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
    page, version = _lock_version(version)
    version.move_to(VersionStatus.WITHDRAWN)
    version.save()
    _reviews_end(version)
    audit_record(action="version.withdraw", actor=actor, page=page, version_number=version.number)
    return version


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
        title=to_version.title,
        body=to_version.body,
        proposed_body=to_version.body,
        tags=to_version.tags,
        parent=parent if parent is None or not parent.archived else page.parent,
        instructions=to_version.instructions,
        change_summary=validate_change_summary(comment) or f"Reverted to v{to_version.number}.",
        base_version=page.live_version,
        reverted_from=to_version,
        **_author_fields(actor),
    )
    _publish(page, version, approver=actor, comment=comment or f"Reverted to v{to_version.number}.")
    audit_record(
        action="page.revert",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
        data={"reverted_to": to_version.number},
    )
    return version


# --- reviewers ------------------------------------------------------------------------------


@transaction.atomic
def reviewer_notifications_set(
    *, actor: User, preference: str, reviewer: User | None = None
) -> ReviewerSettings:
    """Choose how a reviewer hears about proposals: immediately, a daily digest, or not.

    A reviewer sets their own; an admin (superuser) may set anyone's, e.g. in the Django admin.
    """
    reviewer = reviewer or actor
    if reviewer.pk != actor.pk and not permissions.is_admin(actor):
        raise Forbidden("only admins can change another reviewer's email preference.")
    if not can_review(reviewer):
        raise Forbidden(
            f"{reviewer.get_username()} is not a reviewer and receives no review emails."
        )
    if preference not in NotificationPreference.values:
        choices = ", ".join(NotificationPreference.values)
        raise InvalidArgument(f"choose one of: {choices}.", field="notifications")
    row, _ = ReviewerSettings.objects.select_for_update().get_or_create(user=reviewer)
    if row.notifications != preference:
        row.notifications = preference
        row.save(update_fields=["notifications"])
        audit_record(
            action="reviewer.notifications",
            actor=actor,
            data={"to": preference, "reviewer": reviewer.get_username()},
        )
    return row
