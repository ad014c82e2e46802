"""The three forms of wiki.permissions agree (issue 46, point 1): for random small trees with
grants (and a review workflow now and then), people in and out of groups (admins, deactivated
people among them) and agents with and without owners (may edit or not, revoked or not), for
each of the four rights, the Python form (`can`, page by page), the SQL form (`pages_where`:
which pages) and the users form (`people_holding`, and `people_with` page by page: who) give
the same answer; for reading, so does the reader's Scope (wiki.scope), which search, browse
and the tree filter by.

Each example is built inside a transaction rolled back at its end, so examples never meet.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group, User
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.models import Agent
from agents.selectors import owner_reader
from reviews.models import Workflow, WorkflowAssignment
from wiki import permissions
from wiki.models import RIGHTS, Page, PageGrant
from wiki.roles import EDITORS, REVIEWERS
from wiki.scope import EVERYTHING, person_scope

pytestmark = pytest.mark.django_db

GROUPS = ("Legal", "Staff", "HR", EDITORS, REVIEWERS)
MAX_PAGES = 6


@dataclass(frozen=True)
class World:
    parents: list[int | None]  # page i's parent (an earlier page), or None: top level
    grants: dict[tuple[int, str], frozenset[str]]  # (page, group) -> rights
    workflow_on: int | None
    people: list[tuple[frozenset[str], bool, bool]]  # groups, admin, active
    agents: list[tuple[int | None, bool, bool]]  # owner (a person), may edit, active


@st.composite
def worlds(draw: st.DrawFn) -> World:
    size = draw(st.integers(1, MAX_PAGES))
    parents = [None] + [
        draw(st.one_of(st.none(), st.integers(0, index - 1))) for index in range(1, size)
    ]
    grants = draw(
        st.dictionaries(
            st.tuples(st.integers(0, size - 1), st.sampled_from(GROUPS)),
            st.frozensets(st.sampled_from(RIGHTS), min_size=1),
            max_size=5,
        )
    )
    workflow_on = draw(st.one_of(st.none(), st.integers(0, size - 1)))
    people = draw(
        st.lists(
            st.tuples(
                st.frozensets(st.sampled_from(GROUPS), max_size=3),
                st.integers(0, 3).map(lambda n: n == 0),  # admins: rarer
                st.integers(0, 5).map(lambda n: n > 0),  # deactivated: rarer
            ),
            min_size=1,
            max_size=4,
        )
    )
    agents = draw(
        st.lists(
            st.tuples(
                st.one_of(st.none(), st.integers(0, len(people) - 1)),
                st.booleans(),
                st.integers(0, 5).map(lambda n: n > 0),
            ),
            max_size=3,
        )
    )
    return World(parents, grants, workflow_on, people, agents)


def build(world: World) -> tuple[list[Page], list[User], list[Agent]]:
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in GROUPS}
    pages: list[Page] = []
    for index, parent_index in enumerate(world.parents):
        parent = pages[parent_index] if parent_index is not None else None
        slug = f"p{index}"
        pages.append(
            Page.objects.create(
                title=f"P{index}",
                slug=slug,
                path=f"{parent.path}/{slug}" if parent is not None else slug,
                parent=parent,
            )
        )
    for (index, group), rights in world.grants.items():
        PageGrant.objects.create(
            page=pages[index], group=groups[group], **{right: right in rights for right in RIGHTS}
        )
    if world.workflow_on is not None:
        workflow = Workflow.objects.create(name="Generated review")
        WorkflowAssignment.objects.create(page=pages[world.workflow_on], workflow=workflow)
    people = []
    for number, (names, admin, active) in enumerate(world.people):
        person = User.objects.create(
            username=f"person{number}", is_superuser=admin, is_active=active
        )
        person.groups.set([groups[name] for name in names])
        people.append(person)
    agents = [
        Agent.objects.create(
            name=f"agent{number}",
            owner=people[owner] if owner is not None else None,
            can_edit_pages=edits,
            is_active=active,
        )
        for number, (owner, edits, active) in enumerate(world.agents)
    ]
    return pages, people, agents


def check(pages: list[Page], people: list[User], agents: list[Agent]) -> None:
    # Fresh objects, as a request reads them: nothing cached from building.
    pages = list(Page.objects.filter(pk__in=[page.pk for page in pages]).order_by("pk"))
    actors: list[User | Agent] = [User.objects.get(pk=person.pk) for person in people]
    actors += [Agent.objects.select_related("owner").get(pk=agent.pk) for agent in agents]
    for right in RIGHTS:
        holders = permissions.people_holding(right, pages)
        for actor in actors:
            in_python = {page.pk for page in pages if permissions.can(actor, right, page)}
            in_sql = set(
                permissions.pages_where(actor, right)
                .filter(pk__in=[page.pk for page in pages])
                .values_list("pk", flat=True)
            )
            assert in_python == in_sql, (str(actor), right)
            for page in pages:
                refused = permissions.refusal(actor, right, page)
                assert (refused is None) == (page.pk in in_python), (str(actor), right, refused)
            if isinstance(actor, User):
                in_users_form = {page.pk for page in pages if actor.pk in holders[page.pk]}
                assert in_python == in_users_form, (actor.username, right)
            if right == permissions.READ:
                assert in_python == _in_scope(actor, pages), (str(actor), right)
        for page in pages:
            one_page = set(permissions.people_with(right, page).values_list("pk", flat=True))
            assert one_page == holders[page.pk], (page.path, right)


def _in_scope(actor: User | Agent, pages: list[Page]) -> set[int]:
    """The pages the reader's Scope covers (readability aside): wiki.scope's read rule."""
    if isinstance(actor, Agent):
        if not actor.is_active:
            return set()
        scope = EVERYTHING.read_by(owner_reader(actor))
    elif not actor.is_active:
        return set()  # nobody signed in: not a reader at all
    else:
        scope = person_scope(actor)
    found = Page.objects.filter(scope.q(readable=False), pk__in=[page.pk for page in pages])
    return set(found.values_list("pk", flat=True))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(world=worlds())
def test_the_python_sql_and_users_forms_of_the_policy_agree(world: World) -> None:
    with transaction.atomic():
        check(*build(world))
        transaction.set_rollback(True)
