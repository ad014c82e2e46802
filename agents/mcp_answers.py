"""The pieces of the MCP tools' answers, built from the domain's versions, hits and checks."""

from typing import Any, Literal

from django.conf import settings
from django.urls import reverse

from agents import selectors
from agents.mcp_outputs import DecisionOut, PackedPage, ReviewOut, SearchHitOut, WriteResult
from agents.models import Agent
from core.errors import InvalidArgument
from core.json_output import pretty_json
from reviews import selectors as review_selectors
from reviews.checks import proposal_checks
from wiki.models import Version, VersionKind
from wiki.scope import Scope
from wiki.search import SearchHit, strip_marks
from wiki.validators import (
    validate_markdown,
    validate_tags,
    validate_title,
)


def review_out(version: Version) -> ReviewOut | None:
    summary = review_selectors.review_summary(version)
    if summary is None:
        return None
    summary.pop("path", None)
    summary.pop("asked", None)  # the REST answer's; not part of the MCP contract
    return summary  # type: ignore[return-value]


def search_hit(hit: SearchHit, scope: Scope) -> SearchHitOut:
    found: SearchHitOut = {
        "pageId": hit.public_id,
        "title": hit.title,
        "path": scope.shown(hit.path, hit.hidden_prefix),
        "section": hit.section,
        "excerpt": strip_marks(hit.excerpt),
        "score": round(float(hit.score), 4),
    }
    if hit.copies:
        found["alsoAt"] = [
            {"pageId": copy.public_id, "path": scope.shown(copy.path, copy.hidden_prefix)}
            for copy in hit.copies
        ]
    return found


def decision_out(decided: Version) -> DecisionOut:
    """The last decision on the agent's proposal, with the blocks refused when only part of
    it was approved (the refused text is the agent's to propose again)."""
    out: DecisionOut = {
        "versionNumber": decided.number,
        "status": decided.status,
        "comment": decided.decision_comment,
        "decidedAt": iso(decided.decided_at),
    }
    refused = review_selectors.refused_hunks(decided) if decided.edited_by_reviewer else []
    if refused:
        out["refusedHunks"] = [
            {
                "hunk": hunk.number,
                "line": hunk.line,
                "replaced": hunk.replaced,
                "proposed": hunk.proposed,
                "reason": hunk.reason,
                "step": hunk.step + 1,
            }
            for hunk in refused
        ]
    return out


def iso(moment: Any) -> str:
    return moment.isoformat() if moment is not None else ""


def write_result(version: Version, withdrawn: int | None, *, carried: bool = False) -> WriteResult:
    message = f"Submitted as v{version.number} and waiting for a human to approve it."
    if withdrawn is not None and withdrawn != version.number and carried:
        message += (
            f" It carries your earlier proposal v{withdrawn} first, then this addition; "
            f"v{withdrawn} was withdrawn in its favour."
        )
    elif withdrawn is not None and withdrawn != version.number:
        message += f" It replaces your earlier proposal v{withdrawn}, which was withdrawn."
    return {
        "pageId": version.page.public_id,
        "title": version.title,
        "versionNumber": version.number,
        "status": "in_review",
        "message": message,
    }


def received_live(live: Version | None, draft: Version | None) -> int | None:
    """The live version whose text get_page_source gives: its own replace draft carries its
    own base (the agent is shown the draft, built on that base, never the live text
    published since); an append draft is shown on top of the live text."""
    if draft is not None and draft.kind == VersionKind.REPLACE:
        return draft.base_version.number if draft.base_version is not None else None
    return live.number if live is not None else None


def checked(result: WriteResult, version: Version, agent: Agent) -> WriteResult:
    """The write result with what a reviewer will be asked to look at, naming only pages
    the agent may see."""
    findings = proposal_checks(version, reader=lambda: selectors.agent_scope(agent))
    if findings:
        result["checks"] = [
            {"kind": found.kind, "message": found.message, "line": found.line} for found in findings
        ]
        result["message"] += (
            f" The reviewer will be shown {len(findings)} thing"
            f"{'' if len(findings) == 1 else 's'} to check (see checks); if one is a mistake, "
            "propose again with it fixed."
        )
    return result


def source_status(
    live: Version | None, draft: Version | None, shown: Version
) -> Literal["live", "in_review", "rejected", "withdrawn"]:
    if live is not None:
        return "live"
    if draft is not None or shown.status == "in_review":
        return "in_review"
    return "withdrawn" if shown.status == "withdrawn" else "rejected"


def pack_includes(
    answer: dict[str, Any], referenced: list[tuple[str, Version]], *, max_chars: int
) -> None:
    """Fill `includes` in reference order while the answer's pretty JSON stays under
    `max_chars`; list the referenced pages that did not fit in `notIncluded`."""
    size = len(pretty_json(answer))
    for ref, version in referenced:
        item = {"pageId": ref, "title": version.title, "content": version.body}
        # Indented two levels deeper inside the answer, plus its separator.
        text = pretty_json(item)
        cost = len(text) + 4 * text.count("\n") + 6
        if size + cost < max_chars:
            answer["includes"].append(item)
            size += cost
        else:
            left_out = {"pageId": ref, "title": version.title}
            answer["notIncluded"].append(left_out)
            size += len(pretty_json(left_out)) + 30
    if answer["notIncluded"]:
        answer["hint"] = (
            f"{len(answer['notIncluded'])} referenced page(s) did not fit in {max_chars:,} "
            "characters: call get_page with each pageId in notIncluded to read them."
        )


def blind_replace(page_id: str, *, body: Any, title: Any, tags: Any) -> InvalidArgument:
    """The refusal of a whole-page replace from an agent that never read the page; what is
    wrong with the text itself is said first, as the service would."""
    if body is not None:
        validate_markdown(body)
    if title is not None:
        validate_title(title)
    if tags is not None:
        validate_tags(tags)
    return InvalidArgument(
        f"you never read page {page_id}, so this whole-page replacement would overwrite text "
        "you have not seen. Read it with get_page_source first, or pass baseVersion (the "
        "liveVersion your text starts from). Nothing was stored."
    )


def page_url(public_id: str) -> str:
    """The page's address in the web UI: by id, so it names no page outside the set."""
    return settings.QUIRE_BASE_URL.rstrip("/") + reverse("wiki:page", args=[public_id])


def connector_text(packed: PackedPage) -> str:
    """get_page's content for a connector, which reads text only: a long page's outline
    becomes its lead and the ids of its sections."""
    text = packed["content"]
    sections = packed.get("sections") or []
    if sections:
        listed = "\n".join(
            f"- {item['heading']}: {packed['pageId']}#{item['line']}" for item in sections
        )
        text += f"\n\n(The rest of this page is in sections; fetch one by its id:)\n{listed}\n"
    elif packed.get("lines", {}).get("next"):
        text += f"\n\n(Continued: fetch {packed['pageId']}#{packed['lines']['next']})\n"
    return text


def appended(live_body: str, appended: str) -> str:
    live_body, appended = live_body.rstrip("\n"), appended.strip("\n")
    return f"{live_body}\n\n{appended}\n" if live_body else f"{appended}\n"
