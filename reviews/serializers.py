"""REST API shapes: pages, versions, reviews, decisions and errors (camelCase keys)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.validators import RegexValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reviews import selectors
from reviews.actions.rules import (
    CHANGES_REASON_REQUIRED,
    COMMENT_MAX,
    COMMENT_TOO_LONG,
    REASON_REQUIRED,
)
from reviews.classify import CLASS_CHOICES, CLASSES, labels, size_of
from reviews.diff import unified_diff
from reviews.merge import is_stale, staleness
from reviews.partial import REASON_MAX, REFUSED_MAX, version_hunks
from reviews.shown import shown_token
from wiki.markdown import render_markdown
from wiki.models import RIGHTS, Page, Version, VersionStatus
from wiki.scope import EVERY_PAGE, is_top_shown, person_scope, shown_path
from wiki.validators import check_visible_text

# Fields that are null when there is nothing to name (no parent, no base, not decided...).
NULLABLE_STR = serializers.CharField(allow_null=True)
NULLABLE_INT = serializers.IntegerField(allow_null=True)
# What the schema promises a comment may hold; DRF refuses NUL, and a reason must say something.
NO_NUL = RegexValidator(r"^[^\x00]*$", message="Remove the NUL character (\\x00).")
# What a comment may not hold (wiki.validators' rule for text of several lines: control,
# bidi and zero-width characters), stated in the schema too, so that a client (or a fuzzer)
# reading it does not send what check_visible_text refuses.
_NOT_IN_COMMENT = (
    r"\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f"
    r"\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff\u180e"
)
VISIBLE_COMMENT = RegexValidator(
    rf"^[^{_NOT_IN_COMMENT}]*$", message="Remove the control or invisible characters."
)
_SAYS_SOMETHING_PATTERN = rf"^[^{_NOT_IN_COMMENT}]*[^\s{_NOT_IN_COMMENT}][^{_NOT_IN_COMMENT}]*$"
SAYS_SOMETHING = RegexValidator(_SAYS_SOMETHING_PATTERN, message=REASON_REQUIRED)


class AuthorSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["agent", "user"])
    name = serializers.CharField()


def _author(version: Version) -> dict[str, str]:
    if version.author_agent is not None:
        return {"kind": "agent", "name": version.author_agent.name}
    user = version.author_user
    return {"kind": "user", "name": user.get_username() if user is not None else ""}


class PageSerializer(serializers.Serializer):
    """A page as the person asking sees it: its rows come with `hidden_prefix` (the start of
    its path naming pages hidden from them, wiki.scope), so that neither its path nor its
    parentId names a section hidden from them."""

    pageId = serializers.CharField(source="public_id")
    title = serializers.CharField()
    path = serializers.SerializerMethodField(
        help_text="From the top, or from the highest page on it that you may read, down."
    )
    tags = serializers.ListField(child=serializers.CharField())
    parentId = serializers.SerializerMethodField(
        help_text="null at the top, and where the parent is a page you may not read."
    )
    versionNumber = serializers.IntegerField(source="live_version.number")
    updated = serializers.SerializerMethodField()

    def get_path(self, page: Page) -> str:
        return shown_path(page.path, EVERY_PAGE, page.hidden_prefix)  # type: ignore[attr-defined]

    @extend_schema_field(NULLABLE_STR)
    def get_parentId(self, page: Page) -> str | None:
        if page.parent is None or is_top_shown(self.get_path(page)):
            return None
        return page.parent.public_id

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_updated(self, page: Page) -> str:
        live = page.live_version
        when = (live.decided_at or live.created_at) if live is not None else page.updated_at
        return when.isoformat()


class PageDetailSerializer(PageSerializer):
    instructions = serializers.CharField()
    markdown = serializers.CharField(source="live_version.body")
    html = serializers.SerializerMethodField(help_text="The live markdown rendered and sanitised.")

    def get_html(self, page: Page) -> str:
        live = page.live_version
        request = self.context.get("request")
        reader = person_scope(getattr(request, "user", None))
        return render_markdown(live.body, reader=reader) if live is not None else ""


class ReviewStepSerializer(serializers.Serializer):
    step = serializers.IntegerField()
    name = serializers.CharField()
    group = serializers.CharField()
    required = serializers.IntegerField()  # type: ignore[assignment]  # DESIGN's key
    approvedBy = serializers.ListField(child=serializers.CharField())


class ReviewCommentSerializer(serializers.Serializer):
    author = serializers.CharField()
    kind = serializers.ChoiceField(choices=["comment", "changes_requested", "rejected"])
    comment = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    lineText = serializers.CharField(allow_null=True)
    onVersion = serializers.IntegerField(help_text="The revision the comment was made on.")
    createdAt = serializers.DateTimeField()


class ReviewAskedSerializer(serializers.Serializer):
    person = serializers.CharField(help_text="Who was asked by name to review it.")
    askedBy = serializers.CharField(allow_null=True, help_text="Who asked (null: gone since).")
    askedAt = serializers.DateTimeField()


class ReviewStateSerializer(serializers.Serializer):
    """Where a proposal stands in its workflow (DESIGN, "Review workflows")."""

    workflow = serializers.CharField(help_text="The workflow it started with.")
    status = serializers.ChoiceField(
        choices=["open", "changes_requested"],
        help_text="open: waiting on the step's members; changes_requested: on its author.",
    )
    step = serializers.IntegerField(help_text="The step it waits on, from 1.")
    steps = serializers.IntegerField(help_text="How many steps its workflow has.")
    stepName = serializers.CharField()
    group = serializers.CharField(help_text="Whose members decide this step.")
    approvals = serializers.IntegerField(help_text="Approvals so far at this step.")
    required = serializers.IntegerField(  # type: ignore[assignment]  # DESIGN's key
        help_text="Approvals this step needs."
    )
    approvedBy = serializers.ListField(child=serializers.CharField())
    revision = serializers.IntegerField(help_text="1, then 2... as its author revises it.")
    path = ReviewStepSerializer(many=True)
    comments = ReviewCommentSerializer(many=True)
    asked = ReviewAskedSerializer(many=True, help_text="People asked by name, first asked first.")


class ChangeKindSerializer(serializers.Serializer):
    classes = serializers.ListField(
        child=serializers.ChoiceField(choices=CLASS_CHOICES),
        help_text="What kind of change it is, from its diff alone, classed when it was "
        "submitted: " + "; ".join(f"{name}: {about[1]}" for name, about in CLASSES.items()),
    )
    labels = serializers.ListField(child=serializers.CharField(), help_text="As screens show them.")
    lines = serializers.IntegerField(help_text="Lines changed (added plus removed).")
    size = serializers.ChoiceField(choices=["small", "medium", "large"])


class VersionSerializer(serializers.Serializer):
    pageId = serializers.CharField(source="page.public_id")
    number = serializers.IntegerField()
    status = serializers.CharField()
    kind = serializers.CharField()
    title = serializers.CharField()
    author = serializers.SerializerMethodField()
    changeSummary = serializers.CharField(source="change_summary")
    baseVersion = serializers.SerializerMethodField()
    createdAt = serializers.DateTimeField(source="created_at")
    decidedBy = serializers.SerializerMethodField()
    decidedAt = serializers.DateTimeField(source="decided_at", allow_null=True)
    comment = serializers.CharField(source="decision_comment")
    merged = serializers.BooleanField()
    editedByReviewer = serializers.BooleanField(source="edited_by_reviewer")
    revertedFrom = serializers.SerializerMethodField()
    mergedInto = serializers.SerializerMethodField(
        help_text="For a proposal approved after a newer version went live: the number it "
        "went live as (the newest then); else null."
    )
    live = serializers.SerializerMethodField()
    stale = serializers.SerializerMethodField()
    staleNote = serializers.SerializerMethodField(
        help_text="For a stale proposal, e.g. 'written against v3, live is v5'; else null."
    )
    review = serializers.SerializerMethodField(
        help_text="For a version in review: its workflow step, approvals and comments; else null."
    )
    change = serializers.SerializerMethodField(
        help_text="What kind of change it is (null: proposed before changes were classed)."
    )

    @extend_schema_field(ChangeKindSerializer(allow_null=True))
    def get_change(self, version: Version) -> dict[str, Any] | None:
        if version.change_lines is None:
            return None
        classes = version.change_classes.split()
        return {
            "classes": classes,
            "labels": labels(classes),
            "lines": version.change_lines,
            "size": size_of(version.change_lines),
        }

    @extend_schema_field(ReviewStateSerializer(allow_null=True))
    def get_review(self, version: Version) -> dict[str, Any] | None:
        return selectors.review_summary(version)

    @extend_schema_field(AuthorSerializer)
    def get_author(self, version: Version) -> dict[str, str]:
        return _author(version)

    @extend_schema_field(NULLABLE_INT)
    def get_baseVersion(self, version: Version) -> int | None:
        return version.base_version.number if version.base_version is not None else None

    @extend_schema_field(NULLABLE_STR)
    def get_decidedBy(self, version: Version) -> str | None:
        return version.decided_by.get_username() if version.decided_by is not None else None

    @extend_schema_field(NULLABLE_INT)
    def get_revertedFrom(self, version: Version) -> int | None:
        source = version.reverted_from
        return source.number if source is not None else None

    @extend_schema_field(NULLABLE_INT)
    def get_mergedInto(self, version: Version) -> int | None:
        if version.merged_into_id is None:
            return None
        return version.merged_into.number  # type: ignore[union-attr]

    def get_live(self, version: Version) -> bool:
        return version.page.live_version_id == version.pk

    def get_stale(self, version: Version) -> bool:
        return is_stale(version)

    @extend_schema_field(NULLABLE_STR)
    def get_staleNote(self, version: Version) -> str | None:
        return staleness(version)


class HunkSerializer(serializers.Serializer):
    hunk = serializers.IntegerField(help_text="Its number, from 1.")
    line = serializers.IntegerField(help_text="Where it starts in the live text, from 1.")
    kind = serializers.ChoiceField(choices=["added", "removed", "changed"])
    replaced = serializers.CharField(help_text="The live lines it replaces.")
    proposed = serializers.CharField(help_text="The lines it proposes.")


class RefusedHunkSerializer(serializers.Serializer):
    hunk = serializers.IntegerField()
    line = serializers.IntegerField()
    replaced = serializers.CharField()
    proposed = serializers.CharField()
    reason = serializers.CharField()
    step = serializers.IntegerField(help_text="The workflow step it was refused at, from 1.")
    refusedBy = serializers.CharField()


class VersionDetailSerializer(VersionSerializer):
    markdown = serializers.SerializerMethodField(
        help_text="The page content this version stands for (an append in review: live "
        "content with the appended markdown)."
    )
    proposedMarkdown = serializers.CharField(
        source="proposed_body", help_text="Exactly what the author wrote."
    )
    tags = serializers.ListField(child=serializers.CharField())
    parentId = serializers.SerializerMethodField()
    instructions = serializers.CharField()
    diffAgainstBase = serializers.SerializerMethodField(
        help_text="Unified diff from the version it was written against."
    )
    diffAgainstLive = serializers.SerializerMethodField(
        help_text="Unified diff from the live version (empty when it is the live version)."
    )
    shown = serializers.SerializerMethodField(
        help_text="A version in review, as GET .../versions/{number}/ answers it: a digest of "
        "this change against the live version, keyed to you. Pass it with the item in POST "
        "/api/v1/reviews/decide to say you read this diff (refused there once the proposal "
        "or the live version changed). Null otherwise. Reading writes nothing."
    )

    def _content(self, version: Version) -> dict[str, Any]:
        # Several fields need the content; work it out once per version.
        cached: dict[str, Any] | None = getattr(version, "_api_content", None)
        if cached is None:
            cached = selectors.proposed_content(version)
            version._api_content = cached  # type: ignore[attr-defined]
        return cached

    def get_markdown(self, version: Version) -> str:
        body: str = self._content(version)["body"]
        return body

    @extend_schema_field(NULLABLE_STR)
    def get_parentId(self, version: Version) -> str | None:
        parent = self._content(version)["parent"]
        if parent is None:
            return None
        page = version.page
        if parent.pk == page.parent_id:
            # The page as the reader loaded it (wiki.selectors.page_for_person) says whether
            # its parent is hidden from them: then it is not named.
            shown = shown_path(page.path, EVERY_PAGE, getattr(page, "hidden_prefix", 0))
            if is_top_shown(shown):
                return None
        else:
            # An older place (the page moved out of or into a section since): named only if
            # the reader may read it (reviews.selectors.version_of says who reads).
            reader = getattr(version, "reader_scope", None) or person_scope(None)
            if selectors.parents_shown(reader, {"parent": parent})["parent"] is not parent:
                return None
        return str(parent.public_id)

    def get_diffAgainstBase(self, version: Version) -> str:
        base = version.base_version
        return unified_diff(
            base.body if base is not None else "",
            self._content(version)["body"],
            old_name=f"v{base.number}" if base is not None else "empty",
            new_name=f"v{version.number}",
        )

    @extend_schema_field(NULLABLE_STR)
    def get_shown(self, version: Version) -> str | None:
        viewer = self.context.get("viewer")
        if not isinstance(viewer, User) or version.status != VersionStatus.IN_REVIEW:
            return None
        return shown_token(viewer, version, version.page.live_version)

    def get_diffAgainstLive(self, version: Version) -> str:
        live = version.page.live_version
        return unified_diff(
            live.body if live is not None else "",
            self._content(version)["body"],
            old_name=f"v{live.number} (live)" if live is not None else "empty",
            new_name=f"v{version.number}",
        )

    hunks = serializers.SerializerMethodField(
        help_text="For an edit in review that is not stale: its changed blocks against the "
        "live version, by number, as approve-partial refuses them; else empty."
    )
    refusedHunks = serializers.SerializerMethodField(
        help_text="The changed blocks reviewers refused when they approved the rest, and why."
    )

    @extend_schema_field(HunkSerializer(many=True))
    def get_hunks(self, version: Version) -> list[dict[str, Any]]:
        return [
            {
                "hunk": hunk.number,
                "line": hunk.line,
                "kind": hunk.kind,
                "replaced": hunk.replaced,
                "proposed": hunk.proposed,
            }
            for hunk in version_hunks(version)
        ]

    @extend_schema_field(RefusedHunkSerializer(many=True))
    def get_refusedHunks(self, version: Version) -> list[dict[str, Any]]:
        return [
            {
                "hunk": hunk.number,
                "line": hunk.line,
                "replaced": hunk.replaced,
                "proposed": hunk.proposed,
                "reason": hunk.reason,
                "step": hunk.step + 1,
                "refusedBy": hunk.refused_by.get_username(),
            }
            for hunk in selectors.refused_hunks(version)
        ]


class ReviewSerializer(VersionSerializer):
    pageTitle = serializers.CharField(source="page.title")
    pagePath = serializers.SerializerMethodField(
        help_text="The page's path from the highest page on it that you may read."
    )
    reviewUrl = serializers.SerializerMethodField()

    def get_pagePath(self, version: Version) -> str:
        # review_queue gives each row the start of its page's path hidden from the reader.
        return shown_path(version.page.path, EVERY_PAGE, version.page_hidden_prefix)  # type: ignore[attr-defined]

    def get_reviewUrl(self, version: Version) -> str:
        from django.urls import reverse

        path = reverse(
            "reviews:review",
            kwargs={"page_id": version.page.public_id, "number": version.number},
        )
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class CommentField(serializers.CharField):
    """A reviewer's comment: the text rule is the one every door uses, with its message."""

    def run_validation(self, data: Any = serializers.empty) -> Any:
        if isinstance(data, str):
            check_visible_text(data, field="comment", what="a comment")
        return super().run_validation(data)


def _step_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=99,
        help_text="The workflow step (from 1) you decide, as the version's review.step showed "
        "it; refused with 409 when the proposal has moved on to another step. Left out: the "
        "step the proposal was at when your request arrived.",
    )


def decision_comment_field(help_text: str = "At most 5,000 characters.") -> CommentField:
    """A decision's optional comment, as every door that decides takes it."""
    return CommentField(
        required=False,
        allow_blank=True,
        validators=[VISIBLE_COMMENT],
        max_length=COMMENT_MAX,
        error_messages={"max_length": COMMENT_TOO_LONG},
        help_text=help_text,
    )


class ApproveInputSerializer(serializers.Serializer):
    step = _step_field()
    comment = decision_comment_field()
    expectedLiveVersion = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="The live version number you reviewed against; the approval is refused "
        "with 409 if another version went live meanwhile.",
    )


class RefuseHunkInputSerializer(serializers.Serializer):
    hunk = serializers.IntegerField(min_value=1, max_value=10000)
    reason = CommentField(
        required=False,
        allow_blank=True,
        validators=[VISIBLE_COMMENT],
        max_length=REASON_MAX,
        help_text=f"Why (the author reads it), at most {REASON_MAX:,} characters.",
    )


class ApprovePartialInputSerializer(serializers.Serializer):
    step = _step_field()
    comment = decision_comment_field()
    expectedLiveVersion = serializers.IntegerField(
        min_value=0,
        help_text="The live version the hunks were numbered against (as the version's "
        "`hunks` showed them); 409 when another went live since.",
    )
    refused = serializers.ListField(
        child=RefuseHunkInputSerializer(),
        min_length=1,
        max_length=REFUSED_MAX,
        help_text="The hunks not to publish, by number; every other one is approved.",
    )


class RejectInputSerializer(serializers.Serializer):
    step = _step_field()
    # The service refuses a rejection without a reason; the schema says so too, with the
    # service's own sentence.
    comment = CommentField(
        max_length=COMMENT_MAX,
        validators=[SAYS_SOMETHING],
        help_text="Why the proposal is rejected (at most 5,000 characters): the author sees it.",
        error_messages={
            "required": REASON_REQUIRED,
            "blank": REASON_REQUIRED,
            "max_length": COMMENT_TOO_LONG,
        },
    )


class _ChangesCommentSerializer(serializers.Serializer):
    comment = CommentField(
        max_length=COMMENT_MAX,
        validators=[RegexValidator(_SAYS_SOMETHING_PATTERN, message=CHANGES_REASON_REQUIRED)],
        help_text="What the author should change (at most 5,000 characters).",
        error_messages={
            "required": CHANGES_REASON_REQUIRED,
            "blank": CHANGES_REASON_REQUIRED,
            "max_length": COMMENT_TOO_LONG,
        },
    )


class RequestChangesInputSerializer(_ChangesCommentSerializer):
    step = _step_field()


class CommentInputSerializer(_ChangesCommentSerializer):
    line = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**31 - 1,
        help_text="A line of the proposed text (1 is the first) the comment is about.",
    )


class AskInputSerializer(serializers.Serializer):
    # Names are not trimmed: one with spaces around it names nobody (404), as the schema
    # allows it.
    people = serializers.ListField(
        child=serializers.CharField(
            min_length=1, max_length=150, trim_whitespace=False, validators=[NO_NUL]
        ),
        min_length=1,
        max_length=20,
        help_text="User names of people who decide the proposal's current step; each gets "
        "an inbox item and an email. All are asked, or nobody.",
        error_messages={"min_length": 'name at least one person, e.g. {{"people": ["alice"]}}.'},
    )


class WorkflowStepSerializer(serializers.Serializer):
    name = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        validators=[NO_NUL],
        help_text="Defaults to the group's name.",
    )
    # Not trimmed here: a name of spaces alone is a group that does not exist (404), as the
    # schema's minLength allows it.
    group = serializers.CharField(
        min_length=1,
        max_length=150,
        trim_whitespace=False,
        validators=[NO_NUL],
        help_text="An existing group's name.",
    )
    approvals = serializers.IntegerField(min_value=1, max_value=50, default=1)
    dueHours = serializers.IntegerField(
        source="due_hours",
        required=False,
        allow_null=True,
        min_value=1,
        max_value=8760,
        help_text="Hours a proposal may wait at this step before its deciders are reminded; "
        "null or left out: the server's QUIRE_REVIEW_DUE_HOURS.",
    )


class WorkflowPageSerializer(serializers.Serializer):
    pageId = serializers.CharField()
    title = serializers.CharField()
    path = serializers.CharField()


NEVER_IN_BATCH_HELP = (
    "Kinds of change (as a version's change.classes names them) never approved in a batch "
    "on this workflow's pages: each is decided on its own. Applies at once, to proposals in "
    "review too."
)


class WorkflowInputSerializer(serializers.Serializer):
    name = serializers.CharField(min_length=1, max_length=100, validators=[NO_NUL])
    steps = serializers.ListField(child=WorkflowStepSerializer(), min_length=1, max_length=10)
    neverInBatch = serializers.ListField(
        child=serializers.ChoiceField(choices=CLASS_CHOICES),
        required=False,
        max_length=len(CLASSES),
        help_text=NEVER_IN_BATCH_HELP + " Left out: none on a new workflow, unchanged on PUT.",
    )


class WorkflowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    neverInBatch = serializers.ListField(
        source="never_in_batch", child=serializers.CharField(), help_text=NEVER_IN_BATCH_HELP
    )
    steps = serializers.SerializerMethodField()
    pages = serializers.SerializerMethodField()

    @extend_schema_field(WorkflowStepSerializer(many=True))
    def get_steps(self, workflow: Any) -> list[dict[str, Any]]:
        return [
            {
                "name": step.name,
                "group": step.group.name,
                "approvals": step.approvals,
                "dueHours": step.due_hours,
            }
            for step in workflow.steps.all()
        ]

    @extend_schema_field(WorkflowPageSerializer(many=True))
    def get_pages(self, workflow: Any) -> list[dict[str, str]]:
        return [
            {
                "pageId": assignment.page.public_id,
                "title": assignment.page.title,
                "path": assignment.page.path,
            }
            for assignment in sorted(workflow.assignments.all(), key=lambda a: a.page.path)
        ]


class AssignInputSerializer(serializers.Serializer):
    pageId = serializers.RegexField(
        r"^pg_[a-z2-7]{8}$", error_messages={"invalid": "Give a page id like pg_abcdefgh."}
    )
    replace = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Replace another workflow assigned to this page; without it, that is "
        "refused with 409 naming the current workflow.",
    )


class PageWorkflowSerializer(serializers.Serializer):
    workflow = serializers.CharField(help_text="Its name; Default when none is assigned.")
    workflowId = serializers.IntegerField(allow_null=True)
    steps = WorkflowStepSerializer(many=True)
    source = WorkflowPageSerializer(  # type: ignore[assignment]  # the key REST answers with
        allow_null=True, help_text="The page it is assigned to: this page or an ancestor."
    )
    default = serializers.BooleanField()


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    detail = serializers.DictField(required=False)


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


_RIGHTS_TEXT = ", ".join(RIGHTS)


class GrantInputSerializer(serializers.Serializer):
    # Not trimmed here: a name of spaces alone is a group that does not exist (404), as the
    # schema's minLength allows it.
    group = serializers.CharField(
        min_length=1,
        max_length=150,
        trim_whitespace=False,
        validators=[NO_NUL],
        help_text="An existing group's name.",
    )
    rights = serializers.ListField(
        child=serializers.ChoiceField(
            choices=list(RIGHTS),
            error_messages={
                "invalid_choice": f'"{{input}}" is not a right; the rights are {_RIGHTS_TEXT}.'
            },
        ),
        min_length=1,
        max_length=len(RIGHTS),
        help_text="What the group may do on the page and everything under it: "
        f"{_RIGHTS_TEXT}. They replace what the group had on this page.",
        error_messages={
            "min_length": "give at least one right; to take a group's rights away, delete "
            "its grant.",
        },
    )


class GrantSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    group = serializers.CharField(source="group.name")
    rights = serializers.ListField(child=serializers.CharField())
    pageId = serializers.CharField(source="page.public_id")
    path = serializers.CharField(source="page.path")
    createdAt = serializers.DateTimeField(source="created_at")


class RightHoldersSerializer(serializers.Serializer):
    right = serializers.CharField()
    everyone = serializers.BooleanField(help_text="Every active person holds it (no grant).")
    groups = serializers.ListField(
        child=serializers.CharField(), help_text="The groups holding it (superusers always do)."
    )
    fromPageId = serializers.CharField(
        allow_null=True, help_text="The page whose grant decides it; null: the default."
    )
    fromPath = serializers.CharField(allow_null=True)
    blockedByWorkflow = serializers.CharField(
        allow_null=True,
        help_text="publish: the review workflow that applies here, so nobody publishes.",
    )


class PageAccessSerializer(serializers.Serializer):
    pageId = serializers.CharField()
    path = serializers.CharField()
    rights = RightHoldersSerializer(many=True)
    grants = GrantSerializer(many=True, help_text="The grants on this page and above it.")
