"""Creating and editing pages in the browser: editors publish, everyone else proposes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from reviews.merge import is_stale
from tests.conftest import live
from wiki import services as wiki_services
from wiki.models import Page, Version, VersionStatus

ClientAs = Callable[[User], Client]


def form(**overrides: Any) -> dict[str, Any]:
    data = {
        "title": "Expenses",
        "body": "Claim expenses within **30 days**.\n",
        "tags": "finance, how-to",
        "instructions": "",
        "change_summary": "First draft.",
    }
    data.update(overrides)
    return data


def rows() -> tuple[int, int]:
    return Page.objects.count(), Version.objects.count()


def test_it_publishes_a_new_page_by_an_editor(editor: User, client_as: ClientAs) -> None:
    client = client_as(editor)
    response = client.post(reverse("wiki:new"), form(), follow=True)
    page = Page.objects.get(title="Expenses")
    assert live(page).status == VersionStatus.APPROVED
    assert page.tags == ["finance", "how-to"]
    assert "Published “Expenses”" in response.content.decode()
    assert "<strong>30 days</strong>" in response.content.decode()


def test_it_sends_a_new_page_by_a_reader_to_review(
    reader: User, outsider: User, client_as: ClientAs
) -> None:
    response = client_as(reader).post(reverse("wiki:new"), form(), follow=True)
    page = Page.objects.get(title="Expenses")
    assert page.live_version is None
    assert page.versions.get().status == VersionStatus.IN_REVIEW
    assert "Submitted “Expenses” for review" in response.content.decode()
    other = client_as(outsider)
    assert "Expenses" not in other.get(reverse("wiki:home")).content.decode()
    assert "30 days" not in other.get(reverse("wiki:page", args=[page.public_id])).content.decode()


def test_it_creates_a_child_page_under_its_parent(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    parent = make_page("Finance")
    url = reverse("wiki:new_child", kwargs={"public_id": parent.public_id})
    assert client_as(editor).post(url, form()).status_code == 302
    child = Page.objects.get(title="Expenses")
    assert child.parent == parent
    assert child.path == "finance/expenses"


def test_it_publishes_an_edit_by_an_editor(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    client = client_as(editor)
    assert 'value="1"' in client.get(url).content.decode()  # the base version travels along
    response = client.post(url, form(body="New rule.\n", base_number=1))
    assert response.status_code == 302
    assert live(page).body == "New rule.\n"
    assert live(page).number == 2


def test_it_turns_an_edit_by_a_reader_into_a_proposal(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    response = client_as(reader).post(
        url, form(body="Reader's rule.\n", base_number=1), follow=True
    )
    assert live(page).body == "Old rule.\n"
    proposal = page.versions.get(number=2)
    assert proposal.status == VersionStatus.IN_REVIEW
    assert proposal.author_user == reader
    assert proposal.body == "Reader's rule.\n"
    html = response.content.decode()
    assert "submitted for review as v2" in html
    assert "Old rule." in html and "Reader&#x27;s rule." not in html


def test_it_starts_the_form_from_the_readers_own_proposal(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    version_propose(actor=reader, page=page, body="My pending rule.\n")
    html = client_as(reader).get(reverse("wiki:edit", args=[page.public_id])).content.decode()
    assert "My pending rule." in html
    assert "This form starts from your proposal v2" in html


def test_it_starts_the_form_from_the_live_version_for_anyone_but_the_author(
    make_page: Callable[..., Page], reader: User, outsider: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    version_propose(actor=reader, page=page, body="My pending rule.\n")
    html = client_as(outsider).get(reverse("wiki:edit", args=[page.public_id])).content.decode()
    assert "Old rule." in html
    assert "My pending rule." not in html and "starts from your proposal" not in html
    page_html = client_as(outsider).get(reverse("wiki:page", args=[page.public_id])).content
    assert b"yours is v2" not in page_html


def test_it_shows_the_conflict_when_an_editor_saves_over_an_overlapping_newer_version(
    make_page: Callable[..., Page], editor: User, admin_user: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    version_propose(actor=admin_user, page=page, body="Admin's rule.\n", publish=True)
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    response = client_as(editor).post(url, form(body="Editor's rule.\n", base_number=1))
    assert response.status_code == 200
    html = response.content.decode()
    assert "v2 was published while you were editing v1" in html
    # The form holds both edits, marked, ready to resolve against v2.
    assert "&lt;&lt;&lt;&lt;&lt;&lt;&lt; live" in html and "Admin&#x27;s rule." in html
    assert "Editor&#x27;s rule." in html
    assert live(page).body == "Admin's rule.\n"
    assert page.versions.count() == 2
    # Saving the markers as they are is refused; resolving them publishes over v2.
    again = client_as(editor).post(
        url,
        form(body="<<<<<<< live\nA\n=======\nB\n>>>>>>> proposal\n", base_number=2)
        | {"resolving": "1"},
    )
    assert "still has conflict markers" in again.content.decode()
    assert page.versions.count() == 2
    client_as(editor).post(url, form(body="Both rules.\n", base_number=2) | {"resolving": "1"})
    assert live(page).body == "Both rules.\n"


def test_it_merges_an_editors_save_with_a_newer_version_that_changed_other_lines(
    make_page: Callable[..., Page], editor: User, admin_user: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "# Expenses\n\nRule one.\n\nRule two.\n")
    version_propose(
        actor=admin_user,
        page=page,
        body="# Expenses\n\nRule one, revised.\n\nRule two.\n",
        publish=True,
    )
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    response = client_as(editor).post(
        url,
        form(body="# Expenses\n\nRule one.\n\nRule two, by the editor.\n", base_number=1),
        follow=True,
    )
    assert "merged with theirs" in response.content.decode()
    version = live(page)
    assert version.number == 3 and version.merged
    assert version.body == "# Expenses\n\nRule one, revised.\n\nRule two, by the editor.\n"


def test_it_keeps_the_base_of_a_late_proposal_so_the_reviewer_sees_it_stale(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    version_propose(actor=editor, page=page, body="Editor's rule.\n", publish=True)
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    client_as(reader).post(url, form(body="Reader's rule.\n", base_number=1))
    proposal = Version.objects.select_related("page").get(page=page, number=3)
    assert proposal.base_version is not None and proposal.base_version.number == 1
    assert is_stale(proposal)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "x" * 201, "Title must be 1 to 200 characters; it has 201"),
        ("tags", ", ".join(f"tag{n}" for n in range(21)), "at most 20 tags; you gave 21"),
        ("body", "y" * 200_001, "at most 200,000 characters; it has 200,001"),
    ],
)
def test_it_refuses_bad_input_to_a_new_page_with_a_message_in_the_form(
    editor: User, client_as: ClientAs, field: str, value: str, message: str
) -> None:
    before = rows()
    response = client_as(editor).post(reverse("wiki:new"), form(**{field: value}))
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html
    assert 'class="field-error"' in html
    assert rows() == before


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "x" * 201, "Title must be 1 to 200 characters; it has 201"),
        ("tags", ", ".join(f"tag{n}" for n in range(21)), "at most 20 tags; you gave 21"),
        ("body", "y" * 200_001, "at most 200,000 characters; it has 200,001"),
    ],
)
def test_it_refuses_bad_input_to_an_edit_with_a_message_in_the_form(
    make_page: Callable[..., Page],
    reader: User,
    client_as: ClientAs,
    field: str,
    value: str,
    message: str,
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    before = rows()
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    response = client_as(reader).post(url, form(**{field: value}, base_number=1))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert rows() == before


def test_it_says_when_an_edit_changes_nothing(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Same.\n", tags=["finance"])
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    response = client_as(editor).post(
        url, form(body="Same.\n", tags="finance", base_number=1, change_summary="")
    )
    assert response.status_code == 200
    assert "This is identical to the live version" in response.content.decode()
    assert page.versions.count() == 1


def test_it_refuses_to_edit_an_archived_page(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses")
    wiki_services.page_archive(actor=editor, page=page)
    url = reverse("wiki:edit", kwargs={"public_id": page.public_id})
    response = client_as(editor).post(url, form(base_number=1), follow=True)
    assert "Restore it before editing it" in response.content.decode()
    assert page.versions.count() == 1


def test_it_protects_the_forms_with_csrf(editor: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    response = client.post(reverse("wiki:new"), form())
    assert response.status_code == 403
    assert not Page.objects.exists()


def test_it_turns_an_addition_by_a_reader_into_an_append_proposal(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    url = reverse("wiki:append", kwargs={"public_id": page.public_id})
    response = client_as(reader).post(url, {"body": "One more rule.\n", "change_summary": "More"})
    assert response.status_code == 302
    proposal = page.versions.get(number=2)
    assert proposal.kind == "append"
    assert proposal.status == VersionStatus.IN_REVIEW
    assert proposal.proposed_body == "One more rule.\n"
    assert live(page).body == "Old rule.\n"


def test_it_publishes_an_addition_by_an_editor_at_the_end(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses", "Old rule.\n")
    url = reverse("wiki:append", kwargs={"public_id": page.public_id})
    client_as(editor).post(url, {"body": "One more rule.\n"})
    assert live(page).body == "Old rule.\n\nOne more rule.\n"


def test_it_asks_for_text_in_an_empty_addition(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Expenses")
    url = reverse("wiki:append", kwargs={"public_id": page.public_id})
    response = client_as(reader).post(url, {"body": ""})
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert page.versions.count() == 1


def test_it_refuses_to_edit_a_page_in_review_for_someone_else(
    reader: User, outsider: User, client_as: ClientAs
) -> None:
    version = page_create(actor=reader, title="Draft", body="Draft text.\n")
    url = reverse("wiki:edit", kwargs={"public_id": version.page.public_id})
    response = client_as(outsider).get(url)
    # Someone else's page not live yet is no page at all for the outsider.
    assert response.status_code == 404
    assert b"Draft text." not in response.content
