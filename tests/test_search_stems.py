"""A question in a language the index does not stem and the English model does not read finds
its page by its words (issue 49 point 4, wiki.search.query.for_language): Russian, Arabic,
Persian and Hindi words by their stems, Korean ones without their particles, a Japanese verb's
stem not needed, and a page holding a third of such a question's words is a partial hit.
Keyword ranking alone, on both databases; the tldr translations measure it
(tests/test_search_translations.py)."""

from __future__ import annotations

import pytest

from wiki.search import search_pages
from wiki.search.query import for_language, korean_stem, parse_query, stem

from .test_search import MakePage, titles

pytestmark = pytest.mark.django_db


def keyword_titles(query: str) -> list[str]:
    return titles(search_pages(query, semantic=False))


def test_a_russian_question_finds_its_page_by_the_stems_of_its_words(
    make_page: MakePage,
) -> None:
    make_page("df", "Показывает свободное место в файловой системе на диске.\n")
    make_page("cp", "Копирует файлы и папки из одного места в другое.\n")
    make_page("ls", "Выводит список файлов в папке, по одному на строку.\n")

    found = keyword_titles("сколько свободного места осталось на диске")

    assert found[:1] == ["df"]
    assert stem("свободного", "ru") == "свободн"


def test_a_korean_question_finds_its_page_without_its_particles(make_page: MakePage) -> None:
    make_page("df", "파일 시스템 디스크 공간 사용량에 대한 개요를 표시합니다.\n")
    make_page("cp", "파일과 디렉토리를 다른 위치로 복사합니다.\n")

    assert keyword_titles("디스크에 남은 공간 확인")[:1] == ["df"]
    assert korean_stem("검색하기") == "검색"
    assert korean_stem("파일들을") == "파일"
    assert korean_stem("남은") is None  # one syllable would be left


def test_a_japanese_question_need_not_hold_a_verb_stem_written_with_its_ending(
    make_page: MakePage,
) -> None:
    make_page("ffmpeg", "動画変換ツールです。動画や音声のファイルを扱います。\n")
    make_page("cp", "ファイルやディレクトリをコピーします。\n")

    assert keyword_titles("動画を別の形式に変換する")[:1] == ["ffmpeg"]


def test_an_arabic_question_finds_words_written_with_the_article(make_page: MakePage) -> None:
    make_page("rm", "حذف الملفات والمجلدات من نظام الملفات.\n")
    make_page("cp", "نسخ البيانات إلى مكان آخر على الخادم.\n")

    assert keyword_titles("حذف ملف")[:1] == ["rm"]


def test_an_arabic_question_finds_words_written_with_a_preposition(make_page: MakePage) -> None:
    make_page("chmod", "غير صلاحيات الوصول لملف أو مجلد.\n")
    make_page("cp", "نسخ البيانات إلى مكان آخر على الخادم.\n")

    assert keyword_titles("صلاحيات ملف")[:1] == ["chmod"]


def test_a_hindi_question_finds_the_other_forms_of_its_verb(make_page: MakePage) -> None:
    make_page("mkdir", "यह आदेश निर्देशिकाएँ बनाता है।\n")
    make_page("cat", "यह आदेश फ़ाइल की सामग्री दिखाता है।\n")

    assert keyword_titles("नई निर्देशिका बनाना")[:1] == ["mkdir"]


def test_english_and_spanish_questions_keep_more_than_half_their_words() -> None:
    assert not for_language(parse_query("free disk space left"), "en").loose
    assert not for_language(parse_query("cuánto espacio libre queda"), "es").loose
    assert for_language(parse_query("свободное место на диске"), "ru").loose
    # Russian and Persian function words are left out as English stop words are.
    russian = for_language(parse_query("место на диске"), "ru")
    assert [group[0] for group in russian.groups] == ["место", "диске"]


def test_a_page_holding_a_third_of_a_russian_question_is_found_over_every_page(
    make_page: MakePage,
) -> None:
    """A partial hit of such a question holds a third of its terms, so PostgreSQL's index must
    look up n - a third + 1 of them (wiki.search.rarity), not n - more than half + 1: with the
    page holding the fifth and sixth of six words only, the looked-up three missed it."""
    make_page("journalctl", "Сервера хранят журналы.\n")
    make_page("cp", "Копирует файлы и папки из одного места в другое.\n")

    found = keyword_titles("быстро удалить старые ночные журналы сервера")

    assert found[:1] == ["journalctl"]
