"""Names never cross a hidden page, over generated wikis (issue 46, point 2).

Hypothesis draws a small tree of pages, read grants on some of them to some of two groups
(a subsection granted back inside a hidden section among them), people in and out of the
groups and agents of theirs (all pages, or a set holding one page added before the grants)
and one with no owner. Then each reader asks every door it has: the MCP tools (through the
test client, the tools' own code path; tests/test_hidden_names.py drives each tool on a live
server with the official client), REST's page list, search, detail and children, its review
list, and the web's tree, page view, search, picker, review queue and inbox, and the review
request mail sent to them. No answer may hold the title word, slug or id of a page that reader
may not read, and every path shown is the one worked out here from `wiki.permissions.can`: it
starts below the deepest page on it the reader may not read (for an agent, at its own entry at
the highest). Each group has a chat webhook, and some grants give `decide` too: no post to a
group's chat names a page the group itself may not read (`wiki.permissions.group_holds`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from core.actors import SystemActor
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from reviews.mail import compose
from reviews.models import GroupWebhook, Notification, WebhookPost
from wiki import permissions
from wiki.models import Page, PageGrant
from wiki.roles import REVIEWERS

from .fixtures_mcp import fresh_rate_limits, rpc_tool  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

# One word per page, none inside another, none found in Quire's own screens.
WORDS = ("hxquokka", "hxwombat", "hxnarwhal", "hxaxolotl", "hxpangolin", "hxokapi", "hxtapir")
GROUPS = ("Legal", "Staff")
SUBSETS: tuple[frozenset[str], ...] = (
    frozenset(),
    frozenset({"Legal"}),
    frozenset({"Staff"}),
    frozenset(GROUPS),
)


@dataclass(frozen=True)
class Wiki:
    """What Hypothesis drew: each page's parent (an earlier page, or None), the groups granted
    read on each page (none: no grant), and the groups of three people."""

    parents: tuple[int | None, ...]
    grants: tuple[frozenset[str], ...]
    people: tuple[frozenset[str], ...]
    set_page: int  # the page the set of the second person's agent holds
    proposed: int  # a page with a proposal waiting
    decide: tuple[bool, ...] = ()  # whether each page's grant gives `decide` too


@st.composite
def wikis(draw: st.DrawFn) -> Wiki:
    size = draw(st.integers(min_value=2, max_value=len(WORDS)))
    parents = tuple(
        None if n == 0 else draw(st.one_of(st.none(), st.integers(0, n - 1))) for n in range(size)
    )
    group_sets = st.sampled_from(SUBSETS)
    # Half the pages carry no grant, the other half a grant to one group or both.
    grants = tuple(
        draw(st.one_of(st.just(frozenset()), st.sampled_from(SUBSETS[1:]))) for _ in range(size)
    )
    people = tuple(draw(group_sets) for _ in range(3))
    return Wiki(
        parents,
        grants,
        people,
        draw(st.integers(0, size - 1)),
        draw(st.integers(0, size - 1)),
        tuple(draw(st.booleans()) for _ in range(size)),
    )


@dataclass
class Reader:
    """A person or an agent, and what it may read: the pages by index."""

    name: str
    readable: set[int]
    person: User | None = None
    token: str | None = None
    entry: int | None = None  # an agent's one set entry (None: every page)
    proposed: int = 0  # the page with a proposal waiting
    shown: dict[int, str] = field(default_factory=dict)  # expected path per readable page


def build(wiki: Wiki, admin: User) -> tuple[list[Page], list[Reader]]:
    pages: list[Page] = []
    for n, parent in enumerate(wiki.parents):
        version = page_create(
            actor=admin,
            title=f"{WORDS[n].capitalize()} page",
            body=f"Text about {WORDS[n]}.\n",
            parent=None if parent is None else pages[parent],
            publish=True,
        )
        pages.append(Page.objects.get(pk=version.page_id))
    for name in (*GROUPS, REVIEWERS):
        # Each group's chat hears of the proposals the group itself may read and decide.
        chat = Group.objects.get_or_create(name=name)[0]
        GroupWebhook.objects.create(group=chat, url=f"https://chat.example.com/hooks/{name}")
    people = []
    for n, groups in enumerate(wiki.people):
        person = User.objects.create_user(f"person{n}", email=f"person{n}@example.com")
        person.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in groups))
        person.groups.add(Group.objects.get_or_create(name=REVIEWERS)[0])
        people.append(person)
    # The second person's agent holds one page, given before any grant could refuse it.
    _agent, set_token = agent_services.agent_create(
        actor=SystemActor("tests"),
        name="set-bot",
        owner=people[1],
        pages=[pages[wiki.set_page]],
        can_edit_pages=True,
    )
    _agent, all_token = agent_services.agent_create(
        actor=SystemActor("tests"), name="all-bot", owner=people[0], all_pages=True
    )
    _agent, ownerless = agent_services.agent_create(
        actor=SystemActor("tests"), name="nobodys-bot", all_pages=True
    )
    for page, groups, decide in zip(pages, wiki.grants, wiki.decide, strict=True):
        rights = ["read", "decide"] if decide else ["read"]
        if groups:
            permissions.grants_set(
                actor=admin, page=page, grants=[(name, rights) for name in sorted(groups)]
            )
    version_propose(actor=admin, page=pages[wiki.proposed], body="Proposed text.\n", publish=False)
    can = {
        (n, i): permissions.can(person, permissions.READ, page)
        for n, person in enumerate(people)
        for i, page in enumerate(pages)
    }
    free = {i for i, page in enumerate(pages) if not _restricted(page)}
    readers = [
        Reader(f"person{n}", {i for i in range(len(pages)) if can[n, i]}, person=person)
        for n, person in enumerate(people)
    ]
    under_set = {i for i, page in enumerate(pages) if _under(pages[wiki.set_page], page)}
    readers += [
        Reader("set-bot", readers[1].readable & under_set, token=set_token, entry=wiki.set_page),
        Reader("all-bot", set(readers[0].readable), token=all_token),
        Reader("nobodys-bot", free, token=ownerless),
    ]
    owners = {"set-bot": 1, "all-bot": 0, "nobodys-bot": None}
    for reader in readers:
        reader.proposed = wiki.proposed
        owner = owners.get(reader.name)
        sees = (
            reader.readable
            if reader.token is None
            else (readers[owner].readable if owner is not None else free)
        )
        for i in reader.readable:
            reader.shown[i] = _shown(
                pages, i, sees, pages[reader.entry] if reader.entry is not None else None
            )
    return pages, readers


def _under(root: Page, page: Page) -> bool:
    return page.path == root.path or page.path.startswith(root.path + "/")


def _restricted(page: Page) -> bool:
    """Whether a read grant applies to the page (an agent with no owner may not read it)."""
    return PageGrant.objects.filter(
        read=True, page__path__in=permissions.ancestor_paths(page.path)
    ).exists()


def _shown(pages: list[Page], index: int, sees: set[int], entry: Page | None) -> str:
    """The path of page `index` as a reader who may read `sees` is shown it: from below the
    deepest page on it they may not read, and from their entry at the highest."""
    by_path = {page.path: n for n, page in enumerate(pages)}
    parts = pages[index].path.split("/")
    start = 0
    for depth in range(len(parts) - 1):
        if by_path["/".join(parts[: depth + 1])] not in sees:
            start = depth + 1
    if entry is not None:
        start = max(start, entry.path.count("/"))
    return "/".join(parts[start:])


def _forbidden(pages: list[Page], reader: Reader) -> list[str]:
    return [
        word
        for n, page in enumerate(pages)
        if n not in reader.readable
        for word in (WORDS[n], page.slug, page.public_id)
    ]


def _check(answer: Any, forbidden: list[str], where: str) -> None:
    text = (answer if isinstance(answer, str) else json.dumps(answer)).lower()
    for word in forbidden:
        at = text.find(word.lower())
        assert at < 0, f"{where}: {word!r} in {text[max(0, at - 200) : at + 80]}"


def _ask_as_person(pages: list[Page], reader: Reader, forbidden: list[str]) -> None:
    assert reader.person is not None
    client = Client()
    client.force_login(reader.person)
    visible = [pages[n] for n in sorted(reader.readable)]
    listed = client.get("/api/v1/pages/").json()["results"]
    assert {row["pageId"]: row["path"] for row in listed} == {
        pages[n].public_id: reader.shown[n] for n in reader.readable
    }
    for row in listed:
        if row["parentId"] is not None:  # the parent is named only when it is shown
            assert reader.shown[_index(pages, row["pageId"])].count("/") >= 1
    answers: dict[str, Any] = {"list": listed}
    urls = [
        "/api/v1/pages/?q=text",
        "/api/v1/reviews/",
        "/",
        "/search/?q=text",
        "/reviews/",
        "/inbox/",
    ]
    urls += ["/pages/pick/?q=hx", "/pages/pick/?q="]
    # Probes by the names of the pages they may not read find nothing.
    urls += [f"/pages/pick/?q={WORDS[n]}" for n in range(len(pages)) if n not in reader.readable]
    for page in visible:
        urls += [f"/api/v1/pages/{page.public_id}/", f"/api/v1/pages/?parent={page.public_id}"]
        urls += [f"/p/{page.public_id}/", f"/reviews/pages/{page.public_id}/history/"]
        urls += [f"/api/v1/pages/{page.public_id}/versions/1/"]
    proposed = pages[reader.proposed]
    if reader.proposed in reader.readable:  # the review page of the proposal waiting there
        urls += [f"/reviews/pages/{proposed.public_id}/v2/"]
        urls += [f"/api/v1/pages/{proposed.public_id}/versions/2/"]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        answers[url] = response.content.decode()
    for page in pages:
        if pages.index(page) not in reader.readable:
            assert client.get(f"/api/v1/pages/{page.public_id}/").status_code == 404
    for where, answer in answers.items():
        _check(answer, forbidden, f"{reader.name} {where}")


def _ask_mail(pages: list[Page], reader: Reader, forbidden: list[str]) -> None:
    """The review request mail to a person names only pages they may read."""
    for asked in Notification.objects.filter(recipient=reader.person):
        message = compose(asked)
        if message is not None:
            _check(f"{message.subject}\n{message.body}", forbidden, f"{reader.name} mail")


def _ask_chats(pages: list[Page], proposed: int) -> None:
    """No post to a group's chat names a page the group itself may not read; a proposal on a
    page no grant restricts is posted to Reviewers' chat."""
    posts = list(WebhookPost.objects.select_related("webhook__group"))
    accesses = [permissions.access_at(page) for page in pages]
    for post in posts:
        group = post.webhook.group.name  # type: ignore[union-attr]
        hidden = [
            word
            for n, page in enumerate(pages)
            if not permissions.group_holds(group, permissions.READ, accesses[n])
            for word in (WORDS[n], page.slug, page.public_id)
        ]
        _check(post.text, hidden, f"{group}'s chat")
    if not _restricted(pages[proposed]) and accesses[proposed].source(permissions.DECIDE) is None:
        assert [post.webhook.group.name for post in posts] == [REVIEWERS]  # type: ignore[union-attr]


def _index(pages: list[Page], public_id: str) -> int:
    return next(n for n, page in enumerate(pages) if page.public_id == public_id)


def _ask_as_agent(client: Client, pages: list[Page], reader: Reader, forbidden: list[str]) -> None:
    assert reader.token is not None

    def call(tool: str, **arguments: Any) -> Any:
        result = rpc_tool(client, reader.token or "", tool, **arguments)
        assert not result.get("isError"), (reader.name, tool, arguments, result)
        _check(result, forbidden, f"{reader.name} {tool} {arguments}")
        return result["structuredContent"]

    browsed = call("browse")
    assert {row["pageId"]: row["path"] for row in browsed["pages"]} == {
        pages[n].public_id: reader.shown[n] for n in reader.readable
    }
    call("search_pages", query="text about")
    call("recent_activity")
    for n in reader.readable:
        page = pages[n]
        assert call("get_page", pageId=page.public_id)["path"] == reader.shown[n]
        under = call("browse", under=reader.shown[n])
        assert page.public_id in {row["pageId"] for row in under["pages"]}
        if reader.name == "set-bot":  # it edits: its source shows the parent it may see
            source = call("get_page_source", pageId=page.public_id)
            assert source["path"] == reader.shown[n]
            assert (source["parentId"] is None) == ("/" not in reader.shown[n])
    for n, page in enumerate(pages):
        if n not in reader.readable:
            hidden = rpc_tool(client, reader.token, "browse", under=page.path)
            if not hidden.get("isError"):  # a path it is shown too may name another page
                _check(hidden, forbidden, f"{reader.name} browse under {page.path}")


@pytest.mark.usefixtures("fresh_rate_limits")
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(wiki=wikis())
def test_no_door_names_a_page_its_reader_may_not_read(
    wiki: Wiki, client: Client, settings: Any
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 100_000
    with transaction.atomic():
        admin = User.objects.create_superuser("ada", "ada@example.com", "correct-horse")
        pages, readers = build(wiki, admin)
        for reader in readers:
            forbidden = _forbidden(pages, reader)
            if reader.person is not None:
                _ask_as_person(pages, reader, forbidden)
                _ask_mail(pages, reader, forbidden)
            else:
                _ask_as_agent(client, pages, reader, forbidden)
        _ask_chats(pages, wiki.proposed)
        transaction.set_rollback(True)
