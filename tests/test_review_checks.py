"""Checks before a person looks (reviews.checks): broken and hidden links, repeated content,
credential-like strings and broken headings, on the review page and in the agent's result."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from reviews.actions.propose import version_propose
from reviews.checks import proposal_checks
from tests.fixtures_mcp import MCP, AgentKey
from wiki import permissions
from wiki.models import Page, Version
from wiki.scope import EVERYTHING, person_scope

pytestmark = pytest.mark.django_db

REFUNDS = "# Refunds\n\nRefunds take five days.\n"
SHARED = (
    "Every refund request must name the order number, the date of purchase and the reason, "
    "and is answered by the support team within two working days."
)


def _kinds(version: Version) -> list[str]:
    return [found.kind for found in proposal_checks(version, reader=EVERYTHING)]


def test_it_finds_nothing_in_an_ordinary_change(
    make_page: Callable[..., Page], reader: User
) -> None:
    page = make_page("Refunds", REFUNDS)
    proposal = version_propose(actor=reader, page=page, body=REFUNDS.replace("five", "three"))
    assert _kinds(proposal) == []


def test_it_finds_broken_and_hidden_links(
    make_page: Callable[..., Page], admin_user: User, reader: User
) -> None:
    page = make_page("Refunds", REFUNDS)
    secret = make_page("Salaries", "Numbers.\n")
    permissions.grant_set(
        actor=admin_user,
        page=secret,
        group=Group.objects.get_or_create(name="HR")[0],
        rights=["read"],
    )
    archived_link = "pg_aaaaaaaa"
    body = REFUNDS + f"\nSee [[{archived_link}]] and [[{secret.public_id}]].\n"
    proposal = version_propose(actor=reader, page=page, body=body)

    found = proposal_checks(proposal, reader=EVERYTHING)

    assert [f.kind for f in found] == ["broken_link", "hidden_link"]
    assert found[0].message.startswith("pg_aaaaaaaa links to no live page")
    assert "“Salaries”" in found[1].message and "would see a broken link" in found[1].message
    # A reader who may not see the restricted page is not told its title.
    hidden = proposal_checks(proposal, reader=person_scope(reader))
    assert "Salaries" not in hidden[1].message
    # A link already live is not the proposal's to answer for.
    again = version_propose(actor=reader, page=page, body=body + "\nMore.\n")
    assert _kinds(again) == ["broken_link", "hidden_link"]


def test_it_finds_a_paragraph_another_page_or_proposal_holds(
    make_page: Callable[..., Page], reader: User, editor: User
) -> None:
    make_page("Support", f"# Support\n\n{SHARED}\n")
    page = make_page("Refunds", REFUNDS)
    proposal = version_propose(actor=reader, page=page, body=REFUNDS + f"\n{SHARED}\n")
    found = proposal_checks(proposal, reader=EVERYTHING)
    assert [f.kind for f in found] == ["duplicate"]
    assert "repeats “Support”" in found[0].message and found[0].line == 5

    other = make_page("Returns", "# Returns\n")
    fresh = "A returned parcel is inspected by the warehouse team before any refund " * 2
    version_propose(actor=reader, page=other, body=f"# Returns\n\n{fresh}\n")
    twin = version_propose(actor=editor, page=page, body=REFUNDS + f"\n{fresh}\n")
    [waiting] = proposal_checks(twin, reader=EVERYTHING)
    assert "also in a waiting proposal, v2 of “Returns”" in waiting.message


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("The staging password: hunter2x9", True),
        # (a quoted value assigned to `api_key` is refused at submit: wiki/credentials.py)
        ("The API key: q8Zr2LmP0xVb", True),
        ("Use token: ${DEPLOY_TOKEN} from the vault.", False),
        ("password: <your password>", False),
        ("Set the password in the settings page.", False),
        ("Session id 7f3kQ9zL2mXv8RtY1wPn4sHd6JbCe0Ga kept for a day.", True),
        ("The commit is 3f9a1c2d4e5b6a7f8c9d0e1f2a3b4c5d6e7f8a9b.", False),
    ],
)
def test_it_finds_credential_like_strings(
    make_page: Callable[..., Page], reader: User, line: str, flagged: bool
) -> None:
    page = make_page("Staging", "# Staging\n")
    proposal = version_propose(actor=reader, page=page, body=f"# Staging\n\n{line}\n")
    assert (_kinds(proposal) == ["credential"]) is flagged


def test_it_finds_headings_the_change_breaks(make_page: Callable[..., Page], reader: User) -> None:
    page = make_page("Guide", "# Guide\n\n## Setup\n\nText.\n\n## Use\n\nText.\n")
    proposal = version_propose(
        actor=reader,
        page=page,
        body="# Guide\n\n## Setup\n\n#### Details\n\nText.\n\n## Setup\n\nText.\n",
    )
    messages = [found.message for found in proposal_checks(proposal, reader=EVERYTHING)]
    assert messages == [
        "the change leaves a level 4 heading right under a level 2 one (line 5).",
        "the change leaves two headings named “Setup” (their links collide) (line 9).",
    ]


def test_it_shows_the_checks_on_the_review_page(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", REFUNDS)
    proposal = version_propose(actor=reader, page=page, body=REFUNDS + "\nSee [[pg_aaaaaaaa]].\n")
    client = Client()
    client.force_login(reviewer)
    text = client.get(f"/reviews/pages/{page.public_id}/v{proposal.number}/").content.decode()
    assert "Checked before you look: 1 thing to look at" in text
    assert "Broken link:</strong> pg_aaaaaaaa links to no live page" in text


def test_it_returns_the_checks_to_the_agent_with_its_write(
    mcp: MCP, editor_agent: AgentKey, make_page: Callable[..., Page]
) -> None:
    page = make_page("Refunds", REFUNDS)
    editor_agent.give(page)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)

    result = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=REFUNDS + "\nThe admin password: hunter2x9\n\nSee [[pg_aaaaaaaa]].\n",
        changeSummary="Add the admin login.",
    )

    assert [check["kind"] for check in result["checks"]] == ["broken_link", "credential"]
    assert result["checks"][1]["line"] == 5
    assert "The reviewer will be shown 2 things to check" in result["message"]
    # An addition elsewhere (not carrying this proposal's words) has nothing to check.
    other = make_page("Returns", "# Returns\n")
    editor_agent.give(other)
    clean = mcp.ok(
        editor_agent,
        "append_to_page",
        pageId=other.public_id,
        markdown="Ask support if unsure.\n",
        changeSummary="A hint.",
    )
    assert "checks" not in clean
