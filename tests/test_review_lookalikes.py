# ruff: noqa: RUF001 - the test texts hold look-alike letters on purpose
"""The review page flags every invisible or look-alike character a proposal adds.

Beyond zero-width and bidi controls: variation selectors, Hangul fillers, the Braille blank,
the combining grapheme joiner, spaces that are not spaces, and letters of another script
that pass for Latin inside a word (a Cyrillic "\\u0430" in "p\\u0430ypal").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from reviews.actions.propose import version_propose
from reviews.diff import invisible_characters, show, suspicious_characters
from wiki.models import Page, Version

HIDDEN = {
    "\ufe0f": "U+FE0F VARIATION SELECTOR-16",
    "\U000e0101": "U+E0101 VARIATION SELECTOR-18",
    "\u3164": "U+3164 HANGUL FILLER",
    "\u115f": "U+115F HANGUL CHOSEONG FILLER",
    "\uffa0": "U+FFA0 HALFWIDTH HANGUL FILLER",
    "\u2800": "U+2800 BRAILLE PATTERN BLANK",
    "\u034f": "U+034F COMBINING GRAPHEME JOINER",
    "\u00a0": "U+00A0 NO-BREAK SPACE",
    "\u2028": "U+2028 LINE SEPARATOR",
}


@pytest.mark.parametrize("char", list(HIDDEN))
def test_it_shows_each_hidden_character_as_a_badge(char: str) -> None:
    html = show(f"rm{char}-rf")
    code = HIDDEN[char].split(" ", 1)[0]
    assert f"\u27e6{code}\u27e7" in html
    assert char not in html
    assert invisible_characters(*[f"rm{char}-rf"]) == [HIDDEN[char]]


def test_it_marks_a_letter_of_another_script_inside_a_latin_word() -> None:
    html = show("Log in at p\u0430ypal.com")
    assert '<span class="lookalike-char"' in html
    assert "U+0430 CYRILLIC SMALL LETTER A" in html
    labels = invisible_characters(*["Log in at p\u0430ypal.com"])
    assert labels == [
        "U+0430 CYRILLIC SMALL LETTER A looks like Latin \u201ca\u201d in \u201cp\u0430ypal\u201d"
    ]
    # A Greek omicron in a Latin word, and a Latin "o" in a Cyrillic one, are flagged too.
    assert invisible_characters(*["micr\u03bfsoft"])[0].startswith(
        "U+03BF GREEK SMALL LETTER OMICRON"
    )
    assert invisible_characters(*["\u043fo\u0440\u0442"])[0].startswith(
        "U+006F LATIN SMALL LETTER O"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Привет, мир: the Russian for hello world.",
        "日本語のテキストとカタカナ",
        "naïve café, Straße, Ελληνικά",
        "version 2.0_beta, C++ and x86-64",
        # Code names join scripts with digits and underscores; Japanese runs Latin into kana.
        "ssh ip_адрес -p порт_x позиція2y",
        "OSに関連する情報とPOSTリクエスト",
        "tabs\tand\nnewlines",
    ],
)
def test_it_leaves_ordinary_text_of_any_script_alone(text: str) -> None:
    assert invisible_characters(*[text]) == []
    assert "lookalike-char" not in show(text) and "invisible-char" not in show(text)


def test_it_reports_only_what_the_proposal_adds() -> None:
    before = ["Already here:\u3164 and p\u0430ypal."]
    after = ["Already here:\u3164 and p\u0430ypal. New:\u2800 and \u0430pple."]
    labels = [flag.label for flag in suspicious_characters(after, before=before)]
    assert labels == [
        "U+2800 BRAILLE PATTERN BLANK",
        "U+0430 CYRILLIC SMALL LETTER A looks like Latin \u201ca\u201d in \u201c\u0430pple\u201d",
    ]


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def test_the_review_page_flags_what_a_proposal_adds(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("Payments", "Pay through the portal.\u3164\n")
    proposal = version_propose(
        actor=proposing_agent,
        page=page,
        body="Pay through the portal.\u3164\n\nOr log in at p\u0430ypal.com\ufe0f \u2800\n",
        change_summary="Add a payment option",
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    banner = html[html.index("rv-invisible-banner") :].split("</div>")[0]
    assert "invisible and look-alike characters" in banner
    assert "U+FE0F VARIATION SELECTOR-16" in banner
    assert "U+2800 BRAILLE PATTERN BLANK" in banner
    assert "U+0430 CYRILLIC SMALL LETTER A looks like Latin" in banner
    assert "U+3164" not in banner  # already live: shown in the diff, not news
    assert "\u27e6U+3164\u27e7" in html and "\u27e6U+2800\u27e7" in html
    assert '<span class="lookalike-char"' in html


def test_the_review_page_flags_an_appended_homoglyph(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("FAQ", "Q1?\n")
    append = version_propose(
        actor=proposing_agent, page=page, kind="append", body="Reset at \u0455upport.example"
    )
    html = _client(reviewer).get(_url(append)).content.decode()
    assert "This proposal contains look-alike characters" in html
    assert "U+0455 CYRILLIC SMALL LETTER DZE looks like Latin \u201cs\u201d" in html


def _pane(html: str, css_class: str) -> str:
    start = html.index(f'class="{css_class}')
    return html[start : html.index("</section>", start)]


def test_the_rendered_panes_badge_what_the_markdown_diff_badges(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("Payments", "Pay through the portal.\n")
    proposal = version_propose(
        actor=proposing_agent,
        page=page,
        body="Pay at **p\u0430ypal.com**.\n\nOpen `\u202egpj.exe` from the [portal](/x).\n",
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    for pane in (_pane(html, "rv-rendered-diff"), _pane(html, "rv-rendered-frame")):
        assert (
            '<strong>p<span class="lookalike-char" title="U+0430 CYRILLIC SMALL LETTER A looks '
            'like Latin \u201ca\u201d in \u201cp\u0430ypal\u201d">\u0430</span>ypal.com</strong>'
        ) in pane
        assert (
            '<code><span class="invisible-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">'
            "\u27e6U+202E\u27e7</span>gpj.exe</code>"
        ) in pane
        assert '<a href="/x" rel="noopener noreferrer nofollow">portal' in pane
    # An addition's panes too.
    append = version_propose(
        actor=proposing_agent,
        page=make_page("FAQ", "Q1?\n"),
        kind="append",
        body="Ask p\u0430ypal \u200b.",
    )
    html = _client(reviewer).get(_url(append)).content.decode()
    appended = html[html.index('id="appended"') :]
    assert '<span class="lookalike-char"' in appended.split("</section>")[0]
    assert "\u27e6U+200B\u27e7" in appended.split("</section>")[0]


def test_it_badges_rendered_html_without_touching_its_markup() -> None:
    from reviews.diff import show_html

    plain = '<p class="x">Safe &amp; sound &lt;b&gt; <a href="/p/pg_aaaaaaaa/">here</a></p>'
    assert show_html(plain) == plain
    marked = show_html("<p>a\u200bb <em>c\u202ed</em> e</p><p>\u0455upport</p>tail\u200b")
    assert marked == (
        '<p>a<span class="invisible-char" title="U+200B ZERO WIDTH SPACE">\u27e6U+200B\u27e7'
        '</span>b <em>c<span class="invisible-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">'
        "\u27e6U+202E\u27e7</span>d</em> e</p><p>"
        '<span class="lookalike-char" title="U+0455 CYRILLIC SMALL LETTER DZE looks like '
        'Latin \u201cs\u201d in \u201c\u0455upport\u201d">\u0455</span>upport</p>tail'
        '<span class="invisible-char" title="U+200B ZERO WIDTH SPACE">\u27e6U+200B\u27e7</span>'
    )


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_reviewer_sees_the_lookalike_in_the_browser(
    live_server: Any,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
    browser_page: Any,
    screenshots: Path,
) -> None:
    from playwright.sync_api import expect

    page = make_page("Payments", "Pay through the portal.\n")
    proposal = version_propose(
        actor=proposing_agent,
        page=page,
        body="Pay through the portal.\n\nOr log in at p\u0430ypal.com \u2800\n",
        change_summary="Add a payment option",
    )
    browser = browser_page
    browser.goto(f"{live_server.url}/login/?next={_url(proposal)}")
    browser.fill("input[name=username]", reviewer.username)
    browser.fill("input[name=password]", "correct-horse-battery")
    browser.click("button[type=submit]")
    banner = browser.locator(".rv-invisible-banner")
    expect(banner).to_contain_text("invisible and look-alike characters")
    expect(banner).to_contain_text("U+0430 CYRILLIC SMALL LETTER A looks like Latin")
    marked = browser.locator("table.rv-sbs .lookalike-char").first
    expect(marked).to_be_visible()
    expect(marked).to_have_attribute("title", re.compile("CYRILLIC SMALL LETTER A"))
    expect(browser.locator("table.rv-sbs")).to_contain_text("\u27e6U+2800\u27e7")
    browser.screenshot(path=str(screenshots / "review-lookalikes.png"), full_page=True)
