"""What the README tells a newcomer to run works as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT_ROOT
from tests.fixtures_mcp import AgentKey
from tests.sdk_venvs import python_with
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


def _mcp_2_version() -> str:
    shown = re.search(r"`pip install mcp==(2\.[\d.]+)`", README)
    assert shown, "the README names the mcp 2.x its Python example runs with"
    return shown.group(1)


@pytest.mark.parametrize("sdk", ["pinned", "2.x"])
@pytest.mark.django_db(transaction=True)
def test_it_runs_the_python_client_example_against_a_live_server(
    sdk: str, live_server: Any, make_agent: Any, make_page: Any, fresh_rate_limits: None
) -> None:
    python = Path(sys.executable) if sdk == "pinned" else python_with("mcp", _mcp_2_version())
    page: Page = make_page("Refunds", "We refund within 30 days.\n")
    key: AgentKey = make_agent("support-bot", pages=(page,))
    result = subprocess.run(
        [str(python), "-c", _python_example()],
        env={**os.environ, "QUIRE_MCP_URL": f"{live_server.url}/mcp", "QUIRE_TOKEN": key.token},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert page.public_id in result.stdout and "Refunds" in result.stdout
    shown = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown.startswith("1." if sdk == "pinned" else "2."), shown


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


# The docs/ pages the README links to: the commands, files and code they show are checked here
# as the README's are, so a renamed command, option, target or file shows up as a failing test.
DOCS = sorted((PROJECT_ROOT / "docs").glob("*.md"))
PAGES = {"README.md": README} | {f"docs/{page.name}": page.read_text() for page in DOCS}
REPO_DIRS = (
    "agents",
    "bench",
    "config",
    "connect",
    "content",
    "core",
    "inbox",
    "people",
    "reviews",
    "tests",
    "wiki",
)


def _code(text: str) -> str:
    """What a page shows as code: its fenced blocks and its inline code, one piece a line."""
    fenced = re.findall(r"^ *```[a-z]*\n(.*?)^ *```", text, re.M | re.S)
    prose = re.sub(r"^ *```[a-z]*\n.*?^ *```", "", text, flags=re.M | re.S)
    inline = re.findall(r"`([^`\n]+)`", prose.replace("\n", " "))
    return "\n".join(fenced + inline)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_it_links_every_docs_page_from_the_readme_and_every_link_resolves() -> None:
    assert len(README.splitlines()) < 300
    for page in DOCS:
        assert f"(docs/{page.name})" in README, f"the README links docs/{page.name}"
    for name, text in PAGES.items():
        here = (PROJECT_ROOT / name).parent
        for target, anchor in re.findall(r"\]\(([^)#:\s]+\.md)?(?:#([^)\s]+))?\)", text):
            file = (here / target).resolve() if target else PROJECT_ROOT / name
            assert file.is_file(), f"{name} links {target}, which is not there"
            if anchor:
                headings = re.findall(r"^#+ (.+)$", file.read_text(), re.M)
                assert anchor in {_anchor(h) for h in headings}, f"{name} links #{anchor}"


def test_it_shows_only_management_commands_and_options_that_exist() -> None:
    from django.core.management import get_commands, load_command_class

    commands = get_commands()
    shown = 0
    for name, text in PAGES.items():
        code = _code(text)
        for command, rest in re.findall(
            r'(?:manage\.py|make manage ARGS="|web manage) +([a-z_]+)([^"\n]*)', code
        ):
            assert command in commands, f"{name} shows manage.py {command}"
            parser = load_command_class(commands[command], command).create_parser(
                "manage.py", command
            )
            known = {opt for action in parser._actions for opt in action.option_strings}
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
                assert option in known, f"{name} shows manage.py {command} {option}"
            shown += 1
    assert shown >= 20


def test_it_shows_only_make_targets_and_files_that_exist() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    files = 0
    for name, text in PAGES.items():
        code = _code(text)
        for target in re.findall(r"(?<![\w-])make ([a-z][a-z-]*)", code):
            assert target in targets, f"{name} shows make {target}"
        for path in re.findall(rf"\b((?:{'|'.join(REPO_DIRS)})/[\w./-]+\.\w+)", code):
            if path.startswith("bench/results/") or path == "tests/test_x.py":
                continue  # what a run writes (not committed), and the README's placeholder
            assert (PROJECT_ROOT / path).exists(), f"{name} names {path}"
            files += 1
    assert files >= 40


def test_it_shows_json_that_parses_and_python_that_compiles() -> None:
    import json

    for name, text in PAGES.items():
        for block in re.findall(r"^( *)```json\n(.*?)^ *```", text, re.M | re.S):
            json.loads(block[1])
        for block in re.findall(r"^( *)```python\n(.*?)^ *```", text, re.M | re.S):
            compile(block[1], name, "exec")


def test_it_lists_the_docker_compose_services_and_the_variables_settings_read() -> None:
    import yaml

    services = set(yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())["services"])
    table = re.search(r"\| service \| what it is for \|\n\|---\|---\|\n((?:\|.*\n)+)", README)
    assert table and set(re.findall(r"^\| `([\w-]+)` \|", table.group(1), re.M)) == services

    settings = "\n".join(p.read_text() for p in (PROJECT_ROOT / "config").rglob("*.py"))
    operating = PAGES["docs/operating.md"]
    rows = re.search(r"\| variable \| default \| meaning \|\n\|---.*\n((?:\|.*\n)+)", operating)
    assert rows
    for cell in re.findall(r"^\| ([^|]+) \|", rows.group(1), re.M):
        for variable in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell):
            assert variable in settings, f"docs/operating.md lists {variable}"


def test_it_maps_every_app_in_docs_architecture() -> None:
    """Every first-party app has its line in the map, and the review's table is named."""
    architecture = PAGES["docs/architecture.md"]
    mapped = set(re.findall(r"^([a-z]+)/ ", architecture, re.M))
    apps = {path.parent.name for path in PROJECT_ROOT.glob("*/apps.py")}
    assert apps - mapped == set(), "docs/architecture.md's map lacks these apps"
    assert "Review.TRANSITIONS" in architecture and "Version.TRANSITIONS" in architecture


def test_it_starts_every_readme_paragraph_at_the_start_of_a_sentence() -> None:
    """A paragraph in lower case goes on from a code block the sentence before it shows."""
    text = re.sub(r"^ *```[a-z]*\n.*?^ *```$", "\n```\n", README, flags=re.M | re.S)
    blocks = [block.strip() for block in re.split(r"\n\s*\n", text)]
    for before, paragraph in zip(["#", *blocks], blocks, strict=False):
        if re.match(r"[a-z]", paragraph):
            assert before == "```", f"starts mid-sentence: {paragraph[:60]!r}"


def test_it_says_make_lint_checks_the_import_contracts() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    lint = re.search(r"^lint: .*\n((?:\t.*\n)+)", makefile, re.M)
    assert lint and "lint-imports" in lint.group(1)
    said = re.search(r"`make lint` \(([^)]*)", README)
    assert said and "import-linter" in said.group(1), "the README says what make lint runs"


def test_it_points_env_example_to_where_the_variables_are() -> None:
    example = (PROJECT_ROOT / ".env.example").read_text()
    pointer = re.search(r"(docs/\w+\.md), \"([^\"]+)\"", example)
    assert pointer, ".env.example says where every variable is explained"
    headings = re.findall(r"^#+ (.+)$", PAGES[pointer.group(1)], re.M)
    assert pointer.group(2) in headings
    for variable in re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, re.M):
        if variable not in {"POSTGRES_PASSWORD", "QUIRE_S3"}:  # docker-compose's own
            assert f"`{variable}`" in PAGES[pointer.group(1)], f"{variable} is not explained"


# What cron runs in place of each beat task when there is no Redis (docs/operating.md).
BEAT_COMMANDS = {
    "reviews.tasks.retry_pending_notifications": "send_review_digest",
    "reviews.tasks.send_review_digests": "send_review_digest",
    "reviews.tasks.remind_overdue_reviews": "remind_reviews",
    "connect.tasks.delete_unused_clients": "delete_unused_oauth_clients",
    "people.tasks.recheck_sso_identities": "sso_recheck",
}


def test_it_tells_cron_to_run_every_beat_task_without_redis(settings: Any) -> None:
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks == set(BEAT_COMMANDS), "a new beat task needs its cron line in operating.md"
    cron = re.search(r"^Without Redis.*?```sh\n(.*?)```", PAGES["docs/operating.md"], re.M | re.S)
    assert cron, "docs/operating.md shows the crontab for a wiki without Redis"
    for command in set(BEAT_COMMANDS.values()):
        assert f"manage.py {command}" in cron.group(1), f"cron lacks {command}"
