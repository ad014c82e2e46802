"""Protocol answers an agent can act on (issue 49, point 8): raw HTTP against a live server,
each refusal carrying the request's id and saying what is wrong with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.models import AuditEvent
from tests.fixtures_mcp import MCP, AgentKey
from tests.test_mcp_security import raw_post
from wiki.models import Page, Version

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("accept", ["text/html", "text/event-stream", ""])
def test_a_request_that_does_not_accept_json_gets_406_with_its_own_id(
    mcp: MCP, reader_agent: AgentKey, accept: str
) -> None:
    body = {"jsonrpc": "2.0", "id": 31, "method": "tools/list"}

    response = raw_post(mcp, body, reader_agent.token, Accept=accept)

    assert response.status_code == 406, response.text
    answer = response.json()
    assert answer["id"] == 31
    assert answer["error"]["code"] == -32600
    assert "Accept: application/json" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"id": 5, "method": "tools/list"}, 'needs "jsonrpc": "2.0"'),
        ({"jsonrpc": "1.0", "id": 5, "method": "tools/list"}, 'needs "jsonrpc": "2.0"'),
        ({"jsonrpc": "2.0", "id": 5}, "needs a method"),
    ],
    ids=["no-jsonrpc", "wrong-jsonrpc", "no-method"],
)
def test_a_request_object_missing_a_member_is_told_which(
    mcp: MCP, reader_agent: AgentKey, body: dict[str, Any], said: str
) -> None:
    response = raw_post(mcp, body, reader_agent.token)

    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] == 5
    assert answer["error"]["code"] == -32600
    assert said in answer["error"]["message"]
    assert "batch" not in answer["error"]["message"]


def test_a_batch_is_still_told_batches_are_not_supported(mcp: MCP, reader_agent: AgentKey) -> None:
    body = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    answer = raw_post(mcp, body, reader_agent.token).json()
    assert "batches are not supported" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"arguments": {}}, "params.name: a tool's name"),
        ({"name": "browse", "arguments": ["a"]}, "params.arguments: an object"),
        ({"name": 5}, "params.name: a tool's name"),
        (["browse"], "params: an object"),
    ],
    ids=["no-name", "array-arguments", "number-name", "array-params"],
)
def test_a_tool_call_with_bad_params_is_told_what_to_send(
    mcp: MCP, reader_agent: AgentKey, params: Any, said: str
) -> None:
    body = {"jsonrpc": "2.0", "id": "call-9", "method": "tools/call", "params": params}

    response = raw_post(mcp, body, reader_agent.token)

    answer = response.json()
    assert answer["id"] == "call-9", answer
    assert answer["error"]["code"] == -32602
    assert said in answer["error"]["message"], answer
    assert answer["error"].get("data") != ""
    row = AuditEvent.objects.get(actor_agent=reader_agent.agent)
    assert (row.action, row.outcome) == ("mcp.request", "invalid_params")


def test_an_old_text_found_many_times_names_each_line_once(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    line = "| x | x | x | x | x |"
    body = "\n".join([line, "Intro.", line, *(f"Row {n}: x" for n in range(95))]) + "\n"
    page = make_page("Table", body)
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))

    error = mcp.error(
        bot,
        "edit_page",
        pageId=page.public_id,
        edits=[{"oldText": "x", "newText": "y"}],
        changeSummary="Fix.",
        baseVersion=1,
    )

    assert "occurs 105 times in the page, at lines 1 (5 times), 3 (5 times), 4, 5," in error
    listed = error.split("at lines ", 1)[1].split(";", 1)[0]
    numbers = [part.split(" ")[0] for part in listed.split(", ") if part[0].isdigit()]
    assert len(numbers) == len(set(numbers)), listed
    assert "and 87 more lines (97 in all)" in listed
    assert Version.objects.filter(page=page).count() == 1
