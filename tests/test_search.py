"""Full-text search: ranking, sync with what is live, excerpts, query syntax, query counts."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from pytest_django import DjangoAssertNumQueries

from reviews.actions.create import page_create
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.revert import page_revert
from tests.bulk import make_live
from wiki import search
from wiki import services as wiki_services
from wiki.models import Page, SearchDocument, Version, VersionStatus
from wiki.search import SearchHit, search_pages

from .conftest import live

MakePage = Callable[..., Page]

HOSTILE_QUERIES = [
    'foo "bar baz" -qux OR x',
    '"unbalanced quote',
    'a"b"c""',
    '""',
    "AND",
    "OR",
    "NOT",
    "foo AND OR NOT bar",
    "NEAR(foo bar)",
    "NEAR/2",
    "*",
    "foo*",
    "^foo",
    "title:foo",
    "{title tags}: foo",
    "body : - + ( )",
    "((foo)",
    "foo)",
    "-",
    "--foo",
    "- -",
    "!foo & bar | baz <-> qux",
    "foo:* & !bar",
    "'single' quotes'",
    "\\x00 \\ back\\slash",
    "null\x00byte",
    "%s %(x)s ?",
    "'; DROP TABLE wiki_page; --",
    "😀 emoji",
    "\u202eright-to-left",
    "the",
    "a " * 100,
]


def titles(hits: list[SearchHit]) -> list[str]:
    return [hit.title for hit in hits]


def test_it_ranks_a_title_match_above_body_mentions(make_page: MakePage) -> None:
    make_page("Deployment notes", "Kubernetes " * 40 + "is what we deploy to.\n")
    make_page("On-call", "Page the team if kubernetes is down.\n")
    make_page("Kubernetes", "How our clusters are set up.\n")
    make_page("Unrelated", "Nothing to see.\n")

    hits = search_pages("kubernetes")

    assert titles(hits)[0] == "Kubernetes"
    assert set(titles(hits)) == {"Kubernetes", "Deployment notes", "On-call"}
    assert hits[0].score > hits[1].score >= hits[2].score


def test_it_ranks_a_tag_match_above_body_mentions(make_page: MakePage) -> None:
    make_page("Chat etiquette", "Slack " * 40 + "threads keep channels readable.\n")
    make_page("Tools we use", "Email, calendars and chat.\n", tags=["slack", "tools"])

    hits = search_pages("slack")

    assert titles(hits) == ["Tools we use", "Chat etiquette"]


def test_it_ranks_title_then_tags_then_body(make_page: MakePage) -> None:
    make_page("Refund policy", "How refunds work.\n")
    make_page("Payments", "Card payments.\n", tags=["refund"])
    make_page("Support", "Customers ask for a refund sometimes.\n")

    assert titles(search_pages("refund")) == ["Refund policy", "Payments", "Support"]


def test_it_filters_by_page_ids(make_page: MakePage) -> None:
    first = make_page("Onboarding", "Laptop setup and accounts.\n")
    second = make_page("Offboarding", "Return the laptop.\n")
    make_page("Hardware", "Laptop models we buy.\n")

    hits = search_pages("laptop", page_ids=[first.pk, second.pk])

    assert {hit.page_id for hit in hits} == {first.pk, second.pk}
    assert search_pages("laptop", page_ids=[]) == []
    assert search_pages("laptop", page_ids=iter([second.pk]))[0].public_id == second.public_id


def test_it_filters_by_a_queryset_of_pages(make_page: MakePage, editor: User) -> None:
    first = make_page("Onboarding", "Laptop setup and accounts.\n")
    second = make_page("Offboarding", "Return the laptop.\n")
    make_page("Hardware", "Laptop models we buy.\n")
    archived = make_page("Old laptops", "Laptop history.\n")
    wiki_services.page_archive(actor=editor, page=archived)

    scope = Page.objects.filter(title__endswith="boarding")
    hits = search_pages("laptop -accounts", page_ids=scope)
    assert {hit.page_id for hit in hits} == {second.pk}
    hits = search_pages("laptop", page_ids=scope.values_list("pk", flat=True))
    assert {hit.page_id for hit in hits} == {first.pk, second.pk}
    assert search_pages("laptop", page_ids=Page.objects.filter(pk=archived.pk)) == []
    assert search_pages("laptop", page_ids=Page.objects.none()) == []
    with pytest.raises(TypeError):
        search_pages("laptop", page_ids=Version.objects.all())  # type: ignore[arg-type]


def test_it_limits_the_number_of_hits(make_page: MakePage) -> None:
    for n in range(5):
        make_page(f"Page {n}", "A shared word: gazebo.\n")

    assert len(search_pages("gazebo", limit=3)) == 3
    assert len(search_pages("gazebo")) == 5


def test_it_describes_each_hit(make_page: MakePage) -> None:
    parent = make_page("Guides", "All guides.\n")
    page = make_page("Travel", "Book trains early.\n", parent=parent)

    [hit] = search_pages("trains")

    assert hit.page_id == page.pk
    assert hit.public_id == page.public_id
    assert hit.title == "Travel"
    assert hit.path == "guides/travel"
    # PostgreSQL's ts_headline leaves out the punctuation that ends a document.
    assert hit.excerpt.rstrip(".") == "Book [[[trains]]] early"
    assert isinstance(hit.score, float)
    assert hit.score == round(hit.score, 4)


def test_it_does_not_find_an_archived_page(make_page: MakePage, editor: User) -> None:
    page = make_page("Retired process", "The fax machine workflow.\n")
    assert titles(search_pages("fax")) == ["Retired process"]

    wiki_services.page_archive(actor=editor, page=page)
    assert search_pages("fax") == []
    assert not SearchDocument.objects.filter(page=page).exists()

    wiki_services.page_restore(actor=editor, page=page)
    assert titles(search_pages("fax")) == ["Retired process"]


def test_it_finds_a_proposal_only_once_approved(
    make_page: MakePage, reader: User, reviewer: User
) -> None:
    page = make_page("Lunch", "We order pizza on Fridays.\n")
    proposal = version_propose(
        actor=reader, page=page, body="We order sushi on Fridays.\n", change_summary="Sushi."
    )
    assert proposal.status == VersionStatus.IN_REVIEW

    assert search_pages("sushi") == []
    assert titles(search_pages("pizza")) == ["Lunch"]

    version_approve(actor=reviewer, version=proposal)

    assert titles(search_pages("sushi")) == ["Lunch"]
    assert search_pages("pizza") == []


def test_it_does_not_find_a_page_that_was_never_approved(reader: User) -> None:
    page_create(actor=reader, title="Secret draft", body="Unreviewed zeppelin.\n")

    assert search_pages("zeppelin") == []
    assert search_pages("secret draft") == []


def test_it_follows_a_revert(make_page: MakePage, editor: User) -> None:
    page = make_page("Wifi", "The password is on the fridge.\n")
    first = live(page)
    version_propose(
        actor=editor, page=page, title="Wireless", body="Ask the office manager.\n", publish=True
    )
    assert search_pages("fridge") == []
    assert titles(search_pages("manager")) == ["Wireless"]

    page_revert(actor=editor, page=page, to_version=first)

    assert titles(search_pages("fridge")) == ["Wifi"]
    assert search_pages("manager") == []
    assert search_pages("wireless") == []


def test_it_indexes_attachment_text(make_page: MakePage, editor: User) -> None:
    page = make_page("Budget", "See the attached figures.\n")
    upload = SimpleUploadedFile("q3.txt", b"Quarterly spend on marzipan.\n", "text/plain")

    attachment = wiki_services.attachment_add(actor=editor, page=page, upload=upload)
    [hit] = search_pages("marzipan")
    assert hit.title == "Budget"
    assert "[[[marzipan]]]" in hit.excerpt

    wiki_services.attachment_remove(actor=editor, attachment=attachment)
    assert search_pages("marzipan") == []


def test_it_makes_an_excerpt_of_about_200_characters_around_the_match(
    make_page: MakePage,
) -> None:
    before = " ".join(f"alpha{n}" for n in range(80))
    after = " ".join(f"omega{n}" for n in range(80))
    make_page("Long page", f"{before} the quokka lives here {after}\n")

    [hit] = search_pages("quokka")

    assert "[[[quokka]]]" in hit.excerpt
    assert 120 <= len(hit.excerpt) <= 220
    assert "\n" not in hit.excerpt


def test_it_starts_the_excerpt_at_the_body_when_only_the_title_matches(
    make_page: MakePage,
) -> None:
    make_page("Pelican care", "Feed twice a day. " * 30)

    [hit] = search_pages("pelican")

    assert hit.excerpt.startswith("Feed twice a day.")
    assert "[[[" not in hit.excerpt
    assert 100 <= len(hit.excerpt) <= 220


def test_it_makes_plain_text_excerpts_from_markdown(make_page: MakePage) -> None:
    make_page(
        "Links",
        "## Where\n\nThe **walrus** lives on [the wiki](https://example.com/x) `now`.\n",
    )

    [hit] = search_pages("walrus")

    assert hit.excerpt.rstrip(".") == "Where The [[[walrus]]] lives on the wiki now"


def test_it_keeps_literal_brackets_apart_from_the_marks(make_page: MakePage) -> None:
    make_page("Brackets", "Arrays like [[[1]]] and ]]] confuse the yak.\n")

    [hit] = search_pages("yak")

    assert hit.excerpt.count("[[[") == hit.excerpt.count("]]]") == 1
    assert "[[[yak]]]" in hit.excerpt
    assert search.strip_marks(hit.excerpt).rstrip(".").endswith("confuse the yak")
    assert "[[[" not in search.strip_marks(hit.excerpt)


def test_it_understands_phrases_or_and_exclusion(make_page: MakePage) -> None:
    make_page("One", "The red apple fell.\n")
    make_page("Two", "An apple, red and green.\n")
    make_page("Three", "Green pears only.\n")

    assert set(titles(search_pages("red apple"))) == {"One", "Two"}
    assert titles(search_pages('"red apple"')) == ["One"]
    assert titles(search_pages("apple -green")) == ["One"]
    assert titles(search_pages('apple -"and green"')) == ["One"]
    assert set(titles(search_pages("pears OR fell"))) == {"One", "Three"}
    assert set(titles(search_pages("green pears or apple"))) == {"Two", "Three"}


def test_it_does_not_turn_a_stop_word_and_an_exclusion_into_everything(
    make_page: MakePage,
) -> None:
    make_page("Lamps", "Velvet lamps.\n")

    assert search_pages("the -zebra") == []
    assert titles(search_pages("lamps -the")) == ["Lamps"]


def test_it_stems_english_words(make_page: MakePage) -> None:
    make_page("Runbook", "Running the nightly jobs.\n")

    assert titles(search_pages("runs")) == ["Runbook"]
    assert titles(search_pages("job")) == ["Runbook"]


def test_it_finds_russian_arabic_and_chinese_words(make_page: MakePage) -> None:
    make_page("Русский", "Инструкция по настройке сервера.\n")
    make_page("العربية", "دليل المستخدم للنظام.\n")
    make_page("中文", "我们的服务器配置指南。\n")

    assert titles(search_pages("сервера")) == ["Русский"]
    assert titles(search_pages("Инструкция")) == ["Русский"]
    assert titles(search_pages("المستخدم")) == ["العربية"]
    [hit] = search_pages("服务器")
    assert hit.title == "中文"
    assert "[[[服务器]]]" in hit.excerpt
    assert titles(search_pages("中文")) == ["中文"]
    assert search_pages("服务员") == []


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_it_never_fails_on_a_hostile_query(make_page: MakePage, query: str) -> None:
    make_page("Foo bar baz", "foo bar baz x title the a\n")

    hits = search_pages(query)

    assert isinstance(hits, list)
    # The transaction is still usable afterwards (no error was swallowed by the database).
    assert titles(search_pages("baz")) == ["Foo bar baz"]


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "...", '" "', "-- ! ? :", "-foo", "OR"])
def test_it_returns_nothing_for_a_query_without_words(
    make_page: MakePage, query: str, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    make_page("Foo", "foo\n")

    with django_assert_num_queries(0):
        assert search_pages(query) == []


def test_it_parses_queries_into_terms() -> None:
    parsed = search.parse_query('foo "bar  baz" -qux OR x -"a b" or "unbalanced')

    assert parsed.groups == [["foo"], ["bar baz"], ["x"], ["unbalanced"]]
    assert parsed.excluded == ["qux", "a b"]
    assert search.parse_query("p b OR c d").groups == [["p"], ["b", "c"], ["d"]]
    # Stop words need not match, unless the query has nothing else.
    assert search.parse_query("can I take a paid job outside of work").groups == [
        ["take"],
        ["paid"],
        ["job"],
        ["outside"],
        ["work"],
    ]
    assert search.parse_query('the "who" -the').groups == [["who"]]
    assert search.parse_query("the who").groups == [["the"], ["who"]]
    assert search.fts5_match(search.parse_query('x "say hi" OR y -z')) == (
        '(("x") AND ("say hi" OR "y")) NOT "z"'
    )
    assert search.fts5_match(search.ParsedQuery(groups=[['say "hi"']])) == '(("say ""hi"""))'


def _bulk_pages(editor: User, count: int) -> list[Page]:
    pages = Page.objects.bulk_create(
        Page(title=f"Common page {n}", slug=f"common-page-{n}", path=f"common-page-{n}")
        for n in range(count)
    )
    make_live(
        pages,
        author=editor,
        body=lambda n, page: f"Body {n} mentions the common word and another.\n",
    )
    return pages


@pytest.mark.parametrize("count", [10, 200])
def test_it_searches_in_one_query_whatever_the_number_of_pages(
    editor: User, count: int, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    pages = _bulk_pages(editor, count)
    assert search.reindex_all() == count
    ids = [page.pk for page in pages]

    # One statement finds the hits, their excerpts and their sections (their pages' chunks);
    # on PostgreSQL inside a savepoint that sets the search's statement timeout and is
    # rolled back.
    queries = 5 if connection.vendor == "postgresql" else 1
    with django_assert_num_queries(queries):
        hits = search_pages("common")
    with django_assert_num_queries(queries):
        filtered = search_pages("common word -nothing", page_ids=ids)
    with django_assert_num_queries(queries):
        scoped = search_pages("common", page_ids=Page.objects.filter(pk__in=ids[::2]))

    assert len(hits) == min(count, 20)
    assert len(filtered) == min(count, 20)
    assert len(scoped) == min(count // 2, 20)
    assert {hit.page_id for hit in scoped} <= set(ids[::2])
    assert all("[[[" in hit.excerpt for hit in hits)


def test_it_indexes_a_page_in_a_few_queries(
    make_page: MakePage, django_assert_max_num_queries: DjangoAssertNumQueries
) -> None:
    page = make_page("Indexed", "Text.\n")
    page = Page.objects.select_related("live_version").get(pk=page.pk)

    with django_assert_max_num_queries(3):
        search.index_page(page)
    with django_assert_max_num_queries(1):
        search.remove_page(page)


def test_it_rebuilds_the_index(make_page: MakePage, editor: User) -> None:
    make_page("Kept", "A durable lighthouse.\n")
    archived = make_page("Gone", "An archived lighthouse.\n")
    wiki_services.page_archive(actor=editor, page=archived)
    SearchDocument.objects.all().delete()
    assert search_pages("lighthouse") == []

    out = StringIO()
    call_command("rebuild_search_index", stdout=out)

    assert "1 page" in out.getvalue()
    assert titles(search_pages("lighthouse")) == ["Kept"]


def test_it_indexes_a_page_link_without_the_linked_pages_title(
    make_page: Callable[..., Page],
) -> None:
    # The linked page may be archived, in review or outside an agent's set: its title is not
    # the linking page's text, and must not reach that page's readers through search.
    target = make_page("Escalation ladder", "Call the on-call lead.\n")
    make_page("Rota", f"When stuck, follow [[{target.public_id}]] at once.\n")
    [hit] = search_pages("rota")
    assert "Escalation" not in hit.excerpt and "ladder" not in hit.excerpt
    assert {h.title for h in search_pages("ladder")} == {"Escalation ladder"}
