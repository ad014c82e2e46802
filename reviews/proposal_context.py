"""What a proposal's review page shows about it: the diffs, rendered panes, other changes
(title, tags, parent) and, for a stale one, the merge approving would apply."""

from __future__ import annotations

from typing import Any

from django.utils.safestring import mark_safe

from reviews import selectors
from reviews.classify import change_labels
from reviews.diff import diff_text, diff_words, show, show_html, suspicious_characters, tag_changes
from reviews.merge import is_stale, merge_proposal
from reviews.rendered_diff import rendered_diff
from wiki.markdown import render_page_body, without_ids
from wiki.models import Version, VersionKind, VersionStatus
from wiki.scope import Scope


def _rendered(body: str, title: str, reader: Scope) -> str:
    """Rendered exactly as the page view renders it (links as `reader` may follow them)."""
    return render_page_body(body, title, reader=reader)


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
    before_tags = before.tags if before else []
    # What the proposal adds, not what was already there (the diff marks those too).
    flagged = suspicious_characters(
        [
            proposed["body"],
            proposed["title"],
            version.instructions,
            version.change_summary,
            *proposed["tags"],
        ],
        before=[before_body, before_title, before.instructions if before else "", *before_tags],
    )
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
        applied_body, applied_title = _merge_context(version, live, context)
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
    _hide_parents(context, reader)
    return context


# How the review page names "no parent" where it names a parent page by its title.
_TOP_LEVEL = {"title": "the top level"}


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


def _merge_context(version: Version, live: Version, context: dict[str, Any]) -> tuple[str, str]:
    """For a stale proposal: the merge approving would apply, its conflicts, and (a clean
    merge) its diff and other changes in `context`. Returns the body and title applied."""
    proposed = context["proposed"]
    applied_body, applied_title = proposed["body"], proposed["title"]
    merge = merge_proposal(version)
    context["merge"] = merge
    context["merge_clean"] = not merge["conflicts"]
    if context["merge_clean"]:
        # What approving applies is the merge: that is the diff to read. The proposal
        # as its author wrote it is kept, labelled, for reference.
        fields = merge["fields"]
        applied_body, applied_title = fields["body"], fields["title"]
        context["raw_diff"] = context["diff"]
        context["diff"] = diff_text(live.body, applied_body)
        # The title, tags and parent listed are the merged ones too: a proposal written
        # before the page moved does not move it back, so no move is listed.
        parent = live.parent if fields["parent_id"] == live.parent_id else version.parent
        applied = {"title": fields["title"], "tags": fields["tags"], "parent": parent}
        context.update(_field_changes(live, applied))
        if fields["parent_id"] != version.parent_id:
            context["written_under"] = version.parent or _TOP_LEVEL
            context["live_parent"] = live.parent
    context["conflicts"] = [
        {
            "field": conflict["field"],
            "base": mark_safe(show(_as_text(conflict["base"]))),
            "live": mark_safe(show(_as_text(conflict["live"]))),
            "proposal": mark_safe(show(_as_text(conflict["proposal"]))),
        }
        for conflict in merge["conflicts"]
    ]
    return applied_body, applied_title


def _hide_parents(context: dict[str, Any], reader: Scope) -> None:
    """The parents the page shows, but one hidden from the reader (a page moved out of a
    section hidden from them) named by no title: one query, only when a parent is shown."""
    named = ("before_parent", "applied_parent") if context["parent_changed"] else ()
    if context.get("written_under"):
        named = (*named, "written_under", "live_parent")
    context.update(selectors.parents_shown(reader, {key: context[key] for key in named}))
