"""One permission policy for people and agents (issue 46, points 1, 3 and 4): every door asks
wiki.permissions, so an agent holds a right only where its owner does, the top bar counts only
what its reader may read, the Reviews link follows the right to decide, and the inbox follows
the proposal's fate. Each test reproduces the issue's steps from outside (an agent over MCP
HTTP with the official client, a person in the web or REST)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from agents import services as agent_services
from agents.models import Agent
from core.actors import SystemActor
from core.errors import Conflict, Forbidden
from reviews import workflows
from reviews.actions.create import page_create
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from tests.fixtures_mcp import MCP, AgentKey
from wiki import permissions
from wiki import services as wiki_services
from wiki.models import Page, Version

ClientAs = Callable[[User], Client]


def grant(admin: User, page: Page, group: str, *rights: str) -> None:
    permissions.grant_set(
        actor=admin,
        page=page,
        group=Group.objects.get_or_create(name=group)[0],
        rights=list(rights),
    )


def owned_agent(owner: User | None, name: str, *pages: Page, can_edit: bool = True) -> AgentKey:
    agent, token = agent_services.agent_create(
        actor=SystemActor("tests"), name=name, owner=owner, can_edit_pages=can_edit
    )
    key = AgentKey(agent, token)
    key.give(*pages)
    return key


# --- point 1: an agent holds `propose` where its owner does ------------------------------------


def test_it_refuses_an_agents_proposal_where_its_owner_may_not_propose(
    mcp: MCP,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> None:
    section = make_page("Contracts", "Counsel notes.\nLine two.\n")
    grant(admin_user, section, "Legal", "propose")
    owen = make_user("owen")  # outside Legal
    # The person is refused on the web.
    refused = client_as(owen).post(
        reverse("wiki:edit", kwargs={"public_id": section.public_id}),
        {
            "title": "Contracts",
            "body": "Counsel notes.\nMine.\n",
            "tags": "",
            "instructions": "",
            "change_summary": "Mine",
            "base_number": 1,
        },
    )
    assert refused.status_code in (200, 403), refused.status_code
    assert "members of Legal" in refused.content.decode()
    assert not Version.objects.filter(author_user=owen).exists()
    # The same person's agent (may edit, its set holds the section) is refused too, saying why
    # and what to do.
    bot = owned_agent(owen, "owen-bot", section)
    said = mcp.error(
        bot,
        "update_page",
        pageId=section.public_id,
        markdown="Counsel notes.\nMine.\n",
        changeSummary="Mine",
        baseVersion=1,
    )
    assert "Legal" in said and "owen" in said, said
    said = mcp.error(
        bot,
        "create_page",
        title="Addendum",
        markdown="An addendum.\n",
        parentId=section.public_id,
        changeSummary="New",
    )
    assert "Legal" in said, said
    assert not Version.objects.filter(author_agent=bot.agent).exists()

    # An agent with no owner holds only what no grant restricts: refused here too.
    orphan = owned_agent(None, "orphan-bot", section)
    said = mcp.error(
        orphan,
        "update_page",
        pageId=section.public_id,
        markdown="Counsel notes.\nTheirs.\n",
        changeSummary="Theirs",
        baseVersion=1,
    )
    assert "no owner" in said, said

    # A Legal member's agent proposes as its owner may.
    lana = make_user("lana", "Legal")
    lanas = owned_agent(lana, "lana-bot", section)
    done = mcp.ok(
        lanas,
        "update_page",
        pageId=section.public_id,
        markdown="Counsel notes.\nOurs.\n",
        changeSummary="Ours",
        baseVersion=1,
    )
    assert done["status"] == "in_review"


def test_it_answers_an_agents_rights_from_its_owner_and_its_flags(
    db: None, make_page: Callable[..., Page], make_user: Callable[..., User], admin_user: User
) -> None:
    section = make_page("Contracts")
    grant(admin_user, section, "Legal", "propose")
    lana, owen = make_user("lana", "Legal", "Editors"), make_user("owen")
    reads_only = Agent.objects.create(name="reads", owner=lana, can_edit_pages=False)
    edits = Agent.objects.create(name="edits", owner=lana, can_edit_pages=True)
    owens = Agent.objects.create(name="owens", owner=owen, can_edit_pages=True)
    orphan = Agent.objects.create(name="orphan", can_edit_pages=True)
    assert permissions.can(edits, permissions.PROPOSE, section)
    assert not permissions.can(reads_only, permissions.PROPOSE, section)
    assert not permissions.can(owens, permissions.PROPOSE, section)
    assert not permissions.can(orphan, permissions.PROPOSE, section)
    assert permissions.can(orphan, permissions.READ, section)
    # An agent never publishes nor decides, whatever its owner may.
    assert not permissions.can(edits, permissions.PUBLISH, section)
    assert not permissions.can(edits, permissions.DECIDE, section)
    assert "no owner" in (permissions.refusal(orphan, permissions.PROPOSE, section) or "")


# --- point 1: one refusal, naming who really holds the right -------------------------------


def test_it_names_the_group_granted_publish_when_it_refuses_to_publish(
    db: None,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    editor: User,
    admin_user: User,
    client_as: ClientAs,
) -> None:
    section = make_page("Handbook", "Text.\n")
    grant(admin_user, section, "Writers", "publish")
    # An editor outside Writers: the service, the archive button and the upload all say who
    # publishes here (Writers), not "only editors".
    with pytest.raises(Forbidden) as refused:
        wiki_services.page_archive(actor=editor, page=section)
    assert "only members of Writers can publish here" in str(refused.value.message)
    archive = client_as(editor).post(reverse("wiki:archive", args=[section.public_id]))
    assert archive.status_code == 403
    assert "only members of Writers can publish here" in archive.content.decode()
    upload = SimpleUploadedFile("rules.txt", b"text", content_type="text/plain")
    attached = client_as(editor).post(
        reverse("wiki:attachment_upload", args=[section.public_id]), {"file": upload}
    )
    assert attached.status_code == 403
    assert "only members of Writers can publish here" in attached.content.decode()
    # A writer does it.
    writer = make_user("wendy", "Writers")
    wiki_services.page_archive(actor=writer, page=section)


# --- point 3/4: the top bar counts what its reader may read; deciders get the Reviews link --


def _reviews_badge(html: str) -> str | None:
    """The number beside "Reviews" in the top bar, or None without the link."""
    at = html.find('href="/reviews/">Reviews')
    if at < 0:
        return None
    tail = html[at : html.find("</a>", at)]
    return tail.split('waiting">')[1].split("<")[0] if 'waiting">' in tail else "0"


def test_it_counts_only_readable_proposals_and_links_every_decider_to_reviews(
    db: None,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    reader: User,
    reviewer: User,
    admin_user: User,
    client_as: ClientAs,
) -> None:
    hr = make_page("People matters", "HR notes.\n")
    grant(admin_user, hr, "HR", "read", "propose", "decide")
    hana = make_user("hana", "HR")
    for number in range(3):
        page = make_page(f"Public {number}", "Text.\n")
        version_propose(actor=reader, page=page, body=f"Text {number}.\n")
    version_propose(actor=hana, page=hr, body="Salaries move.\n")
    rita = client_as(reviewer)
    queue = rita.get("/reviews/")
    assert queue.status_code == 200
    assert queue.context["page_obj"].paginator.count == 3
    assert _reviews_badge(queue.content.decode()) == "3"
    # HR proposes again: a Reviewer outside HR sees no change.
    page_create(actor=make_user("hal", "HR"), title="Leave", body="y\n", parent=hr)
    assert _reviews_badge(rita.get("/").content.decode()) == "3"
    # An admin reads everything: 5.
    assert _reviews_badge(client_as(admin_user).get("/").content.decode()) == "5"

    # A member of a workflow step's group who is not in Reviewers decides: the link is theirs,
    # counting what waits on them.
    legal = make_page("Contracts", "Counsel.\n")
    lana = make_user("lana", "Legal")
    workflow = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=[{"name": "Counsel", "group": "Legal"}]
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=legal)
    version_propose(actor=reader, page=legal, body="Counsel twice.\n")
    assert _reviews_badge(client_as(lana).get("/").content.decode()) == "1"
    assert client_as(lana).get("/reviews/").status_code == 200
    # A member of a group granted decide on a section (no workflow) has it too: hal decides
    # hana's HR proposal at the default step (his own new page is listed, not his to decide).
    hal = User.objects.get(username="hal")
    assert _reviews_badge(client_as(hal).get("/").content.decode()) == "2"
    listed = client_as(hal).get("/reviews/")
    assert [row.version.title for row in listed.context["rows"]] == ["People matters", "Leave"]
    # A reader who decides nothing has no link.
    assert _reviews_badge(client_as(reader).get("/").content.decode()) is None


# --- point 3: the base of a revision is the live text the agent was shown -----------------


PAGE = "Line A: refunds take five days.\n\nMiddle stays.\n\nLine B: returns take thirty days.\n"


def test_it_never_bases_a_revision_on_a_live_version_the_agent_was_not_shown(
    mcp: MCP,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    reviewer: User,
) -> None:
    page = make_page("Refunds", PAGE)
    bot = owned_agent(make_user("owen"), "docs-bot", page)
    # The agent reads v1 and edits line A; a reviewer approves it as v2.
    read = mcp.ok(bot, "get_page_source", pageId=page.public_id)
    assert read["liveVersion"] == 1
    first = mcp.ok(
        bot,
        "update_page",
        pageId=page.public_id,
        markdown=PAGE.replace("five days", "seven days"),
        changeSummary="Seven days",
    )
    version_approve(
        actor=reviewer, version=Version.objects.get(page=page, number=first["versionNumber"])
    )
    # It then sends a change of line B from v1 (baseVersion=1): v3, waiting.
    mcp.ok(
        bot,
        "update_page",
        pageId=page.public_id,
        markdown=PAGE.replace("thirty days", "sixty days"),
        changeSummary="Sixty days",
        baseVersion=1,
    )
    # It reads its draft to check it: get_page_source names the draft, its version and base.
    source = mcp.ok(bot, "get_page_source", pageId=page.public_id)
    assert source["markdown"] == PAGE.replace("thirty days", "sixty days")
    assert source["liveVersion"] == 2
    assert source["draft"] == {"versionNumber": 3, "baseVersion": 1}
    # A text built from v1 with line A changed again, without baseVersion, revising the draft:
    # the draft's base (v1) is kept.
    revised = mcp.ok(
        bot,
        "update_page",
        pageId=page.public_id,
        markdown=PAGE.replace("five days", "nine days"),
        changeSummary="Nine days",
    )
    draft = Version.objects.get(page=page, number=revised["versionNumber"])
    assert draft.base_version is not None and draft.base_version.number == 1
    # The reviewer rejects it; get_page_source (read just before) showed the agent its draft
    # on v1, never v2's text. It sends line A changed again, still without baseVersion.
    version_reject(actor=reviewer, version=draft, comment="Not yet.")
    again = mcp.ok(
        bot,
        "update_page",
        pageId=page.public_id,
        markdown=PAGE.replace("five days", "ten days"),
        changeSummary="Ten days",
    )
    revision = Version.objects.get(page=page, number=again["versionNumber"])
    assert revision.base_version is not None and revision.base_version.number == 1
    # Approving it cannot silently undo the approved edit of line A: v1 → v2 and v1 → v5
    # both change line A, so it is a conflict, never a clean merge that drops "seven days".
    with pytest.raises(Conflict):
        version_approve(actor=reviewer, version=revision)
    page.refresh_from_db()
    assert "seven days" in page.live_version.body  # type: ignore[union-attr]
