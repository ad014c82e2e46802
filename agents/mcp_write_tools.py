"""The tools an agent with edit rights adds: get_page_source and the four that propose."""

from typing import Annotated

from pydantic import Field

from agents import selectors
from agents.edits import apply_edits
from agents.long_pages import (
    SOURCE_BUDGET,
    changed_lines,
    shown_text,
)
from agents.mcp_answers import (
    appended,
    blind_replace,
    checked,
    decision_out,
    iso,
    received_live,
    review_out,
    source_status,
    write_result,
)
from agents.mcp_outputs import (
    BaseVersion,
    ChangeSummary,
    EditIn,
    PageId,
    PageSource,
    SectionName,
    WriteResult,
)
from agents.mcp_toolbase import ToolBase, tool
from agents.services import agent_page_create
from reviews import selectors as review_selectors
from reviews.actions.propose import version_propose
from wiki.models import VersionKind
from wiki.validators import (
    validate_change_summary,
)


class WriteTools(ToolBase):
    """get_page_source, create_page, update_page, edit_page and append_to_page."""

    @tool("Read a page's markdown source", read_only=True)
    def get_page_source(self, pageId: PageId, section: SectionName = None) -> PageSource:
        """Read a page's markdown before update_page, edit_page or append_to_page. If your
        proposal waits, markdown is that draft (draft names it); lastDecision is the last
        decision on yours (rejected new page: fix it, send update_page; refusedHunks: propose
        again). Over 10,000 characters: an outline; a section over 6,000: its outline or first
        lines (section=lines.next reads on).
        """
        agent = self._agent()
        page = selectors.page_source_for_agent(agent, pageId)
        live = page.live_version
        draft = selectors.own_pending_proposal(agent, page, with_review=True)
        decided = selectors.own_last_decision(agent, page)
        asked = review_selectors.changes_request(draft) if draft is not None else None
        # A page the agent created that never went live and has nothing waiting: its last
        # proposal (rejected, with the reason in lastDecision) is the text to revise.
        shown = draft or live or decided or selectors.own_newest_version(agent, page)
        if shown is None:
            raise selectors.no_such_page(page.public_id)
        if draft is not None and draft.kind == VersionKind.APPEND:
            markdown = appended(live.body if live else "", draft.proposed_body)
        else:
            markdown = shown.body
        part = shown_text(markdown, section, SOURCE_BUDGET)
        parent = selectors.parent_in_set(page)
        received = received_live(live, draft)
        if received is not None:
            self._read(agent, page.pk, received)
        self._touched(
            page, versions=[v.number for v in (live, draft) if v is not None], read_live=received
        )
        return {
            "pageId": page.public_id,
            "title": shown.title,
            "markdown": part.text,
            "tags": list(shown.tags),
            "status": source_status(live, draft, shown),
            "parentId": parent.public_id if parent is not None else None,
            "path": selectors.agent_path(page),
            "liveVersion": live.number if live is not None else None,
            "draft": {"versionNumber": draft.number, "baseVersion": received}
            if draft is not None
            else None,
            "inReview": draft is not None,
            "pending": [
                {
                    "versionNumber": draft.number,
                    "author": draft.author_name,
                    "createdAt": iso(draft.created_at),
                    "changeSummary": draft.change_summary,
                    "review": review_out(draft),
                }
            ]
            if draft is not None
            else [],
            "lastDecision": {
                "versionNumber": draft.number,
                "status": "changes_requested",
                "comment": asked.body,
                "decidedAt": iso(asked.created_at),
            }
            if draft is not None and asked is not None
            else decision_out(decided)
            if decided is not None
            else None,
            **part.fields,  # type: ignore[typeddict-item]
        }

    @tool("Propose a new page", read_only=False, destructive=False, idempotent=False)
    def create_page(
        self,
        title: Annotated[str, Field(description="1 to 200 characters.")],
        markdown: str,
        parentId: Annotated[str | None, Field(description="A pageId of your set.")] = None,
        tags: Annotated[list[str] | None, Field(description="Up to 20.")] = None,
        changeSummary: Annotated[str | None, Field(description="Why this page.")] = None,
    ) -> WriteResult:
        """Propose a new page, invisible until a person approves it. Only when no page in
        your set covers the topic (search_pages first). With parentId it goes under that page;
        without, it is a top-level page added to your set.
        """
        agent = self._agent()
        parent = selectors.page_for_agent(agent, parentId) if parentId else None
        twin = selectors.sibling_titled_for_agent(agent, parent, title)
        version = agent_page_create(
            agent=agent,
            title=title,
            markdown=markdown,
            parent=parent,
            tags=tags,
            change_summary=changeSummary or "",
        )
        self._written(version)
        self._touched(version.page, versions=[version.number])
        result = checked(write_result(version, None), version, agent)
        if twin is not None:
            # Not refused: a person reviews the new page anyway, and may want both.
            result["warning"] = (
                f"A page titled {twin.title!r} ({twin.public_id}, {selectors.agent_path(twin)}) "
                "is already in your set at the same place. If you meant to change it, call "
                "get_page_source and update_page on it instead; the reviewer sees both and may "
                "reject this new page."
            )
        return result

    # Nothing is lost: the proposal waits for review and every version is kept.
    @tool("Propose a new version of a page", read_only=False, destructive=False, idempotent=True)
    def update_page(
        self,
        pageId: PageId,
        changeSummary: ChangeSummary,
        markdown: Annotated[str | None, Field(description="The whole new body.")] = None,
        title: str | None = None,
        tags: Annotated[list[str] | None, Field(description="The complete new list.")] = None,
        baseVersion: BaseVersion = None,
    ) -> WriteResult:
        """Propose a page's whole new text (not a patch): call get_page_source first, send
        the complete markdown with its liveVersion as baseVersion (or only a new title or tags).
        It waits for approval and withdraws your earlier waiting proposal; if the page changed
        since, a reviewer merges the two.
        """
        return self._propose(
            pageId,
            kind=VersionKind.REPLACE,
            change_summary=changeSummary,
            body=markdown,
            title=title,
            tags=tags,
            base_version=baseVersion,
            read_first=True,
        )

    @tool("Propose small edits to a page", read_only=False, destructive=False, idempotent=False)
    def edit_page(
        self,
        pageId: PageId,
        edits: Annotated[
            list[EditIn],
            Field(description="Applied in order; newText may be empty.", min_length=1),
        ],
        changeSummary: ChangeSummary,
        baseVersion: BaseVersion = None,
    ) -> WriteResult:
        """Propose small changes: each edit replaces one exact oldText, copied from
        get_page_source and occurring once in the page; edits apply in order. Like update_page
        it waits for approval; changed lists the lines changed. An oldText found 0 or several
        times stores nothing; the error shows where.
        """
        agent = self._agent()
        validate_change_summary(changeSummary, required=True)
        page = selectors.page_source_for_agent(agent, pageId)
        draft = selectors.own_pending_proposal(agent, page)
        live = page.live_version
        if draft is not None and draft.kind == VersionKind.APPEND:
            source = appended(live.body if live else "", draft.proposed_body)
        else:
            source = (draft or live).body  # type: ignore[union-attr]
        edited = apply_edits(source, edits)
        # The result is an ordinary replace proposal: the same base, stale and review rules.
        written = self._propose(
            pageId,
            kind=VersionKind.REPLACE,
            change_summary=changeSummary,
            body=edited,
            base_version=baseVersion,
        )
        written["changed"] = changed_lines(source, edited)
        return written

    @tool("Propose an addition to a page", read_only=False, destructive=False, idempotent=False)
    def append_to_page(
        self,
        pageId: PageId,
        markdown: str,
        changeSummary: ChangeSummary,
    ) -> WriteResult:
        """Propose adding markdown at the end of a page, keeping all that is there; better
        than update_page when you only add: it never conflicts. If your earlier proposal on the
        page waits, the new one carries it first.
        """
        return self._propose(
            pageId, kind=VersionKind.APPEND, change_summary=changeSummary, body=markdown
        )

    def _propose(
        self,
        page_id: str,
        *,
        kind: str,
        change_summary: str,
        body: str | None,
        title: str | None = None,
        tags: list[str] | None = None,
        base_version: int | None = None,
        read_first: bool = False,
    ) -> WriteResult:
        agent = self._agent()
        change_summary = validate_change_summary(change_summary, required=True)
        page = selectors.page_source_for_agent(agent, page_id)
        earlier = selectors.own_pending_proposal(agent, page)
        own_draft = earlier is not None and earlier.kind == VersionKind.REPLACE
        if kind == VersionKind.REPLACE and base_version is None and not own_draft:
            # What the agent saw last, not what is live now: a person may have published
            # since, and the proposal must not silently undo that.
            base_version = selectors.last_read_live_version(agent, page)
            if base_version is None and read_first and page.live_version_id is not None:
                raise blind_replace(page_id, body=body, title=title, tags=tags)
        version = version_propose(
            actor=agent,
            page=page,
            kind=kind,
            body=body,
            title=title,
            tags=tags,
            change_summary=change_summary,
            base_number=base_version,
        )
        self._written(version)
        self._touched(page, versions=[version.number])
        result = write_result(
            version,
            earlier.number if earlier is not None else None,
            carried=kind == VersionKind.APPEND,
        )
        return checked(result, version, agent)
