"""The read tools every agent has, and the two ChatGPT's connectors call."""

from typing import Annotated, Any

from django.db import DEFAULT_DB_ALIAS
from pydantic import Field

from agents import activity, selectors
from agents.browsing import browse_page
from agents.long_pages import (
    Budget,
    shown_text,
)
from agents.mcp_answers import connector_text, iso, pack_includes, page_url, search_hit
from agents.mcp_outputs import (
    ActivityResult,
    BrowseResult,
    ConnectorDocument,
    ConnectorSearchResult,
    PackedPage,
    PageId,
    SearchResult,
    SectionName,
)
from agents.mcp_toolbase import ToolBase, tool
from core.json_output import pretty_json
from wiki.markdown import page_references
from wiki.models import Page
from wiki.search import search_pages as search_index
from wiki.validators import (
    validate_query,
)

SEARCH_LIMIT = 8
GET_PAGE_CHARS = 24_000
GET_PAGE_CHARS_MIN, GET_PAGE_CHARS_MAX = 2_000, 1_000_000
# What get_page keeps of maxChars for the fields that say which part of the page it shows.
PART_FIELDS_CHARS = 300
# The least a page's text gets when its instructions and files take the whole budget.
TEXT_CHARS_MIN = 500


class ReadTools(ToolBase):
    """browse, search_pages, get_page, recent_activity, search and fetch."""

    @tool("Browse your pages", read_only=True)
    def browse(
        self,
        cursor: Annotated[
            str | None,
            Field(description="nextCursor of your previous browse."),
        ] = None,
        under: Annotated[
            str | None,
            Field(description="Only pages under this pageId or path, e.g. 'tools/slack'."),
        ] = None,
    ) -> BrowseResult:
        """List your pages, in curated order, each with useWhen: when to use it.
        Call this first, then get_page the ones marked alwaysInclude. Over 200 pages come 200
        at a time with total and nextCursor: browse(cursor=nextCursor) for more,
        browse(under=...) for a subtree, or search_pages for one page.
        """
        shown = browse_page(self._agent(), cursor=cursor, under=under)
        # A compact audit row: how much was shown and where, not every page id.
        self._note(
            returned=len(shown.entries),
            total=shown.total,
            first=shown.entries[0]["pageId"] if shown.entries else None,
            last=shown.entries[-1]["pageId"] if shown.entries else None,
        )
        return shown.answer()  # type: ignore[return-value]

    @tool("Search your pages", read_only=True)
    def search_pages(
        self,
        query: Annotated[
            str,
            Field(description="Words or a question, up to 2,000 characters."),
        ],
        under: Annotated[
            str | None,
            Field(description="Only pages under this pageId or path, e.g. 'tools/slack'."),
        ] = None,
    ) -> SearchResult:
        """Find the pages in your set that answer a question, by meaning and by words. Ask as
        you would ask a colleague; "quoted words" must appear together, -word excludes, OR
        accepts either side. At most 8 pages, best first, each with the section that matched
        and an excerpt: read it with get_page(pageId, section=...). A page copied into other
        folders comes once, alsoAt naming the copies.
        """
        query = validate_query(query)
        # The set goes into the search query as its entries' ids and tree ranges.
        scope = selectors.agent_scope(self._agent(), under=under)
        hits = search_index(query, scope=scope, limit=SEARCH_LIMIT, fold_copies=True)
        self._touched(page_ids=[hit.public_id for hit in hits])
        return {"results": [search_hit(hit, scope) for hit in hits]}

    @tool("Read a page", read_only=True)
    def get_page(
        self,
        pageId: PageId,
        maxChars: Annotated[
            int | None,
            Field(
                description=f"The answer's size (default {GET_PAGE_CHARS:,}); instructions "
                "and files come whole.",
                ge=GET_PAGE_CHARS_MIN,
                le=GET_PAGE_CHARS_MAX,
            ),
        ] = None,
        section: SectionName = None,
    ) -> PackedPage:
        """Read a page: its content, its instructions (follow them), its files' text and the
        pages its instructions reference while they fit (the rest in notIncluded: get_page each
        when you need it). A page over maxChars comes as its outline (truncated: true, sections:
        each heading with its line and size): call again with section=<heading> (search_pages
        names the one that matched) or a line range like '120-160' to read that part.
        """
        agent = self._agent()
        page = selectors.readable_page_for_agent(agent, pageId)
        files = [{"name": name, "text": text} for name, text in selectors.page_files(page)]
        references = [ref for ref in page_references(page.instructions) if ref != page.public_id]
        readable = selectors.pages_for_agent(agent, references)
        max_chars = maxChars or GET_PAGE_CHARS
        answer: dict[str, Any] = {
            "pageId": page.public_id,
            "title": page.title,
            "path": selectors.agent_path(page),
            "tags": list(page.tags),
            "versionNumber": page.version_number,
            "updated": iso(page.published_at),
            "instructions": page.instructions,
            "content": "",
            "files": files,
            "includes": [],
            "unavailable": [ref for ref in references if ref not in readable],
            "notIncluded": [],
        }
        # The page's text takes what the rest of the answer leaves of maxChars.
        room = max(max_chars - len(pretty_json(answer)) - PART_FIELDS_CHARS, TEXT_CHARS_MIN)
        shown = shown_text(page.body, section, Budget(room, room))
        answer["content"] = shown.text
        answer.update(shown.fields)
        referenced = [
            (ref, version)
            for ref in references
            if ref in readable and (version := readable[ref].live_version) is not None
        ]
        pack_includes(answer, referenced, max_chars=max_chars)
        self._read(agent, page.pk, page.version_number)
        self._touched(
            # For the audit row's page: the id is all it needs.
            Page.from_db(DEFAULT_DB_ALIAS, ["id", "public_id"], [page.pk, page.public_id]),
            page_ids=[page.public_id, *(item["pageId"] for item in answer["includes"])],
            versions=[page.version_number],
            read_live=page.version_number,
        )
        return answer  # type: ignore[return-value]

    @tool("What changed recently", read_only=True)
    def recent_activity(
        self,
        since: Annotated[
            str | None,
            Field(
                description="An ISO 8601 time (UTC without an offset); default 7 days ago.",
                max_length=60,
            ),
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="nextCursor of your previous call."),
        ] = None,
        limit: Annotated[
            int | None,
            Field(
                description="Default 50; nextCursor gives the rest.",
                ge=1,
                le=activity.PAGE_SIZE,
            ),
        ] = None,
    ) -> ActivityResult:
        """What changed in your pages since a time: versions published, newest first, and the
        decisions on your own proposals with the reviewer's comment (changes requested: revise
        with get_page_source and update_page). Call it when you come back to a task.
        """
        agent = self._agent()
        found = activity.recent_activity(
            agent, since=since, cursor=cursor, limit=limit or activity.DEFAULT_LIMIT
        )
        self._note(returned=len(found.published), since=found.since.isoformat())
        result: dict[str, Any] = {
            "since": found.since.isoformat(),
            "published": found.published,
        }
        if found.decisions is not None:
            result["decisions"] = found.decisions
        result["nextCursor"] = found.next_cursor
        return result  # type: ignore[return-value]

    @tool("Search (ChatGPT connectors)", read_only=True)
    def search(
        self, query: Annotated[str, Field(description="Words or a question.")]
    ) -> ConnectorSearchResult:
        """Search your team's wiki pages, as search_pages does, for ChatGPT's deep research
        and company knowledge: at most 8 pages, best first; pass a result's id to fetch."""
        found = self.search_pages(query)
        return {
            "results": [
                {"id": hit["pageId"], "title": hit["title"], "url": page_url(hit["pageId"])}
                for hit in found["results"]
            ]
        }

    @tool("Fetch a page (ChatGPT connectors)", read_only=True)
    def fetch(
        self,
        id: Annotated[str, Field(description="An id from search, or one a fetched text names.")],
    ) -> ConnectorDocument:
        """Fetch a wiki page by an id from search, as get_page reads it: its text, title and
        address. A long page's text ends with its sections' ids: fetch one to read it."""
        page_id, _, section = id.partition("#")
        packed = self.get_page(page_id, section=section or None)
        return {
            "id": id,
            "title": packed["title"],
            "text": connector_text(packed),
            "url": page_url(packed["pageId"]),
            "metadata": {
                key: packed[key]  # type: ignore[literal-required]
                for key in ("path", "versionNumber", "updated", "tags", "instructions")
                if packed[key]  # type: ignore[literal-required]
            },
        }
