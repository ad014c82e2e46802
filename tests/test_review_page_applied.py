"""The review page shows what approving applies, and renders it exactly as the page view."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from wiki.models import Page, Version


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _between(html: str, start: str, end: str) -> str:
    first = html.index(start)
    return html[first : html.index(end, first)]


def _main(html: str) -> str:
    return _between(html, "<main", "</main>")


def test_it_shows_the_merge_against_live_for_a_clean_stale_merge(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    proposal = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    html = _client(reviewer).get(_url(proposal)).content.decode()
    main_diff = _between(html, '<div class="rv-diff" id="text">', '<details class="rv-raw">')
    # The merge keeps the live GAMMA and adds ALPHA: only ALPHA is a change against live.
    assert "Merged result (applied)" in main_diff
    assert "<del>alpha</del>" in main_diff and "<ins>ALPHA</ins>" in main_diff
    assert "GAMMA</del>" not in main_diff and "<ins>gamma" not in main_diff
    # The proposal as written would undo GAMMA; it is there, labelled as not applied.
    raw = _between(html, '<details class="rv-raw">', "</details>")
    assert "not what will be applied" in raw
    assert "<del>GAMMA</del>" in raw and "<ins>gamma</ins>" in raw
    rendered = _between(html, 'class="rv-rendered-frame prose"', "</section>")
    assert "ALPHA" in rendered and "GAMMA" in rendered


def test_it_shows_no_raw_proposal_when_it_is_not_stale(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Fresh", "one\n")
    proposal = version_propose(actor=reader, page=page, body="two\n")
    html = _client(reviewer).get(_url(proposal)).content.decode()
    assert "rv-raw" not in html and "Changes against the live version (v1)" in html


def test_it_opens_an_append_at_the_added_blocks_with_the_live_page_folded(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    live_body = "".join(f"Paragraph {i} of the live page.\n\n" for i in range(40))
    page = make_page("FAQ", live_body)
    append = version_propose(
        actor=proposing_agent, page=page, kind="append", body="## New question\n\nNew answer."
    )
    html = _client(reviewer).get(_url(append)).content.decode()
    frame = _between(html, 'class="rv-rendered-frame prose"', "</section>")
    folded = _between(frame, '<details class="rv-live-above">', "</details>")
    assert "Paragraph 39 of the live page." in folded and "New answer." not in folded
    appended = frame[frame.index('id="appended"') :]
    assert "New answer." in appended and '<h3 dir="auto">New question</h3>' in appended
    css = open("static/quire/reviews.css").read()
    # No inner scroll box hides the added blocks.
    assert ".rv-rendered-frame { max-height: none; overflow: visible; }" in css


def test_it_keeps_unchanged_runs_to_unfold_on_click(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    old = "".join(f"line {i}\n" for i in range(60))
    page = make_page("Long", old)
    proposal = version_propose(
        actor=reader, page=page, body=old.replace("line 30\n", "line thirty\n")
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    table = _between(html, '<table class="rv-sbs"', "</table>")
    assert table.count('data-unfold="') == 2
    assert "Show 27 unchanged lines" in table and "Show 26 unchanged lines" in table
    hidden = re.findall(r'<tr class="rv-equal" hidden data-fold="(\d+)">', table)
    assert sorted(Counter(hidden).values()) == [26, 27]
    assert "line 0" in table and "line 59" in table  # folded, not dropped


def test_it_renders_a_diff_of_the_rendered_page(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page(
        "Refunds",
        "# Refunds\n\nWe refund within 30 days.\n\nCall us first.\n\n- cards\n",
    )
    proposal = version_propose(
        actor=reader,
        page=page,
        body="# Refunds\n\nWe refund within 60 days.\n\n## Exceptions\n\nSale items.\n\n- cards\n",
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    rendered = _between(html, '<div class="rv-rendered-diff prose">', "</section>")
    assert '<div class="rv-block-changed"><p dir="auto">We refund within <ins>60' in rendered
    assert '<div class="rv-block-added"><h3 dir="auto">Exceptions</h3></div>' in rendered
    assert '<div class="rv-block-removed"><p dir="auto">Call us first.</p></div>' in rendered
    assert '<li dir="auto">cards</li>' in rendered
    # The title heading is dropped as on the page view, and no heading keeps a second id.
    assert "<h1" not in rendered and ">Refunds</h2>" not in rendered and ' id="' not in rendered


def test_it_renders_the_result_exactly_as_the_page_view(
    make_page: Callable[..., Page], reviewer: User, editor: User, proposing_agent: Agent
) -> None:
    body = "# Handbook\n\nIntro.\n\n# Part one\n\nText with **bold**.\n\n## Detail\n\nMore.\n"
    page = make_page("Handbook", "Draft.\n")
    proposal = version_propose(actor=proposing_agent, page=page, body=body)
    review = _client(reviewer).get(_url(proposal)).content.decode()
    rendered = _between(review, 'class="rv-rendered-frame prose">', "</div>\n</section>")
    version_approve(actor=reviewer, version=proposal)
    view = _client(editor).get(f"/p/{page.public_id}/").content.decode()
    article = _between(view, '<article class="prose">', "</article>")
    assert rendered.split(">", 1)[1].strip() == article.split(">", 1)[1].strip()
    # One h1 on each screen: the page's title; the body's headings sit below it.
    assert len(re.findall(r"<h1[ >]", _main(view))) == 1
    assert len(re.findall(r"<h1[ >]", _main(review))) == 1
    assert '<h2 dir="auto" id="part-one">Part one</h2>' in article


def test_it_has_no_duplicate_ids_on_the_review_page(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Notes", "## Setup\n\nalpha\n\n## Use\n\nbeta\n")
    proposal = version_propose(
        actor=reader, page=page, body="## Setup\n\nALPHA\n\n## Use\n\nbeta\n"
    )
    version_propose(
        actor=editor, page=page, body="## Setup\n\nalpha\n\n## Use\n\nBETA\n", publish=True
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert [i for i, n in Counter(ids).items() if n > 1] == []
