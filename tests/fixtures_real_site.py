"""A site with real content for the browser tests (issue 40): the 18F handbook and a slice of
the tldr pages from ../shared/corpus, long titles, a team with a two-step workflow, agents
with long names and full page sets, and proposals in every state a reviewer meets.

The corpus is read where it lies (QUIRE_CORPUS, else ../shared/corpus); without it the tests
that need it skip, saying where they looked."""

from __future__ import annotations

import tarfile
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from agents.models import Agent
from agents.services import agent_create, page_set_add
from core.actors import SystemActor
from reviews import workflows
from reviews.actions.create import page_create
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.propose import version_propose
from reviews.actions.revert import page_revert
from tests.conftest import CORPUS, HANDBOOK
from tests.fixtures_mcp import rpc_tool
from wiki.models import Page, Version
from wiki.roles import EDITORS, REVIEWERS
from wiki.services import page_move

TLDR = CORPUS / "tldr-pages.tar.gz"
PASSWORD = "correct-horse-battery"
# From each of these folders of the tldr archive, the first pages by name.
TLDR_SLICE = {
    "pages/common/": 120,
    "pages/linux/": 40,
    "pages.zh/common/": 25,
    "pages.ar/common/": 15,
}

# And these, whose pages the proposals change.
NAMED = ["tar", "ls", "cp", "mv", "grep", "cat", "echo", "find", "git", "ssh", "docker"]

LONG_TITLES = [
    "Customer escalation procedures for enterprise accounts in the Asia-Pacific region",
    "Internationalisation-and-localisation-configuration-reference-for-the-billing-service",
    "How the on-call rotation hands over between the Dublin, Singapore and Vancouver teams",
]
LONG_AGENT = "customersupportescalationtriageassistant_euwest_production_01"
LEGAL_WORKFLOW = "Legal and compliance review for customer-facing policies"


@dataclass
class RealSite:
    admin: User  # a superuser who is also a reviewer: sees every screen
    reader: User
    lawyer: User
    pages: dict[str, Page] = field(default_factory=dict)  # by role in the site
    proposals: dict[str, Version] = field(default_factory=dict)  # by state
    agents: dict[str, Agent] = field(default_factory=dict)
    workflow_id: int = 0


def require_corpus() -> None:
    if not HANDBOOK.is_dir() or not TLDR.exists():
        pytest.skip(f"the shared corpora are not at {CORPUS} (set QUIRE_CORPUS to their folder)")


def _user(username: str, *groups: str, superuser: bool = False) -> User:
    user = User.objects.create_user(
        username=username,
        password=PASSWORD,
        email=f"{username}@example.com",
        is_superuser=superuser,
        is_staff=superuser,
    )
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


def _import(folder: Path, author: User, *extra: str) -> None:
    call_command(
        "import_markdown",
        str(folder),
        "--publish",
        "--author",
        author.username,
        *extra,
        stdout=StringIO(),
        stderr=StringIO(),
    )


def _extract_tldr(into: Path) -> Path:
    with tarfile.open(TLDR) as archive:
        chosen = []
        for prefix, count in TLDR_SLICE.items():
            names = sorted(
                m.name for m in archive.getmembers() if m.name.startswith(prefix) and m.isfile()
            )
            chosen += names[:count]
        chosen += [
            f"pages/common/{name}.md" for name in NAMED if f"pages/common/{name}.md" not in chosen
        ]
        members = [archive.getmember(name) for name in chosen]
        archive.extractall(into, members=members, filter="data")
    return into


def _page(path_end: str) -> Page:
    return Page.objects.filter(path__endswith=path_end).order_by("path").first() or _no(path_end)


def _no(path_end: str) -> Page:
    raise AssertionError(f"no imported page's path ends with {path_end!r}")


def build_real_site(tmp: Path) -> RealSite:
    """The whole site; about 500 pages, so a test builds it in seconds."""
    require_corpus()
    admin = _user("ada", REVIEWERS, superuser=True)
    editor = _user("edna", EDITORS)
    reviewer = _user("rita", REVIEWERS)
    reader = _user("reed")
    lawyer = _user("lena", "Legal", REVIEWERS)
    _user("luis", "Legal", REVIEWERS)
    site = RealSite(admin=admin, reader=reader, lawyer=lawyer)

    _import(HANDBOOK, editor)
    _import(_extract_tldr(tmp / "tldr"), editor, "--source-name", "tldr")
    # A long handbook page (8,700 characters, a table) in a folder of policies.
    long_page = _page("employee-resources-policies/work-schedules")
    tar = _page("pages/common/tar")
    site.pages.update(long=long_page, tar=tar)

    # Long titles three levels deep, with siblings.
    top = page_create(actor=editor, title=LONG_TITLES[0], body="Start.\n", publish=True)
    middle = page_create(
        actor=editor, title=LONG_TITLES[1], body="Settings.\n", parent=top.page, publish=True
    )
    leaf = page_create(
        actor=editor,
        title=LONG_TITLES[2],
        body="Hand over at 09:00 local time.\n\nWrite the handover note.\n",
        parent=middle.page,
        publish=True,
        tags=["supportescalationsasiapacificregionenterprise", "on-call"],
    ).page
    site.pages.update(top=top.page, middle=middle.page, leaf=leaf)

    # A page with a long history: edits, a revert, a move, a merged proposal.
    for n in range(2, 9):
        version_propose(
            actor=editor,
            page=leaf,
            body=f"Hand over at {8 + n}:00 local time.\n\nWrite the handover note.\n",
            change_summary=f"Moved-the-handover-to-{8 + n}:00-for-the-Vancouver-team's-mornings",
            publish=True,
        )
    page_revert(actor=editor, page=leaf, to_version=leaf.versions.get(number=3))
    stale = version_propose(
        actor=reader,
        page=leaf,
        body="Hand over at 11:00 local time.\n\nWrite the handover note, and sign it.\n",
        change_summary="Sign the note",
    )
    version_propose(
        actor=editor,
        page=leaf,
        body="Hand over at 12:00 local time.\n\nWrite the handover note.\n",
        publish=True,
    )
    version_approve(actor=reviewer, version=stale)  # merged into a new number

    # A workflow of two steps, on a handbook subtree.
    policies = long_page.parent or long_page
    workflow = workflows.workflow_create(
        actor=admin,
        name=LEGAL_WORKFLOW,
        steps=[
            {"name": "Legal and compliance sign-off", "group": "Legal", "approvals": 2},
            {"name": "Final editorial check", "group": REVIEWERS, "approvals": 1},
        ],
    )
    workflows.workflow_assign(actor=admin, workflow=workflow, page=policies)
    site.workflow_id = workflow.pk
    site.pages["policies"] = policies

    # Agents: one with a long name and every handbook root, one with every page, one read-only.
    roots = list(Page.objects.filter(parent__isnull=True).order_by("path"))
    bot, token = agent_create(
        actor=SystemActor("tests"),
        name=LONG_AGENT,
        description="Answers escalations for enterprise accounts. " * 4,
        owner=admin,
        can_edit_pages=True,
    )
    for page in roots:
        page_set_add(
            actor=SystemActor("tests"),
            agent=bot,
            page=page,
            use_when=["When a customer asks about " + page.title.lower()],
        )
    everything, _ = agent_create(
        actor=SystemActor("tests"),
        name="handbook-and-cheatsheets-assistant-with-every-page",
        owner=reviewer,
        can_edit_pages=True,
        all_pages=True,
    )
    agent_create(
        actor=SystemActor("tests"),
        name="read-only-search-helper",
        description="Reads; never proposes.",
        pages=[tar],
    )
    site.agents.update(bot=bot, everything=everything)
    client = Client()
    rpc_tool(client, token, "browse")
    rpc_tool(client, token, "search_pages", query="how do I extract a tar archive")
    rpc_tool(client, token, "get_page", pageId=tar.public_id)
    rpc_tool(client, token, "get_page_source", pageId=long_page.public_id)

    # Proposals in every state.
    live_long = long_page.live_version
    assert live_long is not None
    site.proposals["agent_edit"] = version_propose(
        actor=bot,
        page=long_page,
        body=live_long.body.replace(
            "\n\n", "\n\nAdded by the agent after a customer asked.\n\n", 1
        ),
        change_summary="Clarified-the-escalation-path-for-enterprise-customers-after-ticket-48213",
    )
    site.proposals["append"] = version_propose(
        actor=bot,
        page=tar,
        kind="append",
        body="- List a `.tar.zst` archive:\n\n`tar --zstd -tvf {{path/to/file.tar.zst}}`",
        change_summary="zstd example",
    )
    new_page = page_create(
        actor=bot,
        title="Escalation checklist for enterprise accounts in the Asia-Pacific region (draft)",
        body="1. Acknowledge within one hour.\n2. Page the on-call engineer.\n",
        parent=site.pages["top"],
    )
    site.proposals["new_page"] = new_page
    one_line = version_propose(
        actor=reader,
        page=tar,
        body=(tar.live_version.body if tar.live_version else "") + "\nMore.\n",
    )
    site.proposals["one_click"] = one_line
    conflict_page = _page("pages/common/ls")
    conflicting = version_propose(
        actor=reader, page=_page("pages/common/cp"), body="# cp\n\n> Copy files, rewritten.\n"
    )
    site.proposals["stale_clean"] = conflicting
    version_propose(
        actor=editor,
        page=conflicting.page,
        body=(conflicting.page.live_version.body if conflicting.page.live_version else "")
        + "\n- One more example.\n",
        publish=True,
    )
    clash = version_propose(
        actor=reader, page=conflict_page, body="# ls\n\n> List directory contents, ours.\n"
    )
    version_propose(
        actor=editor,
        page=conflict_page,
        body="# ls\n\n> List directory contents, theirs.\n",
        publish=True,
    )
    site.proposals["conflict"] = clash
    moved = version_propose(
        actor=reader,
        page=_page("pages/common/mv"),
        body="# mv\n\n> Move or rename files and folders.\n",
    )
    page_move(actor=editor, page=moved.page, parent=site.pages["top"])
    site.proposals["moved"] = moved
    in_workflow = version_propose(
        actor=bot,
        page=policies,
        body=(policies.live_version.body if policies.live_version else "") + "\nReviewed.\n",
        change_summary="Policy wording",
    )
    version_approve(actor=lawyer, version=in_workflow)  # 1 of 2 at step 1
    site.proposals["workflow"] = in_workflow
    asked = version_propose(
        actor=reader, page=_page("pages/common/grep"), body="# grep\n\n> Find patterns in files.\n"
    )
    version_request_changes(
        actor=reviewer, version=asked, comment="Keep the examples; only change the summary line."
    )
    site.proposals["changes_requested"] = asked
    rejected = version_propose(
        actor=bot,
        page=_page("pages/common/cat"),
        body="# cat\n\n> Print files.\n",
        change_summary="Shorter",
    )
    version_reject(actor=reviewer, version=rejected, comment="The examples are needed.")
    site.proposals["rejected"] = rejected
    site.proposals["invisible"] = version_propose(
        actor=reader,
        page=_page("pages/common/echo"),
        body="# echo\n\n> Print\u200b text to p\u0430ypal.com.\n",
    )
    site.proposals["own"] = version_propose(
        actor=admin, page=_page("pages/common/find"), body="# find\n\n> Find files, by ada.\n"
    )
    return site


def every_state(site: RealSite) -> dict[str, Any]:
    """The review page of each proposal, by state."""
    return {
        state: f"/reviews/pages/{version.page.public_id}/v{version.number}/"
        for state, version in site.proposals.items()
    }
