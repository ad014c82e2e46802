"""Where a review workflow applies, nobody publishes around it (issue 36, point 1): an
editor's change there is a proposal like anyone's, and a move across the workflow's border
is a change the stricter workflow reviews (the move screen offers to propose it)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from core.errors import Forbidden
from reviews import workflows
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from tests.conftest import live
from wiki import services as wiki_services
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.django_db

ClientAs = Callable[[User], Client]
LEGAL_THEN_REVIEWERS = [
    {"name": "Legal", "group": "Legal", "approvals": 2},
    {"name": "Final check", "group": REVIEWERS, "approvals": 1},
]


@pytest.fixture
def section(
    make_page: Callable[..., Page], make_user: Callable[..., User], admin_user: User
) -> dict[str, Page]:
    """A Legal section with a page in it, assigned "Legal x2, then Reviewers x1" by the admin
    after it was written, and a page outside it."""
    legal = make_page("Legal", "The legal section.\n")
    nda = make_page("NDA", "Sign before day one.\n", parent=legal)
    outside = make_page("Handbook", "Welcome.\n")
    for name in ("lena", "luis"):
        make_user(name, "Legal")
    flow = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=LEGAL_THEN_REVIEWERS
    )
    workflows.workflow_assign(actor=admin_user, workflow=flow, page=legal)
    return {"legal": legal, "nda": nda, "outside": outside}


def edit_form(body: str, base: int) -> dict[str, object]:
    return {
        "title": "NDA",
        "body": body,
        "tags": "",
        "instructions": "",
        "change_summary": "Tighter.",
        "base_number": base,
    }


def test_it_turns_an_editors_browser_edit_under_a_workflow_into_a_proposal(
    section: dict[str, Page], editor: User, client_as: ClientAs
) -> None:
    nda = section["nda"]
    client = client_as(editor)
    url = reverse("wiki:edit", kwargs={"public_id": nda.public_id})
    screen = client.get(url).content.decode()
    assert "Submit for review" in screen or "Propose" in screen
    response = client.post(url, edit_form("Sign before you start.\n", 1), follow=True)
    assert response.status_code == 200
    assert live(nda).body == "Sign before day one.\n"
    proposal = Version.objects.get(page=nda, number=2)
    assert proposal.status == VersionStatus.IN_REVIEW
    assert proposal.review.workflow_name == "Legal review"
    assert "Changes are reviewed by" in response.content.decode()


def test_it_refuses_an_editors_direct_publish_under_a_workflow_in_the_service(
    section: dict[str, Page], editor: User, admin_user: User
) -> None:
    for person in (editor, admin_user):
        with pytest.raises(Forbidden, match="“Legal review” review workflow applies here"):
            version_propose(actor=person, page=section["nda"], body="Gone.\n", publish=True)
        with pytest.raises(Forbidden, match="submit a proposal instead"):
            page_create(
                actor=person, title="Side letter", body="x\n", parent=section["legal"], publish=True
            )
    assert live(section["nda"]).body == "Sign before day one.\n"


def test_it_makes_a_new_page_by_an_editor_in_the_section_a_proposal(
    section: dict[str, Page], editor: User, client_as: ClientAs
) -> None:
    legal = section["legal"]
    url = reverse("wiki:new_child", kwargs={"public_id": legal.public_id})
    data = {**edit_form("Never.\n", 0), "title": "Side letters"}
    del data["base_number"]
    client_as(editor).post(url, data)
    made = Version.objects.get(title="Side letters")
    assert made.status == VersionStatus.IN_REVIEW
    assert made.review.workflow_name == "Legal review"


def test_it_refuses_to_move_a_page_out_of_the_section_and_offers_a_proposal(
    section: dict[str, Page], editor: User, client_as: ClientAs, make_user: Callable[..., User]
) -> None:
    nda, outside = section["nda"], section["outside"]
    client = client_as(editor)
    url = reverse("wiki:move", kwargs={"public_id": nda.public_id})
    refused = client.post(url, {"parent": outside.public_id})
    assert refused.status_code == 403
    text = refused.content.decode()
    assert "crosses the border of the “Legal review” review workflow" in text
    assert "Propose this move" in text
    nda.refresh_from_db()
    assert nda.path == "legal/nda"
    with pytest.raises(Forbidden, match="crosses the border"):
        wiki_services.page_move(actor=editor, page=nda, parent=None)

    # The proposal goes through Legal review, the stricter of the two.
    proposed = client.post(
        reverse("wiki:propose_move", kwargs={"public_id": nda.public_id}),
        {"parent": outside.public_id},
        follow=True,
    )
    assert "The “Legal review” workflow reviews it." in proposed.content.decode()
    proposal = Version.objects.get(page=nda, status=VersionStatus.IN_REVIEW)
    assert proposal.parent_id == outside.pk
    assert proposal.review.workflow_name == "Legal review"
    nda.refresh_from_db()
    assert nda.path == "legal/nda"


def test_it_has_the_stricter_workflow_review_a_move_into_the_section(
    section: dict[str, Page], editor: User, reader: User
) -> None:
    outside = section["outside"]
    with pytest.raises(Forbidden, match="crosses the border"):
        wiki_services.page_move(actor=editor, page=outside, parent=section["legal"])
    proposal = version_propose(actor=reader, page=outside, parent=section["legal"])
    assert proposal.review.workflow_name == "Legal review"
    assert [step["group"] for step in proposal.review.steps] == ["Legal", REVIEWERS]


def test_it_still_moves_a_page_directly_where_no_border_is_crossed(
    section: dict[str, Page], make_page: Callable[..., Page], editor: User
) -> None:
    guides = make_page("Guides", "All guides.\n")
    wiki_services.page_move(actor=editor, page=section["outside"], parent=guides)
    moved = Page.objects.get(pk=section["outside"].pk)
    assert moved.path == "guides/handbook"
