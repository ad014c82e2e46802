"""What the review page shows of a proposal: its diff against what it changes (or the merge
approving would apply), the other changes, the rendered panes. Reads only."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.safestring import mark_safe

from reviews import selectors
from reviews.classify import change_labels
from reviews.diff import diff_text, diff_words, show, show_html, suspicious_characters, tag_changes
from reviews.merge import appended_body, is_stale, merge_proposal
from reviews.rendered_diff import rendered_diff
from wiki.markdown import render_page_body, without_ids
from wiki.models import Page, Version, VersionKind, VersionStatus
from wiki.scope import Scope

# How the review page names "no parent" where it names a parent page by its title.
_TOP_LEVEL = {"title": "the top level"}


def proposal_context(version: Version, reader: Scope) -> dict[str, Any]:
    """Everything the review page shows about `version`, compared with what it changes."""
    page = version.page
    live = page.live_version
    in_review = version.status == VersionStatus.IN_REVIEW
    proposed = selectors.proposed_content(version)
    # In review: compare with what is live now. Decided: with what it was written against.
    before = live if in_review else version.base_version
    before_body = before.body if before else ""
    before_title = before.title if before else ""
    flagged = _flagged(version, proposed, before)
    context: dict[str, Any] = {
        "page": page,
        "version": version,
        "live": live,
        "before": before,
        "in_review": in_review,
        "stale": is_stale(version),
        "proposed": proposed,
        "diff": diff_text(before_body, proposed["body"]),
        **_field_changes(before, proposed),
        "invisible": flagged,
        "invisible_kinds": {
            "hidden": any(not flag.lookalike for flag in flagged),
            "lookalike": any(flag.lookalike for flag in flagged),
        },
        "change_summary_html": mark_safe(show(version.change_summary)),
        "change": change_labels(version),
    }
    applied_body, applied_title = proposed["body"], proposed["title"]
    if context["stale"] and live is not None:
        applied_body, applied_title = _merged(version, live, context)
    if version.kind == VersionKind.APPEND and in_review:
        context["rendered_live"] = mark_safe(
            show_html(_rendered(live.body if live else "", applied_title, reader))
        )
        context["rendered_appended"] = mark_safe(
            show_html(without_ids(render_page_body(version.proposed_body, "", reader=reader)))
        )
    rendered = _rendered(applied_body, applied_title, reader)
    # The panes badge invisible and look-alike characters as the markdown diff does.
    context["rendered"] = mark_safe(show_html(rendered))
    context["rendered_diff"] = rendered_diff(
        _rendered(before_body, before_title or applied_title, reader), rendered
    )
    return context


def _flagged(version: Version, proposed: dict[str, Any], before: Version | None) -> list[Any]:
    """What the proposal adds of invisible or look-alike characters, not what was already
    there (the diff marks those too)."""
    return suspicious_characters(
        [
            proposed["body"],
            proposed["title"],
            version.instructions,
            version.change_summary,
            *proposed["tags"],
        ],
        before=[
            before.body if before else "",
            before.title if before else "",
            before.instructions if before else "",
            *(before.tags if before else []),
        ],
    )


def _merged(version: Version, live: Version, context: dict[str, Any]) -> tuple[str, str]:
    """A stale proposal: the merge approving applies, its conflicts; returns the body and
    title approving applies."""
    merge = merge_proposal(version)
    context["merge"] = merge
    context["merge_clean"] = not merge["conflicts"]
    applied = context["proposed"]["body"], context["proposed"]["title"]
    if context["merge_clean"]:
        # What approving applies is the merge: that is the diff to read. The proposal as its
        # author wrote it is kept, labelled, for reference.
        fields = merge["fields"]
        applied = fields["body"], fields["title"]
        context["raw_diff"] = context["diff"]
        context["diff"] = diff_text(live.body, fields["body"])
        # The title, tags and parent listed are the merged ones too: a proposal written
        # before the page moved does not move it back, so no move is listed.
        parent = live.parent if fields["parent_id"] == live.parent_id else version.parent
        applied_fields = {"title": fields["title"], "tags": fields["tags"], "parent": parent}
        context.update(_field_changes(live, applied_fields))
        if fields["parent_id"] != version.parent_id:
            context["written_under"] = version.parent or _TOP_LEVEL
    context["conflicts"] = [
        {
            "field": conflict["field"],
            "base": mark_safe(show(_as_text(conflict["base"]))),
            "live": mark_safe(show(_as_text(conflict["live"]))),
            "proposal": mark_safe(show(_as_text(conflict["proposal"]))),
        }
        for conflict in merge["conflicts"]
    ]
    return applied


def _rendered(body: str, title: str, reader: Scope) -> str:
    """Rendered exactly as the page view renders it (links as `reader` may follow them)."""
    return render_page_body(body, title, reader=reader)


def _field_changes(before: Version | None, applied: dict[str, Any]) -> dict[str, Any]:
    """The title, tags and parent approving applies, against `before` (the "Other changes")."""
    before_parent = before.parent if before else None
    removed, added, kept = tag_changes(before.tags if before else [], applied["tags"])
    return {
        "title_changed": before is not None and before.title != applied["title"],
        "title_diff": diff_words(before.title if before else "", applied["title"]),
        "tags_removed": removed,
        "tags_added": added,
        "tags_kept": kept,
        "parent_changed": before is not None and before_parent != applied["parent"],
        "before_parent": before_parent,
        "applied_parent": applied["parent"],
    }


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def edit_initial(version: Version, context: dict[str, Any]) -> dict[str, Any]:
    """The "Edit, then approve" form as it opens: the proposal, or the merge with markers."""
    live = context["live"]
    proposed = context["proposed"]
    initial = {
        "title": proposed["title"],
        "tags": ", ".join(proposed["tags"]),
        "body": version.proposed_body if version.kind == VersionKind.APPEND else proposed["body"],
        "expected_live_number": live.number if live else 0,
    }
    merge = context.get("merge")
    if merge is not None:
        fields = merge["fields"]
        initial["body"] = merge["text_with_markers"]
        initial["title"] = fields["title"]
        initial["tags"] = ", ".join(fields["tags"])
    return initial


def as_seen(version: Version) -> str:
    """The text a reviewer read on an earlier revision (an addition: on today's live page)."""
    if version.kind == VersionKind.APPEND and version.status != VersionStatus.APPROVED:
        live = version.page.live_version
        return appended_body(live.body if live else "", version.proposed_body)
    return version.body


def approved_verb(version: Version) -> str:
    """ "approved", or where an approval that does not publish yet left the proposal."""
    if version.status == VersionStatus.APPROVED:
        return "approved"
    review = selectors.review_of(version)
    if review is None:
        return "approved"
    step = review.current_step
    return (
        f"approved; it waits on step {review.step + 1} of {len(review.steps)} "
        f"({step['name']}, {step['group']})"
    )


def page_crumbs(page: Page, *first: tuple[str, str]) -> list[tuple[str, str]]:
    """The same trail as the page view's: the page (when it can be opened) and its history."""
    crumbs = [("Pages", reverse("wiki:home")), *first]
    if page.live_version_id is not None and not page.archived:
        crumbs.append((page.title, reverse("wiki:page", kwargs={"public_id": page.public_id})))
    else:
        crumbs.append((page.title, ""))
    crumbs.append(("History", reverse("reviews:history", kwargs={"page_id": page.public_id})))
    return crumbs
