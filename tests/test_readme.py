"""What the README tells a newcomer to run works as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import PROJECT_ROOT
from tests.fixtures_mcp import AgentKey
from wiki.models import Page

README = (PROJECT_ROOT / "README.md").read_text()


def _python_example() -> str:
    found = re.search(r"official Python SDK.*?```python\n(.*?)```", README, re.DOTALL)
    assert found, "the README shows a Python client example"
    return "\n".join(line.removeprefix("   ") for line in found.group(1).splitlines())


def test_it_names_the_mcp_version_the_python_example_was_checked_with() -> None:
    from importlib.metadata import version

    pinned = re.search(r"^mcp==(\S+)$", (PROJECT_ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and version("mcp") == pinned.group(1)
    assert f"pip install mcp=={pinned.group(1)}" in README


@pytest.mark.django_db(transaction=True)
def test_it_runs_the_python_client_example_against_a_live_server(
    live_server: Any, make_agent: Any, make_page: Any, fresh_rate_limits: None
) -> None:
    page: Page = make_page("Refunds", "We refund within 30 days.\n")
    key: AgentKey = make_agent("support-bot", pages=(page,))
    result = subprocess.run(
        [sys.executable, "-c", _python_example()],
        env={**os.environ, "QUIRE_MCP_URL": f"{live_server.url}/mcp", "QUIRE_TOKEN": key.token},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert page.public_id in result.stdout and "Refunds" in result.stdout


def test_it_gives_management_commands_the_settings_of_make_run() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    assert re.search(r"^manage: .*\n\t\$\(RUN_ENV\) \$\(PY\) manage.py \$\(ARGS\)$", makefile, re.M)
    assert "make manage ARGS=" in README and "make run PORT=" in README
    result = subprocess.run(
        ["make", "-n", "manage", "ARGS=check", "PORT=8123"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "DEBUG=1 QUIRE_BASE_URL=${QUIRE_BASE_URL:-http://127.0.0.1:8123}" in result.stdout
    assert "manage.py check" in result.stdout
