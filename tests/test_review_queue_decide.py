"""Deciding from the queue: filters, row flags, one-click approval, inline rejection."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _rows(client: Client, query: str = "") -> dict[int, object]:
    return {row.version.pk: row for row in client.get(f"/reviews/?{query}").context["rows"]}


def test_it_filters_by_title_path_prefix_author_and_kind(
    make_page: Callable[..., Page], reader: User, reviewer: User, proposing_agent: Agent
) -> None:
    tools = make_page("Tools")
    slack = make_page("Slack", "chat\n", parent=tools)
    refunds = make_page("Refund policy", "30 days\n")
    toolbox = make_page("Toolbox", "box\n")  # its path starts with "tool" but not "tools/"
    on_slack = version_propose(actor=proposing_agent, page=slack, body="new chat\n")
    on_refunds = version_propose(actor=reader, page=refunds, body="60 days\n")
    appended = version_propose(actor=proposing_agent, page=toolbox, kind="append", body="More.")
    client = _client(reviewer)

    def listed(query: str) -> list[int]:
        return list(_rows(client, query))

    assert listed("title=refund") == [on_refunds.pk]
    assert listed("title=REFUND") == [on_refunds.pk]
    assert listed("path=tools") == [on_slack.pk]
    assert listed("path=tools/slack/") == [on_slack.pk]
    assert listed("author=docs-bot") == [on_slack.pk, appended.pk]
    assert listed("author=reed") == [on_refunds.pk]
    assert listed("kind=append") == [appended.pk]
    assert listed("kind=replace&author=docs-bot") == [on_slack.pk]
    assert listed("kind=nonsense") == [on_slack.pk, on_refunds.pk, appended.pk]
    html = client.get("/reviews/?title=refund&kind=replace").content.decode()
    assert 'value="refund"' in html and 'value="replace" selected' in html


def test_it_flags_stale_and_invisible_character_proposals_in_the_row(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Pay", "Pay to 1234.\n")
    sneaky = version_propose(actor=reader, page=make_page("Other"), body="a\u202eb\n")
    stale = version_propose(actor=reader, page=page, body="Pay to 4321.\n")
    version_propose(actor=editor, page=page, body="Pay to 9999.\n", publish=True)
    rows = _rows(_client(reviewer))
    assert (rows[sneaky.pk].invisible, rows[sneaky.pk].stale) == (True, False)  # type: ignore[attr-defined]
    assert (rows[stale.pk].invisible, rows[stale.pk].stale) == (False, True)  # type: ignore[attr-defined]
    html = _client(reviewer).get("/reviews/").content.decode()
    assert html.count('class="rv-badge rv-badge-invisible"') == 1
    assert html.count('class="rv-badge rv-badge-stale"') == 1


def test_it_offers_one_click_approval_only_where_the_row_shows_the_whole_change(
    make_page: Callable[..., Page],
    reader: User,
    editor: User,
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    small = version_propose(actor=reader, page=make_page("Small", "a\nb\n"), body="a\nB\n")
    long_body = "".join(f"line {i}\n" for i in range(20))
    big = version_propose(actor=reader, page=make_page("Big", "x\n"), body=long_body)
    faq = make_page("FAQ", "Q1\n")
    fresh_append = version_propose(actor=proposing_agent, page=faq, kind="append", body="Q2")
    moved = make_page("Moved", "one\n")
    moved_append = version_propose(actor=proposing_agent, page=moved, kind="append", body="three")
    version_propose(actor=editor, page=moved, body="one\n\ntwo\n", publish=True)
    new_page = page_create(actor=proposing_agent, title="Brand new", body="x\n")
    renamed = version_propose(actor=reader, page=make_page("Old name", "same\n"), title="New name")
    rows = _rows(_client(reviewer))
    one_click = {pk for pk, row in rows.items() if row.one_click}  # type: ignore[attr-defined]
    assert one_click == {small.pk, fresh_append.pk}
    assert {big.pk, moved_append.pk, new_page.pk, renamed.pk} <= set(rows)
    html = _client(reviewer).get("/reviews/").content.decode()
    assert html.count('class="rv-row-approve"') == 2
    # The row shows the change it approves.
    row = html[html.index(f'id="row-{small.page.public_id}-{small.number}"') :].split("</tr>")[0]
    assert "<del>b</del>" in row and "<ins>B</ins>" in row


def test_it_approves_from_the_queue_and_comes_back_to_it(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Small", "a\n")
    proposal = version_propose(actor=reader, page=page, body="b\n")
    client = _client(reviewer)
    response = client.post(
        _url(proposal),
        {"action": "approve", "expected_live_number": 1, "return_to": "/reviews/?kind=replace"},
    )
    assert response.status_code == 302 and response["Location"] == "/reviews/?kind=replace"
    assert live(page).pk == proposal.pk


def test_it_never_returns_to_an_address_outside_the_review_screens(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Small", "a\n")
    proposal = version_propose(actor=reader, page=page, body="b\n")
    response = _client(reviewer).post(
        _url(proposal),
        {"action": "approve", "expected_live_number": 1, "return_to": "https://evil.example/"},
    )
    assert response.status_code == 302 and response["Location"] == "/reviews/"


def test_it_rejects_from_the_queue_with_the_reason_typed_in_the_row(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Policy", "a\n")
    proposal = version_propose(actor=reader, page=page, body="b\n")
    client = _client(reviewer)
    html = client.get("/reviews/").content.decode()
    assert f'<label for="reason-{proposal.pk}">Reason (required)</label>' in html
    refused = client.post(_url(proposal), {"action": "reject", "return_to": "/reviews/"})
    assert refused.status_code == 400 and "Give a reason" in refused.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    response = client.post(
        _url(proposal),
        {"action": "reject", "comment": "Out of date.", "return_to": "/reviews/"},
    )
    assert response.status_code == 302 and response["Location"] == "/reviews/"
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decision_comment) == (VersionStatus.REJECTED, "Out of date.")


def test_it_opens_the_next_proposal_after_a_decision_on_the_review_page(
    make_page: Callable[..., Page], reader: User, reviewer: User, proposing_agent: Agent
) -> None:
    first = version_propose(actor=reader, page=make_page("First", "a\n"), body="b\n")
    second = version_propose(actor=proposing_agent, page=make_page("Second", "c\n"), body="d\n")
    own = version_propose(actor=reviewer, page=make_page("Mine", "e\n"), body="f\n")
    client = _client(reviewer)
    response = client.post(_url(first), {"action": "reject", "comment": "No."})
    assert response["Location"] == _url(second)
    response = client.post(_url(second), {"action": "approve", "expected_live_number": 1})
    # Only the reviewer's own proposal is left: nothing else to decide, back to the queue.
    assert response["Location"] == "/reviews/"
    assert own.status == VersionStatus.IN_REVIEW
    page = client.get("/reviews/").content.decode()
    assert "Nothing else is waiting for you." in page
    assert "You cannot decide your own proposal; ask another reviewer." in page
