"""What an agent is told is true (issue 37, point 1): the protocol's answers and the tools'
schemas say what the server does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import jsonschema
import pytest

from core.models import AuditEvent
from tests.fixtures_mcp import MCP, AgentKey
from tests.http_tls import TLS
from wiki.models import Page

pytestmark = pytest.mark.django_db(transaction=True)


def post(mcp: MCP, key: AgentKey, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(
        mcp.url,
        json=body,
        headers={
            "Authorization": f"Bearer {key.token}",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=30,
        verify=TLS,
    )


@pytest.mark.parametrize("method", ["tools/list", "tools/call", "initialize"])
def test_a_request_with_a_null_id_is_an_invalid_request_not_a_notification(
    mcp: MCP, reader_agent: AgentKey, method: str
) -> None:
    params = {"name": "browse", "arguments": {}} if method == "tools/call" else {}
    response = post(
        mcp, reader_agent, {"jsonrpc": "2.0", "id": None, "method": method, "params": params}
    )

    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "never null" in answer["error"]["message"]
    row = AuditEvent.objects.get(actor_agent=reader_agent.agent)
    assert (row.action, row.outcome) == ("mcp.request", "invalid_request")


@pytest.mark.parametrize("request_id", [7, "call-7"])
@pytest.mark.parametrize("method", ["tools/list", "tools/call"])
def test_an_unsupported_protocol_version_is_an_invalid_request_with_the_requests_id(
    mcp: MCP, reader_agent: AgentKey, method: str, request_id: int | str
) -> None:
    params = {"name": "browse", "arguments": {}} if method == "tools/call" else {}
    response = post(
        mcp,
        reader_agent,
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
        **{"MCP-Protocol-Version": "1999-01-01"},
    )

    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["id"] == request_id
    assert answer["error"]["code"] == -32600
    assert "MCP-Protocol-Version '1999-01-01' is not supported" in answer["error"]["message"]
    assert "2025-06-18" in answer["error"]["message"]


def test_a_notification_and_a_supported_version_still_pass(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    notified = post(mcp, reader_agent, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert notified.status_code == 202
    listed = post(
        mcp,
        reader_agent,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        **{"MCP-Protocol-Version": "2025-06-18"},
    )
    assert listed.status_code == 200
    assert listed.json()["result"]["tools"]


# --- output schemas ---------------------------------------------------------------------------


def _optional_fields(schema: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name, holder in [(where, schema), *schema.get("$defs", {}).items()]:
        required = set(holder.get("required", ()))
        for field, field_schema in holder.get("properties", {}).items():
            if field not in required:
                found.append((f"{name}.{field}", field_schema))
    return found


def _admits_null(field_schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator({"$defs": defs, **field_schema}).is_valid(None)


def test_every_optional_output_field_is_nullable_in_a_valid_schema(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    page = make_page("Refunds", "Within five days.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))

    async def tools(session: Any) -> list[Any]:
        return list((await session.list_tools()).tools)

    listed = mcp.run(bot.token, tools)
    assert len(listed) == 9
    not_nullable = []
    for tool in listed:
        schema = tool.outputSchema
        jsonschema.Draft202012Validator.check_schema(schema)
        for where, field_schema in _optional_fields(schema, tool.name):
            defs = schema.get("$defs", {})
            if field_schema.get("default", "absent") is None and not _admits_null(
                field_schema, defs
            ):
                not_nullable.append(where)
    assert not_nullable == []

    # Answers without their optional fields (and the write result with them) fit the schema.
    schemas = {tool.name: tool.outputSchema for tool in listed}
    source = mcp.ok(bot, "get_page_source", pageId=page.public_id)
    jsonschema.validate(source, schemas["get_page_source"])
    jsonschema.validate(mcp.ok(bot, "get_page", pageId=page.public_id), schemas["get_page"])
    jsonschema.validate(mcp.ok(bot, "recent_activity"), schemas["recent_activity"])
    written = mcp.ok(
        bot,
        "edit_page",
        pageId=page.public_id,
        edits=[{"oldText": "five", "newText": "seven"}],
        changeSummary="Seven days.",
        baseVersion=source["liveVersion"],
    )
    jsonschema.validate(written, schemas["edit_page"])


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            {"oldtext": "five", "newText": "seven"},
            "edits.0.oldtext: this key is not taken here "
            "(did you mean oldText?); each item takes oldText, newText",
        ),
        ({"oldText": "five", "new_text": "seven"}, "(did you mean newText?)"),
        (
            {"oldText": "five", "newText": "seven", "why": "x"},
            "edits.0.why: this key is not taken here; each item takes oldText, newText",
        ),
    ],
)
def test_an_unknown_key_inside_edits_gets_a_suggestion(
    mcp: MCP,
    make_agent: Callable[..., AgentKey],
    make_page: Callable[..., Page],
    edit: dict[str, str],
    said: str,
) -> None:
    page = make_page("Refunds", "Within five days.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))

    error = mcp.error(
        bot, "edit_page", pageId=page.public_id, edits=[edit], changeSummary="Seven.", baseVersion=1
    )

    assert error.startswith("invalid_argument: "), error
    assert said in error, error


FASTMCP_CLIENT = """
import asyncio, json, os
from fastmcp import Client

async def main():
    page = os.environ["PAGE"]
    async with Client(os.environ["URL"], auth=os.environ["TOKEN"]) as client:
        calls = {
            "get_page": {"pageId": page},
            "get_page_source": {"pageId": page},
            "recent_activity": {},
            "append_to_page": {
                "pageId": page, "markdown": "Ask the desk.", "changeSummary": "Add a pointer.",
            },
        }
        seen = {}
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            seen[name] = {"data": result.data is not None, "structured": result.structured_content}
    print(json.dumps(seen))

asyncio.run(main())
"""


@pytest.mark.parametrize("fastmcp", ["3.4.11", "4.2.3"])
def test_fastmcp_clients_get_typed_data_from_every_tool_with_optional_fields(
    live_server: Any,
    editor_agent: AgentKey,
    make_page: Callable[..., Page],
    fresh_rate_limits: None,
    fastmcp: str,
) -> None:
    """fastmcp turns a tool's structured answer into `.data` by its output schema; optional
    fields declared non-nullable with a null default gave `.data = None` for get_page,
    get_page_source, recent_activity and every write tool (issue 37, point 1)."""
    import json
    import os
    import subprocess

    from tests.sdk_venvs import python_with

    page = make_page("Refunds", "We refund within 30 days.\n")
    editor_agent.give(page)
    python = python_with("fastmcp", fastmcp)
    result = subprocess.run(
        [str(python), "-c", FASTMCP_CLIENT],
        env={
            **os.environ,
            "URL": f"{live_server.url}/mcp",
            "TOKEN": editor_agent.token,
            "PAGE": page.public_id,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    for name, answer in seen.items():
        assert answer["structured"], name
        assert answer["data"], (name, answer["structured"])
    assert seen["append_to_page"]["structured"]["status"] == "in_review"
