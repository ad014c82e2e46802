"""What kind of change a proposal is (reviews.classify), from its diff alone, stored when it is
submitted, shown, filtered and sorted in the queue, and kept out of batches by a workflow."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews import batch as batches
from reviews import workflows
from reviews.actions.create import page_create
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.classify import classify_text, labels
from reviews.models import Workflow
from tests.conftest import open_queue, seen_post
from wiki.models import Page, Version, VersionStatus

pytestmark = pytest.mark.django_db

HANDBOOK = """# Refunds

Customers can ask for a refund within 30 days of purchase.

See [the form](https://example.com/refund) to ask.

## Exceptions

Gift cards are not refunded.
"""


@pytest.mark.parametrize(
    ("after", "classes"),
    [
        (HANDBOOK + "\nAsk support if unsure.\n", ["additions"]),
        (HANDBOOK.replace("Customers can ask", "Customers may ask"), ["wording"]),
        (HANDBOOK.replace("within 30 days", "within 14 days"), ["wording", "numbers"]),
        (
            HANDBOOK.replace("https://example.com/refund", "https://evil.example/refund"),
            ["wording", "numbers"],
        ),
        (HANDBOOK.replace("Gift cards are not refunded.\n", ""), ["removal"]),
        (
            HANDBOOK.replace("## Exceptions", "## When we say no"),
            ["wording", "structure"],
        ),
        (
            HANDBOOK.replace(
                "Customers can ask for a refund within 30 days of purchase.",
                "Refunds are decided case by case by the finance team after a written "
                "request explaining what went wrong.",
            ),
            ["rewrite", "numbers"],
        ),
        (
            HANDBOOK.replace("## Exceptions", "## Shipping\n\nFree.\n\n## Exceptions"),
            ["additions", "structure"],
        ),
        (HANDBOOK + "\n## Contact\n\nWrite to us.\n", ["additions"]),
    ],
    ids=[
        "additions",
        "wording",
        "number",
        "link",
        "removal",
        "heading",
        "rewrite",
        "section-between",
        "section-at-end",
    ],
)
def test_it_classes_a_change_from_its_diff_alone(after: str, classes: list[str]) -> None:
    assert classify_text(HANDBOOK, after).classes == classes


def test_it_classes_new_pages_moves_renames_and_sizes() -> None:
    assert classify_text(None, "One.\nTwo.\n").classes == ["new_page"]
    moved = classify_text(HANDBOOK, HANDBOOK, moved=True, renamed=True)
    assert moved.classes == ["move", "structure"]
    assert (moved.lines, moved.size) == (0, "small")
    long = classify_text("a\n" * 50, "b\n" * 50)
    assert (long.lines, long.size) == (100, "large")
    assert labels("numbers wording") == ["numbers, dates, links", "wording"]


def test_it_stores_the_classes_when_a_proposal_is_submitted(
    make_page: Callable[..., Page], reader: User, editor: User
) -> None:
    page = make_page("Refunds", HANDBOOK)
    proposal = version_propose(actor=reader, page=page, body=HANDBOOK.replace("30 days", "60 days"))
    proposal.refresh_from_db()
    assert (proposal.change_classes, proposal.change_lines) == ("wording numbers", 2)
    added = version_propose(actor=editor, page=page, kind="append", body="Ask support if unsure.\n")
    added.refresh_from_db()
    assert added.change_classes == "additions"
    new = page_create(actor=reader, title="New", body="Hello.\n")
    new.refresh_from_db()
    assert (new.change_classes, new.change_lines) == ("new_page", 1)


def _reviewer_client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_shows_filters_and_sorts_the_queue_by_kind_of_change(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", HANDBOOK)
    numbers = version_propose(actor=reader, page=page, body=HANDBOOK.replace("30 days", "60 days"))
    other = make_page("Tone", "We are friendly.\n")
    wording = version_propose(actor=reader, page=other, body="We are very friendly.\n")
    big_page = make_page("Big", "".join(f"Rule {n}.\n" for n in range(30)))
    big = version_propose(
        actor=reader, page=big_page, body="".join(f"Rule {n}, changed.\n" for n in range(30))
    )
    client = _reviewer_client(reviewer)

    queue = client.get("/reviews/")
    text = queue.content.decode()
    assert '<span class="rv-badge rv-class rv-class-risky" title="A number, date' in text
    assert ">numbers, dates, links</span>" in text and ">large</span>" in text
    low_risk = {row.version.pk for row in queue.context["rows"] if row.low_risk}
    assert low_risk == {wording.pk}  # the number change and the long rewrite are not

    only_numbers = client.get("/reviews/?change=numbers").context["rows"]
    assert [row.version.pk for row in only_numbers] == [numbers.pk]
    largest = client.get("/reviews/?order=large").context["rows"]
    assert [row.version.pk for row in largest] == [big.pk, numbers.pk, wording.pk]
    smallest = client.get("/reviews/?order=small").context["rows"]
    # Two lines each: the older first.
    assert [row.version.pk for row in smallest] == [numbers.pk, wording.pk, big.pk]
    # An unknown kind is no filter.
    assert len(client.get("/reviews/?change=nonsense").context["rows"]) == 3

    review_page = client.get(f"/reviews/pages/{page.public_id}/v{numbers.number}/")
    assert 'aria-label="Kind of change"' in review_page.content.decode()
    api = client.get(f"/api/v1/pages/{page.public_id}/versions/{numbers.number}/").json()
    assert api["change"] == {
        "classes": ["wording", "numbers"],
        "labels": ["wording", "numbers, dates, links"],
        "lines": 2,
        "size": "small",
    }


def test_it_keeps_kinds_a_workflow_names_out_of_batches(
    make_page: Callable[..., Page], admin_user: User, reader: User, reviewer: User
) -> None:
    section = make_page("Policies", "All.\n")
    admin = _reviewer_client(admin_user)
    created = admin.post(
        "/api/v1/workflows/",
        {
            "name": "Careful",
            "steps": [{"name": "Review", "group": "Reviewers"}],
            "neverInBatch": ["numbers", "removal"],
        },
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["neverInBatch"] == ["removal", "numbers"]
    workflow_id = created.json()["id"]
    bad = admin.put(
        f"/api/v1/workflows/{workflow_id}/",
        {"name": "Careful", "steps": [{"group": "Reviewers"}], "neverInBatch": ["typos"]},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assigned = admin.post(
        f"/api/v1/workflows/{workflow_id}/pages/",
        {"pageId": section.public_id},
        content_type="application/json",
    )
    assert assigned.status_code in (200, 201), assigned.content
    refunds = make_page("Refunds", HANDBOOK, parent=section)
    tone = make_page("Tone", "We are friendly.\n", parent=section)
    numbers = version_propose(
        actor=reader, page=refunds, body=HANDBOOK.replace("30 days", "60 days")
    )
    wording = version_propose(actor=reader, page=tone, body="We are very friendly.\n")
    open_queue(_reviewer_client(reviewer))

    with pytest.raises(batches.BatchRefused) as refused:
        batches.versions_decide_batch(
            actor=reviewer,
            items=[batches.BatchItem(numbers), batches.BatchItem(wording)],
            decision="approve",
        )
    [item] = refused.value.detail["refused"]
    assert item["versionNumber"] == numbers.number
    assert "never approves numbers, dates, links in a batch" in item["reason"]
    # On its own page, one at a time, it is approved as ever; the wording one in a batch.
    batches.versions_decide_batch(
        actor=reviewer, items=[batches.BatchItem(wording)], decision="approve"
    )
    version_approve(actor=reviewer, version=numbers)
    assert Version.objects.get(pk=numbers.pk).status == VersionStatus.APPROVED


def test_it_keeps_kinds_out_of_batches_from_the_workflow_screen(
    admin_user: User, reviewer: User
) -> None:
    admin = _reviewer_client(admin_user)
    answer = admin.post(
        "/reviews/workflows/",
        {
            "name": "Careful",
            "step_1_name": "Review",
            "step_1_group": "Reviewers",
            "step_1_approvals": "1",
            "never_in_batch": ["structure", "move"],
        },
    )
    assert answer.status_code == 302
    workflow = Workflow.objects.get(name="Careful")
    assert workflow.never_in_batch == ["move", "structure"]
    screen = admin.get(f"/reviews/workflows/{workflow.pk}/").content.decode()
    assert 'id="never-move" name="never_in_batch" value="move" checked' in screen


def test_select_low_risk_leaves_out_kinds_the_workflow_keeps_out_of_batches(
    make_page: Callable[..., Page], admin_user: User, reader: User, reviewer: User
) -> None:
    """Issue 48: "Select the low-risk ones" ticked a wording change that the page's workflow
    never approves in a batch, so the batch it made was refused whole."""
    section = make_page("Careful", "Careful.\n")
    careful = workflows.workflow_create(
        actor=admin_user,
        name="Careful wording",
        steps=[{"group": "Reviewers"}],
        never_in_batch=["wording"],
    )
    workflows.workflow_assign(actor=admin_user, workflow=careful, page=section)
    kept_out = version_propose(
        actor=reader,
        page=make_page("Tone", "We are friendly.\n", parent=section),
        body="We are very friendly.\n",
    )
    elsewhere = version_propose(
        actor=reader, page=make_page("Voice", "We are calm.\n"), body="We are very calm.\n"
    )
    client = _reviewer_client(reviewer)

    queue = client.get("/reviews/")
    seen_post(client, queue.content.decode())

    rows = {row.version.pk: row for row in queue.context["rows"]}
    assert "wording" in kept_out.change_classes.split()
    assert rows[elsewhere.pk].low_risk and not rows[kept_out.pk].low_risk
    text = queue.content.decode()
    assert text.count("data-low-risk") == 1
    # Ticked by hand and sent anyway: refused, saying why, and nothing decided.
    answer = client.post(
        "/reviews/decide/",
        {
            "item": [f"{v.page.public_id}:{v.number}:1" for v in (elsewhere, kept_out)],
            "decision": "approve",
            "return_to": "/reviews/",
        },
        follow=True,
    )
    assert "never approves wording in a batch" in answer.content.decode()
    assert Version.objects.get(pk=elsewhere.pk).status == VersionStatus.IN_REVIEW
