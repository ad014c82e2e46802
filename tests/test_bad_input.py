"""Bad input is refused the same way at every door: MCP tools, REST writes and web forms.

A table of NUL, a lone surrogate, a newline, a bidi override and a 10,000-deep JSON value goes
through every MCP tool, every REST write and every form: never a 500, never database error
text, nothing stored, and an audit row for each MCP call.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from agents.models import Agent, PageSetEntry
from core.errors import InvalidArgument
from core.models import AuditEvent
from reviews.actions.propose import version_propose
from reviews.models import Notification
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki import services as wiki_services
from wiki.models import Attachment, Page, Version

from .fixtures_mcp import MCP, AgentKey

# The MCP tests run against a live server (their fixture makes the database transactional).
pytestmark = pytest.mark.django_db

MakePage = Callable[..., Page]

# Each bad value, and the words an error about it names.
BAD = {
    "nul": ("a\x00b", "U+0000 NULL at position 2"),
    "surrogate": ("a\ud800b", "U+D800 LONE SURROGATE at position 2"),
    "newline": ("a\nb", "U+000A LINE FEED at position 2"),
    "bidi": ("a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE at position 2"),
}
DEPTH = 10_000
DEEP_JSON = "[" * DEPTH + "]" * DEPTH
# What a database or driver error looks like when it leaks into an answer.
DATABASE_TEXT = (
    "PostgreSQL",
    "psycopg",
    "sqlite",
    "DataError",
    "OperationalError",
    "IntegrityError",
    "invalid input syntax",
    "surrogates not allowed",
    "Unicode escape",
    "Traceback",
    "Something went wrong",
)


@pytest.fixture(autouse=True)
def _quick_passwords(settings: Any) -> None:
    """Four people per test: a fast hasher keeps the table quick (no test here logs in)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def stored() -> tuple[Any, ...]:
    """Everything a write could leave behind."""
    return (
        list(Page.objects.order_by("pk").values_list("pk", "title", "archived", "live_version")),
        list(Version.objects.order_by("pk").values_list("pk", "status", "title", "tags")),
        list(Agent.objects.order_by("pk").values_list("pk", "name", "description")),
        list(PageSetEntry.objects.order_by("pk").values_list("pk", "use_when")),
        Attachment.objects.count(),
        Notification.objects.count(),
    )


def assert_no_database_text(text: str) -> None:
    for words in DATABASE_TEXT:
        assert words.lower() not in text.lower(), text


# --- MCP --------------------------------------------------------------------------------------

# (tool, argument): the bad value goes into that argument, the rest is valid.
MCP_TEXT_ARGUMENTS = [
    ("browse", "under"),
    ("search_pages", "query"),
    ("get_page", "pageId"),
    ("get_page_source", "pageId"),
    ("create_page", "title"),
    ("create_page", "markdown"),
    ("create_page", "tags"),
    ("create_page", "parentId"),
    ("create_page", "changeSummary"),
    ("update_page", "pageId"),
    ("update_page", "title"),
    ("update_page", "markdown"),
    ("update_page", "tags"),
    ("update_page", "changeSummary"),
    ("append_to_page", "pageId"),
    ("append_to_page", "markdown"),
    ("append_to_page", "changeSummary"),
]
ONE_LINE_ARGUMENTS = {"title", "tags"}
# What a newline or bidi override gets where text may hold one: prose is fine, an id is unknown.
OTHERWISE = {"pageId": "not_found", "parentId": "not_found", "under": "not_found"}


def mcp_cases() -> list[tuple[str, str, str, str]]:
    """(tool, argument, kind of bad value, expected code: an error code or "ok")."""
    cases = []
    for tool, argument in MCP_TEXT_ARGUMENTS:
        for kind in BAD:
            if kind in ("nul", "surrogate") or argument in ONE_LINE_ARGUMENTS:
                expected = "invalid_argument"
            elif argument in OTHERWISE:
                expected = OTHERWISE[argument]
            elif tool in ("browse", "search_pages"):
                expected = "ok"
            else:
                continue  # a newline in markdown or a summary is content, not bad input
            cases.append((tool, argument, kind, expected))
        cases.append((tool, argument, "deep", "invalid_request"))
    return cases


def valid_arguments(tool: str, page: Page) -> dict[str, Any]:
    return {
        "browse": {},
        "search_pages": {"query": "refunds"},
        "get_page": {"pageId": page.public_id},
        "get_page_source": {"pageId": page.public_id},
        "create_page": {"title": "New page", "markdown": "Text.", "changeSummary": "New."},
        "update_page": {"pageId": page.public_id, "markdown": "Other.", "changeSummary": "Edit."},
        "append_to_page": {"pageId": page.public_id, "markdown": "More.", "changeSummary": "Add."},
    }[tool]


def tools_call_body(tool: str, arguments: dict[str, Any], argument: str, kind: str) -> bytes:
    """The raw JSON-RPC request, so that a lone surrogate and a deep value go out as sent."""
    if kind == "deep":
        arguments = {**arguments, argument: "DEEP"}
    else:
        value = BAD[kind][0]
        arguments = {**arguments, argument: [value] if argument == "tags" else value}
    params = {"name": tool, "arguments": arguments}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    return body.replace('"DEEP"', DEEP_JSON).encode()


@pytest.fixture
def target(make_page: MakePage, editor_agent: AgentKey) -> Page:
    page = make_page("Refunds", "Refunds take five days.\n", tags=["money"])
    editor_agent.give(page)
    return page


@pytest.mark.parametrize(("tool", "argument", "kind", "expected"), mcp_cases())
def test_it_refuses_bad_text_through_every_mcp_tool(
    mcp: MCP,
    editor_agent: AgentKey,
    target: Page,
    tool: str,
    argument: str,
    kind: str,
    expected: str,
) -> None:
    before, audited = stored(), AuditEvent.objects.filter(actor_agent=editor_agent.agent).count()
    body = tools_call_body(tool, valid_arguments(tool, target), argument, kind)

    response = httpx.post(
        mcp.url,
        content=body,
        headers={
            "Authorization": f"Bearer {editor_agent.token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
        timeout=HTTP_TIMEOUT,
        verify=TLS,
    )

    assert response.status_code < 500, response.text
    assert_no_database_text(response.text)
    assert stored() == before
    rows = AuditEvent.objects.filter(actor_agent=editor_agent.agent).order_by("pk")
    assert rows.count() == audited + 1
    row = rows.last()
    assert row is not None
    if kind == "deep":
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32600
        assert "more than 64 levels deep" in error["message"]
        assert (row.action, row.outcome) == ("mcp.request", "invalid_request")
        return
    result = response.json()["result"]
    text = result["content"][0]["text"]
    assert (row.action, row.outcome) == (f"mcp.{tool}", expected)
    if expected == "ok":
        assert not result["isError"], text
        return
    assert result["isError"]
    assert text.startswith(f"{expected}: "), text
    if expected == "invalid_argument":
        words = BAD[kind][1]
        name = f"{argument}[0]" if argument == "tags" else argument
        assert f"{name} has {words}" in text, text


def test_it_audits_a_call_whose_tool_name_holds_a_nul(
    mcp: MCP, editor_agent: AgentKey, target: Page
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a\x00b"}}
    response = httpx.post(
        mcp.url,
        json=body,
        headers={
            "Authorization": f"Bearer {editor_agent.token}",
            "Accept": "application/json, text/event-stream",
        },
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert response.status_code == 200
    text = response.json()["result"]["content"][0]["text"]
    assert text == "Unknown tool: a\ufffdb"
    row = AuditEvent.objects.get(actor_agent=editor_agent.agent)
    assert (row.action, row.outcome) == ("mcp.a\ufffdb", "unknown_tool")


def raw_rpc(mcp: MCP, key: AgentKey, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        mcp.url,
        json=body,
        headers={
            "Authorization": f"Bearer {key.token}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=HTTP_TIMEOUT,
        verify=TLS,
    )


def test_it_answers_an_unknown_json_rpc_method_with_method_not_found(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    response = raw_rpc(mcp, editor_agent, {"jsonrpc": "2.0", "id": 3, "method": "pages/delete"})

    assert response.status_code == 200
    answer = response.json()
    assert answer["id"] == 3
    assert answer["error"]["code"] == -32601
    assert "Method not found: 'pages/delete'" in answer["error"]["message"]
    row = AuditEvent.objects.get(actor_agent=editor_agent.agent)
    assert (row.action, row.outcome) == ("mcp.request", "method_not_found")
    # A known method still reaches the server.
    listed = raw_rpc(mcp, editor_agent, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    assert [t["name"] for t in listed.json()["result"]["tools"]][:1] == ["browse"]


def test_it_refuses_a_request_id_no_answer_could_echo(mcp: MCP, editor_agent: AgentKey) -> None:
    body = '{"jsonrpc": "2.0", "id": "a\\ud800", "method": "tools/list"}'
    response = httpx.post(
        mcp.url,
        content=body.encode(),
        headers={
            "Authorization": f"Bearer {editor_agent.token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
        timeout=HTTP_TIMEOUT,
        verify=TLS,
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    assert "the id holds a NUL or a lone surrogate" in response.json()["error"]["message"]
    row = AuditEvent.objects.get(actor_agent=editor_agent.agent)
    assert (row.action, row.outcome) == ("mcp.request", "invalid_request")


def test_it_counts_calls_to_unknown_tools_toward_the_rate_limit(
    mcp: MCP, reader_agent: AgentKey, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 2
    # A window of days: three calls never straddle the turn of a minute.
    monkeypatch.setattr("agents.mcp_rate.RATE_WINDOW_SECONDS", 1_000_000)
    for name in ("create_page", "no_such_tool"):
        error = mcp.error(reader_agent, name, title="x", markdown="y")
        assert error == f"Unknown tool: {name}"

    error = mcp.error(reader_agent, "browse")

    assert error.startswith("rate_limited: you made more than 2 calls this minute.")
    assert Page.objects.count() == 0
    outcomes = AuditEvent.objects.filter(actor_agent=reader_agent.agent).order_by("pk")
    assert [row.outcome for row in outcomes] == ["unknown_tool", "unknown_tool", "rate_limited"]


# --- REST -------------------------------------------------------------------------------------

REST_WRITES = ["approve", "reject", "withdraw"]


@pytest.fixture
def proposal(make_page: MakePage, reader: User) -> Version:
    page = make_page("Refunds", "Refunds take five days.\n")
    return version_propose(
        actor=reader, page=page, body="Refunds take three days.\n", change_summary="Faster."
    )


def rest_client(user: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def rest_cases() -> list[tuple[str, str, str]]:
    """(write, where the bad value goes, kind): comments for NUL and surrogates, the page id in
    the path for every kind, and a 10,000-deep body."""
    cases = []
    for write in REST_WRITES:
        if write != "withdraw":
            cases += [(write, "comment", kind) for kind in ("nul", "surrogate")]
        cases += [(write, "path", kind) for kind in BAD]
        cases.append((write, "body", "deep"))
    return cases


@pytest.mark.parametrize(("write", "where", "kind"), rest_cases())
def test_it_refuses_bad_input_through_every_rest_write(
    proposal: Version, reviewer: User, reader: User, write: str, where: str, kind: str
) -> None:
    client = rest_client(reader if write == "withdraw" else reviewer)
    page_id, number = proposal.page.public_id, proposal.number
    body = json.dumps({"comment": "A reason."})
    if where == "comment":
        body = json.dumps({"comment": BAD[kind][0]})
    elif where == "path":
        page_id = page_id + quote(BAD[kind][0], errors="surrogatepass")
    else:
        body = '{"comment": ' + DEEP_JSON + "}"
    before = stored()

    response = client.post(
        f"/api/v1/pages/{page_id}/versions/{number}/{write}",
        data=body,
        content_type="application/json",
    )

    assert_no_database_text(response.content.decode())
    assert stored() == before
    error = response.json()["error"]
    if where == "path":
        assert (response.status_code, error["code"]) == (404, "not_found")
    else:
        assert (response.status_code, error["code"]) == (400, "invalid_argument")
    if where == "comment":
        assert error["message"].startswith(f"comment has {BAD[kind][1]}")
    if where == "body":
        assert "more than 64 levels deep" in error["message"]


# --- web forms --------------------------------------------------------------------------------


@dataclass
class Form:
    """One web form: who posts it, where, its valid fields, and which of them are one line."""

    name: str
    user: str
    url: Callable[[Page, Version, Agent], str]
    fields: dict[str, str]
    text_fields: tuple[str, ...]
    one_line: tuple[str, ...] = ()


FORMS = [
    Form(
        "new page",
        "editor",
        lambda page, version, agent: "/new/",
        {"title": "New", "body": "Text.", "tags": "a, b", "change_summary": "New."},
        ("title", "body", "tags", "instructions", "change_summary"),
        ("title", "tags"),
    ),
    Form(
        "edit page",
        "editor",
        lambda page, version, agent: f"/p/{page.public_id}/edit/",
        {"title": "Refunds", "body": "Changed.", "tags": "", "change_summary": "Edit."},
        ("title", "body", "tags", "instructions", "change_summary"),
        ("title", "tags"),
    ),
    Form(
        "append",
        "editor",
        lambda page, version, agent: f"/p/{page.public_id}/append/",
        {"body": "More.", "change_summary": "Add."},
        ("body", "change_summary"),
    ),
    Form(
        "approve",
        "reviewer",
        lambda page, version, agent: f"/reviews/pages/{page.public_id}/v{version.number}/",
        {"action": "approve", "comment": "Fine.", "expected_live_number": "2"},
        ("comment",),
    ),
    Form(
        "edit then approve",
        "reviewer",
        lambda page, version, agent: f"/reviews/pages/{page.public_id}/v{version.number}/",
        {
            "action": "edit",
            "title": "Refunds",
            "tags": "",
            "body": "Edited.",
            "comment": "",
            "expected_live_number": "2",
        },
        ("title", "tags", "body", "comment"),
        ("title", "tags"),
    ),
    Form(
        "reject",
        "reviewer",
        lambda page, version, agent: f"/reviews/pages/{page.public_id}/v{version.number}/",
        {"action": "reject", "comment": "No."},
        ("comment",),
    ),
    Form(
        "revert",
        "editor",
        lambda page, version, agent: f"/reviews/pages/{page.public_id}/history/",
        {"to_number": "1", "comment": "Back."},
        ("comment",),
    ),
    Form(
        "new agent",
        "admin",
        lambda page, version, agent: "/agents/new/",
        {"name": "new-bot", "description": "Helps."},
        ("name", "description"),
        ("name",),
    ),
    Form(
        "edit agent",
        "admin",
        lambda page, version, agent: f"/agents/{agent.pk}/edit/",
        {"name": "helper", "description": "Helps."},
        ("name", "description"),
        ("name",),
    ),
    Form(
        "add to page set",
        "admin",
        lambda page, version, agent: f"/agents/{agent.pk}/pages/add/",
        {"page": "", "use_when": "Use it."},
        ("use_when",),
    ),
    Form(
        "page set entry",
        "admin",
        lambda page, version, agent: f"/agents/{agent.pk}/pages/{page.public_id}/",
        {"use_when": "Use it."},
        ("use_when",),
    ),
]


def form_cases() -> list[tuple[str, str, str]]:
    cases = []
    for form in FORMS:
        for field in form.text_fields:
            kinds = list(BAD) if field in form.one_line else ["nul", "surrogate"]
            cases += [(form.name, field, kind) for kind in kinds]
        if form.one_line:
            cases.append((form.name, form.one_line[0], "deep"))
    return cases


def encoded(value: str) -> str:
    """A form value as a client sends it; a lone surrogate goes out as its (invalid) bytes."""
    return quote(value, safe="", errors="surrogatepass")


@pytest.mark.parametrize(("form_name", "field", "kind"), form_cases())
def test_it_refuses_bad_text_through_every_form(
    make_page: MakePage,
    make_agent: Callable[..., AgentKey],
    editor: User,
    reviewer: User,
    reader: User,
    admin_user: User,
    form_name: str,
    field: str,
    kind: str,
) -> None:
    form = next(f for f in FORMS if f.name == form_name)
    page = make_page("Refunds", "Refunds take five days.\n")
    other = make_page("Shipping", "Parcels.\n")
    # v1 and v2 live in turn (so there is one to revert to), v3 waits for review.
    version_propose(actor=editor, page=page, body="Two.\n", publish=True)
    version = version_propose(
        actor=reader, page=page, body="Refunds take a day.\n", change_summary="Faster."
    )
    agent = make_agent("helper", pages=(page,)).agent
    users = {"editor": editor, "reviewer": reviewer, "admin": admin_user}
    fields = dict(form.fields)
    if form_name == "add to page set":
        fields["page"] = other.public_id
    value = DEEP_JSON if kind == "deep" else BAD[kind][0]
    fields[field] = value
    if form_name == "page set entry":
        # Each entry's form on the agent's page is prefixed with its page id.
        fields = {f"{page.public_id}-{name}": v for name, v in fields.items()}
    client = Client(raise_request_exception=False)
    client.force_login(users[form.user])
    before = stored()

    response = client.post(
        form.url(page, version, agent),
        data="&".join(f"{name}={encoded(v)}" for name, v in fields.items()),
        content_type="application/x-www-form-urlencoded",
    )

    html = response.content.decode()
    assert response.status_code in (200, 400), (response.status_code, html[:500])
    assert_no_database_text(html)
    assert stored() == before
    if kind == "surrogate":
        assert response.status_code == 400
        assert "not valid UTF-8" in html
    elif kind == "nul":
        assert "U+0000 NULL at position" in html, html
    elif kind == "deep":
        assert "characters" in html
    else:
        assert BAD[kind][1].split(" at ")[0] in html, html


# --- filters and searches: reads refuse the same text --------------------------------------

READS = [
    "/api/v1/pages/?q=",
    "/api/v1/pages/?tag=",
    "/api/v1/pages/?parent=",
    "/api/v1/reviews/?agent=",
    "/api/v1/reviews/?page=",
    "/reviews/?agent=",
    "/reviews/?page=",
    "/search/?q=",
]


@pytest.mark.parametrize("url", READS)
def test_it_refuses_a_nul_in_a_filter_or_search(
    make_page: MakePage, reviewer: User, url: str
) -> None:
    make_page("Refunds", "Refunds take five days.\n", tags=["money"])
    client = Client(raise_request_exception=False)
    client.force_login(reviewer)

    response = client.get(url + "a%00b")

    text = response.content.decode()
    assert_no_database_text(text)
    assert response.status_code in (200, 400), text[:300]
    # A NUL in a query string is refused before any view (config.middleware); the search's
    # own words are the validators' rule.
    assert "NUL" in text
    if url.startswith("/api/"):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_argument"


@pytest.mark.parametrize("kind", ["nul", "newline", "bidi"])
def test_it_never_stores_bad_text_in_an_attachment_name(
    make_page: MakePage, editor: User, kind: str
) -> None:
    page = make_page("Refunds", "Refunds take five days.\n")
    client = Client(raise_request_exception=False)
    client.force_login(editor)
    name = f"in{BAD[kind][0]}voice.txt"

    # The browser's file name: Django drops unprintable characters from it before Quire sees it.
    response = client.post(
        f"/p/{page.public_id}/attachments/",
        {"file": SimpleUploadedFile(name, b"Total: 5", "text/plain")},
    )

    assert response.status_code == 302
    assert list(Attachment.objects.values_list("name", flat=True)) == ["inabvoice.txt"]
    # Any other caller meets the rule for one line of visible text.
    with pytest.raises(InvalidArgument) as refused:
        wiki_services.attachment_add(
            actor=editor, page=page, upload=SimpleUploadedFile(name, b"Total: 5", "text/plain")
        )
    words = BAD[kind][1].replace("position 2", "position 4")
    assert str(refused.value).startswith(f"the file name has {words}")
    assert Attachment.objects.count() == 1


def test_it_skips_files_with_bad_text_on_import_and_says_why(editor: User, tmp_path: Any) -> None:
    (tmp_path / "good.md").write_text("# Good\n\nFine text.\n")
    (tmp_path / "nul.md").write_text("# Nul\n\nA\x00B\n")
    (tmp_path / "bidi.md").write_text("---\ntitle: 'Pay \u202eevil'\n---\nText.\n")
    out, err = io.StringIO(), io.StringIO()

    call_command(
        "import_markdown", str(tmp_path), "--publish", "--author", "edna", stdout=out, stderr=err
    )

    report = out.getvalue() + err.getvalue()
    assert "nul.md: body has U+0000 NULL at position 9" in report, report
    assert "bidi.md: title has U+202E RIGHT-TO-LEFT OVERRIDE at position 5" in report
    assert list(Page.objects.values_list("title", flat=True)) == ["Good"]
