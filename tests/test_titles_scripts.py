# ruff: noqa: RUF001 - the test texts are Persian, Hebrew and Arabic on purpose
"""Every script's titles (issue 49, point 5): Persian, Indic and other scripts spell words with
ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER, so titles, tags and imports take them between
the letters of such a script, while bidi overrides and joiners that only hide a difference
are still refused; page text and titles render with `dir="auto"`, so a Hebrew or Arabic
paragraph reads right to left, and the sanitiser keeps `dir`.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from core.errors import InvalidArgument
from wiki.markdown import render_markdown, sanitise_html
from wiki.models import Page
from wiki.validators import (
    validate_change_summary,
    validate_tags,
    validate_title,
    without_idle_joiners,
)

from .conftest import CORPUS
from .prerequisites import require_corpus

pytestmark = pytest.mark.django_db

TLDR = CORPUS / "tldr-pages.tar.gz"
ZWNJ, ZWJ = "\u200c", "\u200d"

SPELLED_WITH_JOINERS = [
    f"فشرده{ZWNJ}سازی فایل{ZWNJ}ها",  # Persian: compressing files
    f"می{ZWNJ}خواهم رمز عبورم را تغییر دهم",  # Persian: I want to change my password
    f"به{ZWNJ}روز{ZWNJ}رسانی بسته{ZWNJ}ها",  # Persian, a ZWNJ after a non-joining letter too
    f"क्{ZWJ}ष नियम",  # Hindi: a half form (ka, virama, ZWJ, ssa)
    f"র{ZWJ}্যাব",  # Bengali: ra, ZWJ, virama, ya (the ya-phala after ra)
    f"റേജ്{ZWNJ} മുകളിൽ",  # Malayalam: a virama shown before a space
    f"ܐܠܦ{ZWNJ}ܒܝܬ",  # Syriac
]

STILL_REFUSED = [
    ("pay\u200cpal login", "U+200C"),  # Latin letters: it only hides a difference
    ("Пара\u200cль", "U+200C"),  # Cyrillic
    ("文件\u200c压缩", "U+200C"),  # CJK
    (f"فایل{ZWNJ}", "U+200C"),  # at the end
    (f"{ZWNJ}فایل", "U+200C"),  # at the start
    (f"فایل {ZWNJ}ها", "U+200C"),  # beside a space
    (f"فایل{ZWNJ}{ZWNJ}ها", "U+200C"),  # doubled
    (f"فایل{ZWNJ}files", "U+200C"),  # between two scripts
    (f"क{ZWNJ}ष", "U+200C"),  # Devanagari letters without a virama: renders as nothing
    ("admin\u202etxt.exe", "U+202E"),  # a bidi override
    ("فایل\u202eها", "U+202E"),
    ("فایل\u200bها", "U+200B"),  # a zero-width space
    ("فایل\u2066ها", "U+2066"),  # a bidi isolate
]


@pytest.mark.parametrize("title", SPELLED_WITH_JOINERS)
def test_it_takes_the_joiners_a_script_spells_with_at_every_door(title: str) -> None:
    assert validate_title(title) == title
    assert validate_tags([title]) == [title]
    assert validate_change_summary(f"Fix {title}") == f"Fix {title}"


@pytest.mark.parametrize(("title", "character"), STILL_REFUSED)
def test_it_still_refuses_bidi_overrides_and_joiners_that_hide_a_difference(
    title: str, character: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        validate_title(title)
    assert character in refused.value.message
    assert "Persian or Hindi" in refused.value.message  # says where joiners belong


def persian_articles(tmp_path: Path) -> dict[str, str]:
    """13 Persian tldr pages written into a folder, each titled (frontmatter) with one of its
    description lines, one holding a ZWNJ where there is one (8 of them at least); their
    titles by file name."""
    require_corpus(TLDR)
    articles: dict[str, str] = {}
    texts: dict[str, str] = {}
    with tarfile.open(TLDR) as archive:
        for member in archive.getmembers():
            wanted = member.isfile() and member.name.startswith("pages.fa/")
            if not wanted or len(articles) == 13:
                continue
            file = archive.extractfile(member)
            assert file is not None
            text = file.read().decode()
            lines = [line[2:].strip().rstrip(".") for line in text.splitlines()]
            described = [line for line in lines if line and text.count(f"> {line}")]
            title = next((line for line in described if ZWNJ in line), described[0])
            if len(title) <= 200 and (ZWNJ in title or len(articles) < 5):
                articles[Path(member.name).name] = title
                texts[Path(member.name).name] = f"---\ntitle: {title}\n---\n{text}"
    folder = tmp_path / "fa"
    folder.mkdir()
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return articles


def test_it_imports_persian_articles_whose_titles_hold_a_zwnj(
    admin_user: User, tmp_path: Path
) -> None:
    articles = persian_articles(tmp_path)
    assert len(articles) == 13 and sum(ZWNJ in title for title in articles.values()) >= 8

    out, err = io.StringIO(), io.StringIO()
    call_command("import_markdown", str(tmp_path / "fa"), "--publish", stdout=out, stderr=err)

    assert err.getvalue() == "", err.getvalue()
    assert "imported 13 pages" in out.getvalue()
    titles = set(Page.objects.exclude(source_path="fa/").values_list("title", flat=True))
    assert titles == {without_idle_joiners(title) for title in articles.values()}
    assert sum(ZWNJ in title for title in titles) >= 7
    # A joiner typed before a space joins nothing: left out of the title, kept in the page.
    assert "اضافه کردن" in " ".join(titles)


def test_page_text_and_titles_render_with_dir_auto(
    client: Client, admin_user: User, make_page: Callable[..., Page]
) -> None:
    body = (
        "An English paragraph.\n\nפסקה בעברית שנקראת מימין לשמאל.\n\n"
        "## عنوان\n\n- بند بالعربية\n\n| a | b |\n|---|---|\n| א | ب |\n\n```\ncode\n```\n"
    )
    page = make_page("מדריך", body)
    client.force_login(admin_user)

    html = client.get(f"/p/{page.public_id}/").content.decode()

    assert '<h1 dir="auto">מדריך</h1>' in html
    assert '<p dir="auto">פסקה בעברית שנקראת מימין לשמאל.</p>' in html
    assert '<p dir="auto">An English paragraph.</p>' in html
    assert '<li dir="auto">بند بالعربية</li>' in html
    assert '<td dir="auto">א</td>' in html
    assert "<pre><code>code" in html  # code reads left to right
    assert '<span class="tree-title" dir="auto">מדריך</span>' in html


def test_the_sanitiser_keeps_a_direction_and_nothing_else_in_dir() -> None:
    assert sanitise_html('<p dir="rtl">א</p>') == '<p dir="rtl">א</p>'
    assert sanitise_html('<p dir="RTL">א</p>') == '<p dir="rtl">א</p>'
    assert sanitise_html('<p dir="x onmouseover=1">א</p>') == "<p>א</p>"
    # <bdo> overrides the letters' own direction: its text stays, the element goes.
    assert sanitise_html('<bdo dir="rtl">abc</bdo>') == "abc"
    assert 'dir="auto"' in render_markdown("שלום")


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("हिन्दी भाषा", "हिन्दी-भाषा"),  # Hindi: the vowel signs and the virama stay
        ("தமிழ் மொழி", "தமிழ்-மொழி"),  # Tamil
        ("নতুন নিয়ম", "নতুন-নিয়ম"),  # Bengali
        ("Café Übersicht", "café-übersicht"),  # Latin slugs as before
        ("Onboarding: week 1!", "onboarding-week-1"),
    ],
)
def test_a_title_in_an_indic_script_keeps_its_vowel_signs_in_the_path(
    make_page: Callable[..., Page], title: str, slug: str
) -> None:
    """Django's slugify drops the combining marks (Mn, Mc) that Indic scripts write their vowels
    with, so "हिन्दी भाषा" became the unreadable "हनद-भष" in every path."""
    assert make_page(title=title).slug == slug
