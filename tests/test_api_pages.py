"""REST API reads: pages (search, tag, parent), the live page, versions with diffs, auth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from agents.models import Agent
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from tests.fixtures_web import rest_client
from wiki import services as wiki_services
from wiki.models import Page


def _error(response: Any) -> dict[str, Any]:
    body: dict[str, Any] = response.json()["error"]
    return body


def test_it_answers_401_with_a_json_error_without_credentials(db: None) -> None:
    response = APIClient().get("/api/v1/pages/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert _error(response)["code"] == "not_authenticated"
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert bad.get("/api/v1/pages/").status_code == 401


def test_it_accepts_a_browser_session(make_page: Callable[..., Page], reader: User) -> None:
    make_page("Session")
    client = APIClient()
    client.force_login(reader)
    assert client.get("/api/v1/pages/").json()["count"] == 1


def test_it_lists_live_pages_filtered_by_tag_and_parent(
    make_page: Callable[..., Page], reader: User, proposing_agent: Agent, editor: User
) -> None:
    tools = make_page("Tools", tags=["handbook"])
    slack = make_page("Slack", parent=tools, tags=["chat", "handbook"])
    make_page("Email", parent=tools, tags=["mail"])
    archived = make_page("Old", tags=["chat"])
    wiki_services.page_archive(actor=editor, page=archived)
    page_create(actor=proposing_agent, title="Not live yet", body="x", tags=["chat"])
    api = rest_client(reader)
    everything = api.get("/api/v1/pages/").json()
    assert [p["title"] for p in everything["results"]] == ["Tools", "Email", "Slack"]
    assert everything["results"][2] == {
        "pageId": slack.public_id,
        "title": "Slack",
        "path": "tools/slack",
        "tags": ["chat", "handbook"],
        "parentId": tools.public_id,
        "versionNumber": 1,
        "updated": everything["results"][2]["updated"],
    }
    chat = api.get("/api/v1/pages/", {"tag": "chat"}).json()["results"]
    assert [p["pageId"] for p in chat] == [slack.public_id]
    children = api.get("/api/v1/pages/", {"parent": tools.public_id}).json()["results"]
    # In the tree's order: a new page goes last among its siblings.
    assert [p["title"] for p in children] == ["Slack", "Email"]


def test_it_searches_with_q(make_page: Callable[..., Page], reader: User) -> None:
    make_page("Refund policy", "How refunds work.\n")
    make_page("Shipping", "Parcels and a note on refund timing.\n")
    make_page("Holidays", "Nothing relevant.\n")
    results = rest_client(reader).get("/api/v1/pages/", {"q": "refund"}).json()["results"]
    assert [p["title"] for p in results][:1] == ["Refund policy"]
    assert "Holidays" not in [p["title"] for p in results]


def test_it_returns_the_live_version_with_sanitised_html(
    make_page: Callable[..., Page], reader: User
) -> None:
    page = make_page("Live", "# Hello\n\n<script>alert(1)</script>\n\n**bold**\n", tags=["x"])
    version_propose(actor=reader, page=page, body="pending, not live\n")
    data = rest_client(reader).get(f"/api/v1/pages/{page.public_id}/").json()
    assert data["markdown"] == "# Hello\n\n<script>alert(1)</script>\n\n**bold**\n"
    assert "<strong>bold</strong>" in data["html"] and "<script" not in data["html"]
    assert (data["versionNumber"], data["tags"], data["path"]) == (1, ["x"], "live")


def test_it_answers_404_for_archived_unpublished_and_unknown_pages(
    make_page: Callable[..., Page], reader: User, editor: User, proposing_agent: Agent
) -> None:
    archived = make_page("Archived")
    wiki_services.page_archive(actor=editor, page=archived)
    draft = page_create(actor=proposing_agent, title="Draft", body="x").page
    api = rest_client(reader)
    for page_id in (archived.public_id, draft.public_id, "pg_zzzzzzzz", "nonsense"):
        response = api.get(f"/api/v1/pages/{page_id}/")
        assert response.status_code == 404
        assert _error(response)["code"] == "not_found"


def test_it_lists_versions_and_shows_one_with_its_diffs(
    make_page: Callable[..., Page], reader: User, editor: User, proposing_agent: Agent
) -> None:
    page = make_page("Versions", "one\ntwo\n")
    proposal = version_propose(
        actor=proposing_agent, page=page, body="one\ntwo\nthree\n", change_summary="Add three"
    )
    version_propose(actor=editor, page=page, body="one\n2\n", publish=True)
    # A reader sees what went live; the agent's proposal is for editors and reviewers.
    seen = rest_client(reader).get(f"/api/v1/pages/{page.public_id}/versions/").json()["results"]
    assert [v["number"] for v in seen] == [3, 1]
    api = rest_client(editor)
    listed = api.get(f"/api/v1/pages/{page.public_id}/versions/").json()["results"]
    assert [(v["number"], v["status"], v["live"], v["stale"]) for v in listed] == [
        (3, "approved", True, False),
        (2, "in_review", False, True),
        (1, "approved", False, False),
    ]
    assert listed[1]["author"] == {"kind": "agent", "name": "docs-bot"}
    assert listed[0]["decidedBy"] == "edna"
    detail = api.get(f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/").json()
    assert detail["markdown"] == "one\ntwo\nthree\n"
    assert detail["changeSummary"] == "Add three"
    assert detail["diffAgainstBase"].splitlines() == [
        "--- v1",
        "+++ v2",
        "@@ -1,2 +1,3 @@",
        " one",
        " two",
        "+three",
    ]
    assert detail["diffAgainstLive"].splitlines() == [
        "--- v3 (live)",
        "+++ v2",
        "@@ -1,2 +1,3 @@",
        " one",
        "-2",
        "+two",
        "+three",
    ]
    missing = api.get(f"/api/v1/pages/{page.public_id}/versions/99/")
    assert missing.status_code == 404 and "no version 99" in _error(missing)["message"]


def test_it_serves_a_valid_openapi_schema_and_local_docs(db: None, reader: User) -> None:
    client = APIClient()
    client.force_login(reader)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert schema["openapi"].startswith("3.")
    paths = set(schema["paths"])
    assert "/api/v1/pages/{page_id}/versions/{number}/approve" in paths
    assert "/api/v1/reviews/" in paths
    assert not any(path.startswith("/mcp") for path in paths)
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs and "cdn." not in docs and "unpkg" not in docs
