"""The OpenAPI schema tells the truth: schemathesis over /api/schema/ finds no 500 and no
response or status that the schema does not declare, and nullable fields say so."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from core.actors import SystemActor
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from reviews.api_tokens import api_token_create
from tests.fixtures_mcp import AgentKey
from tests.fixtures_servers import QuireServer
from wiki.models import Page

pytestmark = pytest.mark.django_db(transaction=True)

ST = Path(sys.executable).parent / "st"


def test_it_declares_fields_that_can_be_null_as_nullable(admin_user: User) -> None:
    client = Client()
    client.force_login(admin_user)

    schema = yaml.safe_load(client.get("/api/schema/").content)

    components = schema["components"]["schemas"]
    assert components["Page"]["properties"]["parentId"]["nullable"] is True
    for name in ("baseVersion", "decidedBy", "decidedAt", "revertedFrom"):
        assert components["Version"]["properties"][name]["nullable"] is True, name
    approve = schema["paths"]["/api/v1/pages/{page_id}/versions/{number}/approve"]["post"]
    assert {"400", "401", "403", "404", "409", "415", "503"} <= set(approve["responses"])


def test_it_finds_no_server_error_or_schema_violation(
    quire_servers: Callable[..., QuireServer],
    make_page: Callable[..., Page],
    make_agent: Callable[..., AgentKey],
    admin_user: User,
    reader: User,
) -> None:
    parent = make_page("Handbook", "Start here.\n", tags=["guide"])
    child = make_page("Refunds", "Refunds take five days.\n", parent=parent, tags=["billing"])
    agent = make_agent("docs-bot", can_edit=True, pages=(parent,)).agent
    version_propose(actor=agent, page=child, body="Refunds take three days.\n")
    version_propose(actor=reader, page=parent, kind="append", body="More.\n")
    page_create(actor=agent, title="Returns", body="Returns.\n", parent=parent)
    key = api_token_create(actor=SystemActor("tests"), user=admin_user)
    server = quire_servers()

    result = subprocess.run(
        [
            str(ST),
            "run",
            f"{server.url}/api/schema/",
            "--header",
            f"Authorization: Token {key}",
            "--checks",
            "all",
            "--max-examples",
            "25",
            "--seed",
            "1",
            "--no-shrink",
            "--generation-database",
            "none",
            "--max-failures",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "500 Internal Server Error" not in server.output()
