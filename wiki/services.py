"""Every state change of the wiki: one transactional function each.

Web views, the REST API, the MCP tools and the management commands all call these; none of
them changes the models directly. Each function validates first, locks the page row it
decides on, writes its audit event in the same transaction and queues side effects (email)
with `transaction.on_commit`. The search index is a table in the same database, so it is
updated inside the transaction and never disagrees with what is live.
"""

from __future__ import annotations

import hashlib
import mimetypes
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from agents.models import Agent
from wiki import search
from wiki.audit import audit_record
from wiki.errors import Conflict, Forbidden, InvalidArgument, NotFound
from wiki.merge import merge_text, merge_value
from wiki.models import (
    CHANGE_SUMMARY_MAX,
    MARKDOWN_MAX,
    TAG_MAX,
    TAGS_MAX,
    TITLE_MAX,
    Attachment,
    Page,
    Version,
    VersionKind,
    VersionStatus,
)
from wiki.roles import can_publish, can_review

Actor = User | Agent


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


# --- validation -------------------------------------------------------------------------


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
        tags = [part for part in tags.split(",")]
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


COMMENT_MAX = 5000


def validate_comment(comment: Any, *, required: bool = False) -> str:
    if comment is None:
        comment = ""
    if not isinstance(comment, str):
        raise InvalidArgument("the comment must be text.", field="comment")
    comment = comment.strip()
    if len(comment) > COMMENT_MAX:
        raise InvalidArgument(
            f"the comment can be at most {COMMENT_MAX:,} characters; it has {len(comment):,}.",
            field="comment",
        )
    if required and not comment:
        raise InvalidArgument(
            "a reason is required to reject: tell the author what to change.", field="comment"
        )
    return comment


# --- tree helpers -------------------------------------------------------------------------


def _slug_for(title: str) -> str:
    return (slugify(title, allow_unicode=True) or "page")[:200]


def _unique_slug(*, parent: Page | None, title: str, exclude_pk: int | None = None) -> str:
    base = _slug_for(title)
    siblings = Page.objects.filter(parent=parent, slug__startswith=base)
    if exclude_pk is not None:
        siblings = siblings.exclude(pk=exclude_pk)
    taken = set(siblings.values_list("slug", flat=True))
    slug, n = base, 2
    while slug in taken:
        slug = f"{base}-{n}"
        n += 1
    return slug


def _path_for(parent: Page | None, slug: str) -> str:
    return f"{parent.path}/{slug}" if parent is not None else slug


def _check_parent(page: Page | None, parent: Page | None) -> None:
    if parent is None:
        return
    if parent.archived:
        raise InvalidArgument(
            f"the parent page {parent.public_id} is archived; choose another parent.",
            field="parent",
        )
    if page is None:
        return
    node: Page | None = parent
    while node is not None:
        if node.pk == page.pk:
            raise InvalidArgument(
                "a page cannot be moved under itself or one of its descendants.", field="parent"
            )
        node = node.parent


def _refresh_descendant_paths(page: Page) -> None:
    frontier = [page]
    while frontier:
        children = list(Page.objects.filter(parent__in=frontier).select_related("parent"))
        by_pk = {p.pk: p for p in frontier}
        for child in children:
            child.path = _path_for(by_pk[child.parent_id], child.slug)  # type: ignore[index]
        Page.objects.bulk_update(children, ["path"])
        frontier = children


# --- actors ---------------------------------------------------------------------------------


def _author_fields(actor: Actor) -> dict[str, Any]:
    if isinstance(actor, Agent):
        return {"author_agent": actor, "author_user": None}
    return {"author_user": actor, "author_agent": None}


def _check_can_propose(actor: Actor) -> None:
    if isinstance(actor, Agent):
        if not actor.is_active:
            raise Forbidden("this agent is revoked; ask an admin for a new token.")
        if not actor.can_edit_pages:
            raise Forbidden("this agent may read pages but not propose changes.")
        return
    if not actor.is_authenticated or not actor.is_active:
        raise Forbidden("log in to propose changes.")


def _check_can_publish(actor: Actor) -> User:
    if isinstance(actor, Agent) or not can_publish(actor):
        raise Forbidden("only editors can publish directly; submit a proposal for review instead.")
    return actor


def _check_can_decide(actor: Actor, version: Version) -> User:
    if isinstance(actor, Agent) or not can_review(actor):
        raise Forbidden("only reviewers can approve or reject proposals.")
    if version.author_user_id is not None and version.author_user_id == actor.pk:
        raise Forbidden("you cannot decide your own proposal; ask another reviewer.")
    return actor


def _lock_page(page: Page) -> Page:
    assert page.pk is not None
    try:
        return Page.objects.select_for_update().get(pk=page.pk)
    except Page.DoesNotExist:
        raise NotFound(f"page {page.public_id} does not exist.") from None


def _lock_version(version: Version) -> tuple[Page, Version]:
    page = _lock_page(version.page)
    locked = Version.objects.select_related("base_version", "page").get(pk=version.pk)
    return page, locked


def _allocate_number(page: Page) -> int:
    page.last_version_number += 1
    Page.objects.filter(pk=page.pk).update(last_version_number=page.last_version_number)
    return page.last_version_number


def _withdraw_pending(*, page: Page, actor: Actor) -> list[int]:
    pending = Version.objects.filter(
        page=page,
        status=VersionStatus.IN_REVIEW,
        **{("author_agent" if isinstance(actor, Agent) else "author_user"): actor},
    )
    numbers = list(pending.values_list("number", flat=True))
    if numbers:
        pending.update(status=VersionStatus.WITHDRAWN, decided_at=timezone.now())
    return numbers


def _queue_review_notification(version: Version) -> None:
    # Outbox rows are written in this transaction; the emails are sent after commit.
    from reviews import notifications

    notifications.queue_review_requested(version)


def _queue_decision_notification(version: Version) -> None:
    from reviews import notifications

    notifications.queue_decision(version)


def _make_live(page: Page, version: Version) -> None:
    """Point the page at `version` and mirror its fields; the caller holds the page lock."""
    old_parent_id, old_title = page.parent_id, page.title
    parent = version.parent
    _check_parent(page, parent)
    page.live_version = version
    page.title = version.title
    page.tags = version.tags
    page.instructions = version.instructions
    page.parent = parent
    if old_parent_id != page.parent_id or old_title != page.title or not page.slug:
        page.slug = _unique_slug(parent=parent, title=version.title, exclude_pk=page.pk)
        page.path = _path_for(parent, page.slug)
        try:
            with transaction.atomic():
                page.save()
        except IntegrityError:
            # A sibling took the same slug in a transaction that committed after ours read
            # the siblings: the whole decision is undone, and a second try picks a free slug.
            raise Conflict(
                f"another page under the same parent was given the title {version.title!r} "
                "at the same moment, so nothing was changed. Decide again: the page will get "
                "a distinct address."
            ) from None
        _refresh_descendant_paths(page)
    else:
        page.save()
    search.index_page(page)


# --- pages and proposals -----------------------------------------------------------------


@transaction.atomic
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
    """Create a page with version 1: live at once when published, otherwise in review.

    `public_id` keeps a page's id across export and import, so `[[pg_...]]` links survive.
    """
    title = validate_title(title)
    body = validate_markdown(body)
    tag_list = validate_tags(list(tags) if tags is not None else [])
    instructions = validate_markdown(instructions, field="instructions")
    change_summary = validate_change_summary(change_summary) or "Created the page."
    _check_can_propose(actor)
    if publish:
        _check_can_publish(actor)
    if parent is not None:
        parent = _lock_page(parent)
        _check_parent(None, parent)
    if public_id is not None and Page.objects.filter(public_id=public_id).exists():
        raise Conflict(f"the page id {public_id} is taken; leave it out to get a new one.")
    slug = _unique_slug(parent=parent, title=title)
    try:
        with transaction.atomic():
            page = Page.objects.create(
                title=title,
                slug=slug,
                path=_path_for(parent, slug),
                parent=parent,
                tags=tag_list,
                instructions=instructions,
                source_path=source_path,
                extra_frontmatter=extra_frontmatter or {},
                **({"public_id": public_id} if public_id is not None else {}),
            )
    except IntegrityError:
        raise Conflict(
            "another page with this title was created under the same parent at the same "
            "moment; try again."
        ) from None
    version = Version.objects.create(
        page=page,
        number=_allocate_number(page),
        kind=VersionKind.REPLACE,
        title=title,
        body=body,
        proposed_body=body,
        tags=tag_list,
        parent=parent,
        instructions=instructions,
        change_summary=change_summary,
        **_author_fields(actor),
    )
    if publish:
        _approve_in_place(version, approver=actor, comment="Published directly.")
        _make_live(page, version)
    audit_record(
        action="page.create",
        actor=actor,
        page=page,
        version_number=version.number,
        outcome=version.status,
        data={"title": title},
    )
    if not publish:
        _queue_review_notification(version)
    return version


def _approve_in_place(version: Version, *, approver: Actor, comment: str) -> None:
    version.status = VersionStatus.APPROVED
    version.decided_by = approver if isinstance(approver, User) else None
    version.decided_at = timezone.now()
    version.decision_comment = comment
    version.save()


def _current_content(page: Page) -> Version | None:
    """What a new replace proposal starts from: the live version, else the newest one."""
    if page.live_version_id is not None:
        return page.live_version
    return page.versions.order_by("-number").first()


@transaction.atomic
def version_propose(
    *,
    actor: Actor,
    page: Page,
    kind: str = VersionKind.REPLACE,
    body: str | None = None,
    title: str | None = None,
    tags: Iterable[str] | None = None,
    parent: Page | None = UNSET,
    instructions: str | None = None,
    change_summary: str = "",
    publish: bool = False,
    base_number: int | None = None,
) -> Version:
    """Propose a new version of `page` (or publish it at once, for editors).

    A replace carries the whole new content; fields left out keep the current value. An
    append carries only the markdown to add at the end. The author's older pending proposal
    on the same page is withdrawn: one pending proposal per author and page.

    `base_number` is the live version the author started from (a web form sends it back).
    When another version went live meanwhile, publishing is refused so nothing is
    overwritten unseen, and a proposal keeps that base so the reviewer sees it as stale.
    """
    _check_can_propose(actor)
    if publish:
        _check_can_publish(actor)
    change_summary = validate_change_summary(change_summary)
    if kind not in VersionKind.values:
        raise InvalidArgument("kind must be 'replace' or 'append'.", field="kind")
    page = _lock_page(page)
    if page.archived:
        raise Conflict(f"page {page.public_id} is archived; restore it before changing it.")
    current = _current_content(page)
    if current is None:
        raise NotFound(f"page {page.public_id} has no versions.")
    base = page.live_version
    if base_number is not None and base is not None and base.number != base_number:
        if publish and kind == VersionKind.REPLACE:
            raise Conflict(
                f"someone published v{base.number} while you were editing v{base_number}; "
                "compare the two, bring your text up to date and save again.",
                detail={"liveVersion": base.number, "baseVersion": base_number},
            )
        base = (
            page.versions.filter(number=base_number, status=VersionStatus.APPROVED).first() or base
        )

    if kind == VersionKind.APPEND:
        if title is not None or tags is not None or parent is not UNSET or instructions:
            raise InvalidArgument(
                "an append carries only markdown; use a replace to change title or tags.",
                field="kind",
            )
        appended = validate_markdown(body, required=True)
        fields: dict[str, Any] = {
            "title": current.title,
            "body": "",
            "proposed_body": appended,
            "tags": current.tags,
            "parent": current.parent,
            "instructions": current.instructions,
        }
    else:
        if (
            body is None
            and title is None
            and tags is None
            and parent is UNSET
            and (instructions is None)
        ):
            raise InvalidArgument(
                "give at least one of markdown, title or tags to change.", field="markdown"
            )
        new_body = current.body if body is None else validate_markdown(body)
        new_parent = current.parent if parent is UNSET else parent
        if parent is not UNSET:
            _check_parent(page, new_parent)
        fields = {
            "title": current.title if title is None else validate_title(title),
            "body": new_body,
            "proposed_body": new_body,
            "tags": current.tags if tags is None else validate_tags(list(tags)),
            "parent": new_parent,
            "instructions": current.instructions
            if instructions is None
            else validate_markdown(instructions, field="instructions"),
        }
        if page.live_version_id is not None and all(
            getattr(current, name) == value
            for name, value in fields.items()
            if name != "proposed_body"
        ):
            raise InvalidArgument(
                "this is identical to the live version; change something before submitting.",
                field="markdown",
            )

    withdrawn = _withdraw_pending(page=page, actor=actor)
    version = Version.objects.create(
        page=page,
        number=_allocate_number(page),
        kind=kind,
        change_summary=change_summary,
        base_version=base,
        **fields,
        **_author_fields(actor),
    )
    if publish:
        _apply_content(page, version)
        _approve_in_place(version, approver=actor, comment="Published directly.")
        _make_live(page, version)
    audit_record(
        action="version.publish" if publish else "version.propose",
        actor=actor,
        page=page,
        version_number=version.number,
        outcome=version.status,
        data={"kind": kind, "withdrawn": withdrawn},
    )
    if not publish:
        _queue_review_notification(version)
    return version


def is_stale(version: Version) -> bool:
    """A replace proposal is stale when the page's live version is no longer its base."""
    if version.kind != VersionKind.REPLACE or version.status != VersionStatus.IN_REVIEW:
        return False
    return version.base_version_id != version.page.live_version_id


def appended_body(live_body: str, appended: str) -> str:
    """The page body after an append: the live text, a blank line, the appended blocks."""
    live_body = live_body.rstrip("\n")
    appended = appended.strip("\n")
    return f"{live_body}\n\n{appended}\n" if live_body else f"{appended}\n"


def _apply_content(page: Page, version: Version) -> None:
    """Fill an append's full body from what is live now."""
    if version.kind == VersionKind.APPEND:
        live = page.live_version
        version.body = appended_body(live.body if live else "", version.proposed_body)
        if live is not None:
            version.title, version.tags = live.title, live.tags
            version.parent, version.instructions = live.parent, live.instructions


def merge_proposal(version: Version) -> dict[str, Any]:
    """Three-way merge of a stale replace proposal against what is live now.

    Returns the merged fields and the conflicts (empty when the merge is clean).
    """
    base = version.base_version
    live = version.page.live_version
    assert live is not None
    base_body = base.body if base else ""
    result = merge_text(base=base_body, live=live.body, proposal=version.body)
    conflicts: list[dict[str, Any]] = [
        {"field": "markdown", "base": c.base, "live": c.live, "proposal": c.proposal}
        for c in result.conflicts
    ]
    merged: dict[str, Any] = {"body": result.text}
    for name in ("title", "tags", "parent_id", "instructions"):
        value, conflicted = merge_value(
            base=getattr(base, name) if base else getattr(live, name),
            live=getattr(live, name),
            proposal=getattr(version, name),
        )
        merged[name] = value
        if conflicted:
            conflicts.append(
                {
                    "field": name.removesuffix("_id"),
                    "base": getattr(base, name) if base else None,
                    "live": getattr(live, name),
                    "proposal": getattr(version, name),
                }
            )
    return {"fields": merged, "conflicts": conflicts, "text_with_markers": result.text}


def _already_decided(page: Page, version: Version) -> Conflict:
    """The refusal for deciding a version that is no longer in review, naming who decided."""
    status = version.get_status_display().lower()
    decider = version.decided_by.get_username() if version.decided_by is not None else None
    by = f" by {decider}" if decider and version.status != VersionStatus.WITHDRAWN else ""
    return Conflict(
        f"v{version.number} of {page.public_id} was already {status}{by}; there is nothing "
        "left to decide. Open the review queue for the proposals still waiting.",
        detail={"status": version.status, "decidedBy": decider},
    )


def _merge_unedited_fields(
    version: Version, *, edited: dict[str, bool], live_number: int | None
) -> None:
    """Merge the fields a reviewer did not edit in a stale replace three-way.

    Otherwise approving the edit would silently undo a change made live since the base.
    """
    merge = merge_proposal(version)
    unresolved = [c for c in merge["conflicts"] if not edited.get(c["field"], False)]
    if unresolved:
        names = ", ".join(sorted({c["field"] for c in unresolved}))
        raise Conflict(
            f"this proposal and the live version both changed {names}; resolve that in the "
            "editor too, or reject the proposal.",
            detail={"conflicts": unresolved, "liveVersion": live_number},
        )
    fields = merge["fields"]
    if not edited["markdown"]:
        version.body = fields["body"]
    if not edited["title"]:
        version.title = fields["title"]
    if not edited["tags"]:
        version.tags = fields["tags"]
    version.parent_id, version.instructions = fields["parent_id"], fields["instructions"]
    version.merged = True


@transaction.atomic
def version_approve(
    *,
    actor: Actor,
    version: Version,
    comment: str = "",
    edited_body: str | None = None,
    edited_title: str | None = None,
    edited_tags: Iterable[str] | None = None,
    expected_live_number: int | None = None,
) -> Version:
    """Approve a proposal: it becomes the page's live version.

    An append lands on top of whatever is live now. A replace whose base is still live goes
    live as written. A stale replace is merged three-way when the changes do not overlap and
    refused with the conflicts when they do. A reviewer may edit the proposal first
    (`edited_*`); the edit must have been made against the live version that is still live
    (`expected_live_number`), so nothing is ever overwritten unseen.
    """
    _check_can_decide(actor, version)
    comment = validate_comment(comment)
    page, version = _lock_version(version)
    if version.status != VersionStatus.IN_REVIEW:
        raise _already_decided(page, version)
    live = page.live_version
    live_number = live.number if live else None
    edited = edited_body is not None or edited_title is not None or edited_tags is not None
    if expected_live_number is not None and expected_live_number != (live_number or 0):
        raise Conflict(
            f"the live version changed to v{live_number} while you were reviewing; "
            "reload the proposal and decide again.",
            detail={"liveVersion": live_number},
        )
    stale = is_stale(version)
    if edited:
        if stale and expected_live_number is None:
            raise Conflict(
                "this proposal is stale; edit it against the current live version and say "
                "which live version you edited against.",
                detail={"liveVersion": live_number},
            )
        if version.kind == VersionKind.APPEND:
            # Title, tags and parent come from what is live now, as for an unedited append.
            _apply_content(page, version)
            if edited_body is not None:
                version.body = appended_body(
                    live.body if live else "", validate_markdown(edited_body)
                )
        else:
            if stale:
                _merge_unedited_fields(
                    version,
                    edited={
                        "markdown": edited_body is not None,
                        "title": edited_title is not None,
                        "tags": edited_tags is not None,
                    },
                    live_number=live_number,
                )
            if edited_body is not None:
                version.body = validate_markdown(edited_body)
        if edited_title is not None:
            version.title = validate_title(edited_title)
        if edited_tags is not None:
            version.tags = validate_tags(list(edited_tags))
        version.edited_by_reviewer = True
    elif version.kind == VersionKind.APPEND:
        _apply_content(page, version)
    elif stale:
        merge = merge_proposal(version)
        if merge["conflicts"]:
            base_number = version.base_version.number if version.base_version else 0
            raise Conflict(
                f"v{version.number} was written against v{base_number} "
                f"but v{live_number} is live now, and the two changes overlap. Resolve the "
                "conflict in the editor or reject the proposal.",
                detail={"conflicts": merge["conflicts"], "liveVersion": live_number},
            )
        fields = merge["fields"]
        version.body = fields["body"]
        version.title, version.tags = fields["title"], fields["tags"]
        version.parent_id, version.instructions = fields["parent_id"], fields["instructions"]
        version.merged = True
    _approve_in_place(version, approver=actor, comment=comment)
    _make_live(page, version)
    audit_record(
        action="version.approve",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
        data={"edited": version.edited_by_reviewer, "merged": version.merged},
    )
    _queue_decision_notification(version)
    return version


@transaction.atomic
def version_reject(*, actor: Actor, version: Version, comment: str) -> Version:
    _check_can_decide(actor, version)
    comment = validate_comment(comment, required=True)
    page, version = _lock_version(version)
    if version.status != VersionStatus.IN_REVIEW:
        raise _already_decided(page, version)
    version.status = VersionStatus.REJECTED
    version.decided_by = actor  # type: ignore[assignment]
    version.decided_at = timezone.now()
    version.decision_comment = comment
    version.save()
    audit_record(
        action="version.reject",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
    )
    _queue_decision_notification(version)
    return version


@transaction.atomic
def version_withdraw(*, actor: Actor, version: Version) -> Version:
    mine = (
        version.author_agent_id == actor.pk
        if isinstance(actor, Agent)
        else version.author_user_id == actor.pk
    )
    if not mine:
        raise Forbidden("only the author of a proposal can withdraw it.")
    page, version = _lock_version(version)
    if version.status != VersionStatus.IN_REVIEW:
        raise Conflict(
            f"v{version.number} is {version.get_status_display().lower()}, not in review; "
            "only a waiting proposal can be withdrawn.",
            detail={"status": version.status},
        )
    version.status = VersionStatus.WITHDRAWN
    version.decided_at = timezone.now()
    version.save()
    audit_record(action="version.withdraw", actor=actor, page=page, version_number=version.number)
    return version


@transaction.atomic
def page_revert(*, actor: Actor, page: Page, to_version: Version, comment: str = "") -> Version:
    """Make an earlier approved version live again, as a new approved version."""
    if isinstance(actor, Agent) or not (can_publish(actor) or can_review(actor)):
        raise Forbidden("only editors and reviewers can revert a page.")
    page = _lock_page(page)
    if to_version.page_id != page.pk:
        raise InvalidArgument("that version belongs to another page.", field="version")
    if to_version.status != VersionStatus.APPROVED:
        raise InvalidArgument(
            f"v{to_version.number} was never live ({to_version.status}); revert only to a "
            "version that was approved.",
            field="version",
        )
    if page.live_version_id == to_version.pk:
        raise InvalidArgument(f"v{to_version.number} is already live.", field="version")
    version = Version.objects.create(
        page=page,
        number=_allocate_number(page),
        kind=VersionKind.REPLACE,
        title=to_version.title,
        body=to_version.body,
        proposed_body=to_version.body,
        tags=to_version.tags,
        parent=to_version.parent
        if to_version.parent is None or not to_version.parent.archived
        else page.parent,
        instructions=to_version.instructions,
        change_summary=validate_change_summary(comment) or f"Reverted to v{to_version.number}.",
        base_version=page.live_version,
        reverted_from=to_version,
        **_author_fields(actor),
    )
    _approve_in_place(
        version, approver=actor, comment=comment or f"Reverted to v{to_version.number}."
    )
    _make_live(page, version)
    audit_record(
        action="page.revert",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
        data={"reverted_to": to_version.number},
    )
    return version


@transaction.atomic
def page_archive(*, actor: Actor, page: Page) -> Page:
    _check_can_publish(actor)
    page = _lock_page(page)
    if page.archived:
        raise Conflict(f"page {page.public_id} is already archived.")
    page.archived = True
    page.save(update_fields=["archived", "updated_at"])
    search.remove_page(page)
    audit_record(action="page.archive", actor=actor, page=page)
    return page


@transaction.atomic
def page_restore(*, actor: Actor, page: Page) -> Page:
    _check_can_publish(actor)
    page = _lock_page(page)
    if not page.archived:
        raise Conflict(f"page {page.public_id} is not archived.")
    if page.parent is not None and page.parent.archived:
        raise Conflict("restore its parent page first.")
    page.archived = False
    page.save(update_fields=["archived", "updated_at"])
    search.index_page(page)
    audit_record(action="page.restore", actor=actor, page=page)
    return page


@transaction.atomic
def page_set_import_metadata(
    *, actor: Actor, page: Page, source_path: str | None, extra_frontmatter: dict[str, Any]
) -> Page:
    """Record where an imported page comes from and the frontmatter Quire has no field for.

    Bookkeeping for import and export, not content: it is not versioned or reviewed.
    """
    if isinstance(actor, Agent) or not actor.is_authenticated or not actor.is_active:
        raise Forbidden("only a person running an import can change import metadata.")
    page = _lock_page(page)
    page.source_path = source_path
    page.extra_frontmatter = extra_frontmatter
    page.save(update_fields=["source_path", "extra_frontmatter", "updated_at"])
    audit_record(
        action="page.import_metadata",
        actor=actor,
        page=page,
        data={"source_path": source_path},
    )
    return page


# --- attachments ------------------------------------------------------------------------------


@transaction.atomic
def attachment_add(*, actor: Actor, page: Page, upload: UploadedFile) -> Attachment:
    """Attach a file to a page, with its text extracted for agents and search."""
    from django.conf import settings

    from wiki.extract import extract_text

    if isinstance(actor, Agent) or not actor.is_authenticated:
        raise Forbidden("log in to attach files.")
    if not can_publish(actor):
        raise Forbidden("only editors can attach files to a page.")
    name = (upload.name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or len(name) > 255:
        raise InvalidArgument("the file needs a name of 1 to 255 characters.", field="file")
    limit = settings.QUIRE_ATTACHMENT_MAX_BYTES
    if upload.size is None or upload.size > limit:
        raise InvalidArgument(
            f"{name} is {upload.size or 0:,} bytes; attachments can be at most {limit:,} bytes.",
            field="file",
        )
    data = upload.read()
    if len(data) > limit:
        raise InvalidArgument(f"{name} is larger than {limit:,} bytes.", field="file")
    content_type = (
        upload.content_type
        if upload.content_type and upload.content_type != "application/octet-stream"
        else (mimetypes.guess_type(name)[0] or "application/octet-stream")
    )
    text = extract_text(name=name, content_type=content_type, data=data)
    page = _lock_page(page)
    if page.attachments.filter(name=name).exists():
        raise InvalidArgument(
            f"this page already has a file named {name}; rename the file or remove the old one.",
            field="file",
        )
    attachment = Attachment(
        page=page,
        name=name,
        content_type=content_type,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        extracted_text=text,
        uploaded_by=actor,  # type: ignore[misc]
    )
    attachment.file.save(name, ContentFile(data), save=False)
    # The file is on disk before the row; if the transaction fails, remove it again.
    stored_name = attachment.file.name or ""
    try:
        attachment.save()
        audit_record(action="attachment.add", actor=actor, page=page, data={"name": name})
        search.index_page(page)
    except BaseException:
        attachment.file.storage.delete(stored_name)
        raise
    return attachment


@transaction.atomic
def attachment_remove(*, actor: Actor, attachment: Attachment) -> None:
    if isinstance(actor, Agent) or not can_publish(actor):
        raise Forbidden("only editors can remove attachments.")
    page = _lock_page(attachment.page)
    name, stored = attachment.name, attachment.file.name or ""
    storage = attachment.file.storage
    attachment.delete()
    audit_record(action="attachment.remove", actor=actor, page=page, data={"name": name})
    transaction.on_commit(lambda: storage.delete(stored))
    search.index_page(page)
