"""A credential is refused however it is cut for the eye: by an HTML comment, a string closed
and opened again over a `\\` continuation, a blank line, two table cells; and a password in
quotes assigned in code or a config file (wiki.credentials)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.errors import InvalidArgument
from tests.fixtures_credentials import GITHUB, paragraph
from tests.fixtures_mcp import MCP, AgentKey
from wiki.credentials import credentials_in
from wiki.models import Page, Version
from wiki.validators import validate_markdown

HALF = len(GITHUB) // 2
FIRST, SECOND = GITHUB[:HALF], GITHUB[HALF:]

# (what was tried, the text, the line and kind the author is told)
EVASIONS = [
    ("cut by an HTML comment", f"Token: {FIRST}<!-- x -->{SECOND}", (1, "GitHub token")),
    (
        "cut by a comment over two lines",
        f"Token: {FIRST}<!--\nnothing to see\n-->{SECOND}",
        (1, "GitHub token"),
    ),
    (
        "a string closed and opened again over a backslash",
        f'TOKEN = "{FIRST}" \\\n    "{SECOND}"',
        (1, "GitHub token"),
    ),
    ("cut by a blank line", f"{FIRST}\n\n{SECOND}", (1, "GitHub token")),
    (
        "across two table cells",
        f"| part one | part two |\n|---|---|\n| {FIRST} | {SECOND} |",
        (3, "GitHub token"),
    ),
    ("a password assigned in code", "db_password = 'Tr0ub4dor-and-3'", (1, "password assignment")),
    ("a password in a config file", 'password: "9hG2kLq7Zx"', (1, "password assignment")),
]

ORDINARY = [
    "The password is in the team vault: `password = os.environ['DB_PASSWORD']`.",
    "Set `password = '<your password>'` in `settings.local.py`, never in git.",
    'password: "changeme" is the default: change it at the first login.',
    "| Setting | Where |\n|---|---|\n| token | the vault |\n| key | ask ops |",
    "Part one of the guide.\n\nPart two of the guide.",
    "A comment <!-- TODO: expand --> in the text.",
]

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("tried", "text", "told"), EVASIONS, ids=[e[0] for e in EVASIONS])
def test_it_finds_the_credential(tried: str, text: str, told: tuple[int, str]) -> None:
    assert told in credentials_in(text), tried


@pytest.mark.parametrize("text", ORDINARY)
def test_it_accepts_prose_that_names_passwords_and_tokens(text: str) -> None:
    assert credentials_in(paragraph(text)) == []


def test_mcp_refuses_a_token_cut_by_a_comment_and_stores_nothing(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    versions = Version.objects.count()
    for _, text, (line, kind) in EVASIONS:
        error = mcp.error(
            bot,
            "append_to_page",
            pageId=page.public_id,
            markdown=paragraph(text),
            changeSummary="Notes.",
        )
        assert error.startswith("invalid_argument: markdown holds what looks like a "), error
        assert f"line {line + 2} ({kind})" in error
    assert Version.objects.count() == versions


def test_validate_raises_with_the_line() -> None:
    with pytest.raises(InvalidArgument, match=r"line 3 \(GitHub token\)"):
        validate_markdown(paragraph(EVASIONS[0][1]))
