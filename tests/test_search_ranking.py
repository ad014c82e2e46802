"""Keyword ranking: each page once, `score` in the order of the hits, punctuation that does not
change what a question means, and titles that hold the question's words first."""

from __future__ import annotations

from collections.abc import Callable

from wiki.models import Page
from wiki.search import SearchHit, search_pages

MakePage = Callable[..., Page]


def titles(hits: list[SearchHit]) -> list[str]:
    return [hit.title for hit in hits]


def test_it_lists_each_page_once(make_page: MakePage) -> None:
    # Full hits and "most of the words" hits come from two queries: none may repeat.
    for n in range(3):
        make_page(f"Budget {n}", "The travel budget for the annual offsite.\n")
    for n in range(3):
        make_page(f"Offsite {n}", "The offsite agenda: travel and talks.\n")

    hits = search_pages("travel budget annual offsite agenda")

    ids = [hit.page_id for hit in hits]
    assert len(ids) == len(set(ids)) == 6


def test_it_gives_scores_that_follow_the_order_of_the_hits(make_page: MakePage) -> None:
    # An exact title comes first even when its text says little, and partial hits follow
    # full ones: the score must still go down the list.
    make_page("Expense report", "Short.\n")
    make_page("Reports", ("How to file an expense report for travel. " * 20) + "\n")
    make_page("Travel", ("Expense and travel rules; expense limits. " * 20) + "\n")
    make_page("Receipts", "Keep every receipt for the expense report and travel.\n")

    hits = search_pages("expense report")
    assert titles(hits)[0] == "Expense report"
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)

    partial = search_pages("expense report travel receipts")
    assert titles(partial)[:2] == ["Receipts", "Reports"]
    scores = [hit.score for hit in partial]
    assert scores == sorted(scores, reverse=True)


def test_it_reads_a_contraction_as_its_words(make_page: MakePage) -> None:
    page = make_page("New starters", "When you join: your laptop and accounts.\n")

    hits = search_pages("I'm new, what laptop do I get?")

    assert titles(hits) == [page.title]


def test_it_finds_1_1_meetings_when_asked_about_1_1s(make_page: MakePage) -> None:
    make_page("1-1 meetings", "Meet your manager every week.\n")
    make_page("Team meetings", "Every Monday.\n")

    assert titles(search_pages("1:1"))[:1] == ["1-1 meetings"]
    assert titles(search_pages("how often are 1:1 meetings?"))[:1] == ["1-1 meetings"]
    assert titles(search_pages("1-1 meetings"))[:1] == ["1-1 meetings"]


def test_it_keeps_the_meaning_of_a_file_name(make_page: MakePage) -> None:
    make_page("tar", "Extract an archive: tar xzf archive.tar.gz\n")
    make_page("ssh-keygen", "Generate a key pair.\n")

    assert titles(search_pages("archive.tar.gz")) == ["tar"]
    assert titles(search_pages("ssh-keygen"))[:1] == ["ssh-keygen"]


def test_it_ranks_a_title_holding_the_key_words_above_pages_that_mention_them(
    make_page: MakePage,
) -> None:
    make_page(
        "Team rituals",
        ("Our parental customs; leave the office early on a policy review day. " * 15) + "\n",
    )
    make_page(
        "Benefits overview",
        ("Parental benefits, leave of many kinds, and each policy we keep. " * 15) + "\n",
    )
    make_page(
        "Parental benefits",
        ("Leave policy: parental leave, the leave policy, policy on leave. " * 15) + "\n",
    )
    make_page("Parental leave policy", "Twelve weeks, paid.\n")

    hits = search_pages("what is the parental leave policy")

    assert titles(hits)[0] == "Parental leave policy"


def test_it_still_puts_an_exact_title_first(make_page: MakePage) -> None:
    make_page("Leave", "All kinds of leave.\n")
    make_page("Parental leave", "Leave for parents, leave leave leave.\n")
    make_page("Leave policy", "The leave policy.\n")

    assert titles(search_pages("leave"))[0] == "Leave"
    assert titles(search_pages("Leave policy"))[0] == "Leave policy"
