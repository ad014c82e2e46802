"""What the MCP tools answer and take: their results' and arguments' types, from which the
library builds each tool's output and input schema."""

from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field
from typing_extensions import TypedDict

from agents.long_pages import (
    ChangedOut,
    LinesOut,
    SectionOut,
    SectionShownOut,
)


class SetPageOut(TypedDict):
    pageId: str
    title: str
    path: str
    alwaysInclude: bool
    useWhen: list[str]


class BrowseResult(TypedDict):
    pages: list[SetPageOut]
    # Only for sets larger than one answer (200 pages): their size, and where to go on.
    total: NotRequired[int]
    nextCursor: NotRequired[str | None]
    # Only when counting stopped (past 10,000 pages): the set holds at least `total`.
    totalIsLowerBound: NotRequired[bool]


class CopyOut(TypedDict):
    pageId: str
    path: str


class SearchHitOut(TypedDict):
    pageId: str
    title: str
    path: str
    section: str | None
    excerpt: str
    score: float
    alsoAt: NotRequired[list[CopyOut]]


class SearchResult(TypedDict):
    results: list[SearchHitOut]


class FileOut(TypedDict):
    name: str
    text: str


class IncludeOut(TypedDict):
    pageId: str
    title: str
    content: str


class LeftOutOut(TypedDict):
    pageId: str
    title: str


class PackedPage(TypedDict):
    pageId: str
    title: str
    path: str
    tags: list[str]
    versionNumber: int
    updated: str
    instructions: str
    content: str
    files: list[FileOut]
    includes: list[IncludeOut]
    unavailable: list[str]
    notIncluded: list[LeftOutOut]
    # Present when notIncluded is not empty: what to do about those pages.
    hint: NotRequired[str]
    # A long page comes as its outline (content: the text before its first heading).
    truncated: NotRequired[bool]
    sections: NotRequired[list[SectionOut]]
    # The section asked for, with its line range in the page.
    section: NotRequired[SectionShownOut]
    # The lines shown, when only some are (a range, or a long section's first lines).
    lines: NotRequired[LinesOut]


class PublishedOut(TypedDict):
    pageId: str
    title: str
    path: str
    versionNumber: int
    publishedAt: str
    changeSummary: str


class OwnDecisionOut(TypedDict):
    pageId: str
    title: str
    versionNumber: int
    status: str
    comment: str
    decidedAt: str


class ActivityResult(TypedDict):
    since: str
    published: list[PublishedOut]
    # Editing agents only: the decisions on their own proposals.
    decisions: NotRequired[list[OwnDecisionOut]]
    nextCursor: str | None


class ReviewCommentOut(TypedDict):
    author: str
    kind: str
    comment: str
    line: int | None
    lineText: str | None
    onVersion: int
    createdAt: str


class ReviewOut(TypedDict):
    """The workflow step a proposal waits on (DESIGN, "Review workflows")."""

    workflow: str
    status: str
    step: int
    steps: int
    stepName: str
    group: str
    approvals: int
    required: int
    approvedBy: list[str]
    revision: int
    comments: list[ReviewCommentOut]


class PendingOut(TypedDict):
    versionNumber: int
    author: str
    createdAt: str
    changeSummary: str
    review: NotRequired[ReviewOut | None]


class RefusedHunkOut(TypedDict):
    hunk: int
    line: int
    replaced: str
    proposed: str
    reason: str
    step: int


class DecisionOut(TypedDict):
    versionNumber: int
    status: str
    comment: str
    decidedAt: str
    # An approval of part of it: the changed blocks reviewers refused, and why.
    refusedHunks: NotRequired[list[RefusedHunkOut]]


class DraftOut(TypedDict):
    versionNumber: int
    baseVersion: int | None


class PageSource(TypedDict):
    pageId: str
    title: str
    markdown: str
    tags: list[str]
    status: Literal["live", "in_review", "rejected", "withdrawn"]
    parentId: str | None
    path: str
    liveVersion: int | None
    # markdown is this waiting proposal of the agent's own (null: the live text).
    draft: DraftOut | None
    inReview: bool
    pending: list[PendingOut]
    lastDecision: DecisionOut | None
    # A long page comes as its outline (markdown: the text before its first heading).
    truncated: NotRequired[bool]
    sections: NotRequired[list[SectionOut]]
    # The section asked for, with its line range in the page.
    section: NotRequired[SectionShownOut]
    # The lines shown, when only some are (a range, or a long section's first lines).
    lines: NotRequired[LinesOut]


class CheckOut(TypedDict):
    kind: str
    message: str
    line: int | None


class WriteResult(TypedDict):
    pageId: str
    title: str
    versionNumber: int
    status: Literal["in_review"]
    message: str
    # What the reviewer will be shown to look at (reviews.checks): fix it first if you can.
    checks: NotRequired[list[CheckOut]]
    # edit_page: the lines its edits changed, to check them without reading the page again.
    changed: NotRequired[list[ChangedOut]]
    # create_page: a page of the same title already beside it, and what to do about it.
    warning: NotRequired[str]


class ConnectorHitOut(TypedDict):
    id: str
    title: str
    url: str


class ConnectorSearchResult(TypedDict):
    results: list[ConnectorHitOut]


class ConnectorDocument(TypedDict):
    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any]


class EditIn(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    oldText: str
    newText: str


SectionName = Annotated[
    str | None,
    Field(
        description="A heading from sections (its line number when two read the same), "
        "or lines like '120-160'.",
        min_length=1,
        max_length=300,
    ),
]
PageId = Annotated[str, Field(description="From browse or search_pages.")]
BaseVersion = Annotated[
    int | None,
    Field(
        description="The liveVersion your text starts from (default: the one you read).",
        ge=1,
    ),
]
ChangeSummary = Annotated[str, Field(description="For the reviewer: what and why, in a sentence.")]
