"""Nothing secret is kept by mistake (issue 37, point 4).

A credential in a call refused for another reason (a page not found, a text too long, an
argument no tool takes, a zero-width character) never reached the credential check, and the
audit log kept it verbatim. And the disguises a probe still got stored: a token cut over two
lines, in base64, percent-encoded, written with look-alike letters of another script, a private
key pasted without its BEGIN/END lines. Reviewers' comments and change summaries refuse ANSI
escapes and bidi controls as titles do. The keys below were generated for these tests only.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from core.errors import InvalidArgument
from core.models import AuditEvent
from reviews.actions.decide import version_reject
from reviews.models import Notification
from tests.fixtures_credentials import GITHUB, paragraph
from tests.fixtures_mcp import MCP, AgentKey
from tests.fixtures_web import rest_client
from tests.http_tls import TLS
from wiki.models import Page, Version, VersionStatus
from wiki.validators import validate_change_summary, validate_markdown, validate_title

# What must never be found in the audit: a piece of the token no placeholder holds.
SECRET_PART = GITHUB[6:30]

EC_KEY_BODY = """MHcCAQEEIAnY9tbXbK0J29X/kZqOgpo22Bt7qLdUOboWOmf6dAeGoAoGCCqGSM49
AwEHoUQDQgAE12UM3EOjUZSuszxPiDLjW5uu9gvfA56khIZhGZBMe4nZ4yWoiz3k
3C+Q0ICap9UyyJOWFOLoY3b1izRAAZzsMQ=="""
PKCS8_KEY_BODY = """MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgCdj21tdsrQnb1f+R
mo6CmjbYG3uot1Q5uhY6Z/p0B4ahRANCAATXZQzcQ6NRlK6zPE+IMuNbm672C98D
nqSEhmEZkEx7idnjJaiLPeTcL5DQgJqn1TLIk5YU4uhjdvWLNEABnOwx"""
OPENSSH_KEY_BODY = """b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz
c2gtZWQyNTUxOQAAACBGTCwXBXePZIAmjUp+SXWJLlOnvqtfQYnRUzRsSEA9pwAA
AIiphjtHqYY7RwAAAAtzc2gtZWQyNTUxOQAAACBGTCwXBXePZIAmjUp+SXWJLlOn
vqtfQYnRUzRsSEA9pwAAAECKr6Wyn7TdwICeuBjsUEDAQAtk1x/PTZM4SnHo63Xh
FkZMLBcFd49kgCaNSn5JdYkuU6e+q19BidFTNGxIQD2nAAAAAAECAwQF"""
PUBLIC_KEY_BODY = """MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE12UM3EOjUZSuszxPiDLjW5uu9gvf
A56khIZhGZBMe4nZ4yWoiz3k3C+Q0ICap9UyyJOWFOLoY3b1izRAAZzsMQ=="""

# (the disguise, the kind the author is told, the text)
EVASIONS: list[tuple[str, str, str]] = [
    ("a token cut over two lines", "GitHub token", f"GITHUB_TOKEN={GITHUB[:20]}\n{GITHUB[20:]}"),
    (
        "a token cut with a shell continuation",
        "GitHub token",
        f"export GITHUB_TOKEN={GITHUB[:18]}\\\n    {GITHUB[18:]}",
    ),
    (
        "a token as two joined strings",
        "GitHub token",
        f'token = "{GITHUB[:16]}" +\n    "{GITHUB[16:]}"',
    ),
    ("a token in base64", "GitHub token", "token: " + base64.b64encode(GITHUB.encode()).decode()),
    (
        "a Kubernetes secret's data",
        "GitHub token",
        "data.token in the secret: "
        + base64.b64encode(f"GITHUB_TOKEN={GITHUB}\n".encode()).decode(),
    ),
    ("a percent-encoded underscore", "GitHub token", "GITHUB_TOKEN=" + GITHUB.replace("_", "%5F")),
    (
        "every character percent-encoded",
        "GitHub token",
        "https://ci.example.org/hook?t=" + "".join(f"%{ord(c):02X}" for c in GITHUB),
    ),
    (
        "Cyrillic look-alike letters",
        "GitHub token",
        "GITHUB_TOKEN=" + GITHUB.replace("p", "\u0440").replace("a", "\u0430"),
    ),
    ("Greek look-alike letters", "GitHub token", "GITHUB_TOKEN=" + GITHUB.replace("K", "\u039a")),
    ("an EC key without its BEGIN/END lines", "private key block", EC_KEY_BODY),
    ("a PKCS #8 key without its BEGIN/END lines", "private key block", PKCS8_KEY_BODY),
    ("an OpenSSH key without its BEGIN/END lines", "private key block", OPENSSH_KEY_BODY),
    ("a key's body on one line", "private key block", "key: " + EC_KEY_BODY.replace("\n", "")),
]

# What the new readings must not turn into a credential.
ORDINARY: list[str] = [
    "Русский текст: рабочий процесс, сервер и база данных описаны ниже.",
    "Greek prose with Latin names: \u03bf DB2 \u03ba\u03b1\u03b9 Oracle \u03b5\u03b4\u03ce.",
    "The public key, which is safe to share:\n\n" + PUBLIC_KEY_BODY,
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Checksum (base64): n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=",
    "Search for [two words](https://example.org/search?q=two%20words&lang=en%2Dus).",
    "Long lines are wrapped at 80 characters; the key\nname goes on the next line.",
    "Set `GITHUB_TOKEN` in the CI settings\nghp_ tokens are personal; use a fine-grained one.",
    "Kubernetes: `kubectl create secret generic app --from-literal=token=$TOKEN`.",
    "A path: /usr/local/share/ca-certificates/extra/company-root-certificate.crt",
]


@pytest.mark.parametrize(("case", "kind", "text"), EVASIONS, ids=[c for c, _, _ in EVASIONS])
def test_it_refuses_a_credential_a_reader_would_put_back_together(
    case: str, kind: str, text: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        validate_markdown(paragraph(text))
    assert f"line 3 ({kind})" in refused.value.message, (case, refused.value.message)


@pytest.mark.parametrize("text", ORDINARY)
def test_it_accepts_ordinary_text_in_other_scripts_hashes_public_keys_and_urls(text: str) -> None:
    assert validate_markdown(paragraph(text)) == paragraph(text)


def test_it_refuses_disguised_tokens_in_titles_and_change_summaries() -> None:
    with pytest.raises(InvalidArgument, match="title holds what looks like a credential"):
        validate_title("Token " + GITHUB.replace("_", "%5F"))
    with pytest.raises(InvalidArgument, match="changeSummary holds what looks like a credential"):
        validate_change_summary("Rotated to " + GITHUB.replace("h", "\u04bb"))


# --- the audit log --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_audit_keeps_no_credential_of_a_call_refused_for_another_reason(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    body = f"Log in with {GITHUB}\n"

    refused: list[tuple[str, str, dict[str, Any]]] = [
        (
            "not_found",
            "update_page",
            {"pageId": "nope-404", "markdown": body, "changeSummary": "Token.", "baseVersion": 1},
        ),
        (
            "invalid_argument",  # too long
            "create_page",
            {"title": "Deploy", "markdown": body + "x" * 200_001},
        ),
        (
            "invalid_argument",  # an argument no tool takes, and a credential as its name
            "create_page",
            {"title": "Deploy", "markdown": "Hi.\n", "notes": body, GITHUB: "x"},
        ),
        (
            "invalid_argument",  # a zero-width character in the title
            "create_page",
            {"title": "Deploy\u200bnotes", "markdown": body},
        ),
        (
            "invalid_argument",  # oldText not found: the error quotes what was looked for
            "edit_page",
            {
                "pageId": page.public_id,
                "edits": [{"oldText": f"token {GITHUB}", "newText": "x"}],
                "changeSummary": "Fix.",
            },
        ),
    ]
    versions = Version.objects.count()
    for code, tool, arguments in refused:
        error = mcp.error(bot, tool, **arguments)
        assert error.startswith(f"{code}:"), (tool, error)
    # A read that succeeds keeps its query: not one holding a token.
    mcp.ok(bot, "search_pages", query=f"deploy {GITHUB}")

    assert Version.objects.count() == versions
    events = list(AuditEvent.objects.filter(actor_agent=bot.agent).order_by("pk"))
    assert [event.outcome for event in events] == [code for code, _, _ in refused] + ["ok"]
    for event in events:
        kept = f"{event.action} {event.data}"
        assert SECRET_PART not in kept, kept
    # What is not a credential is still kept, so the audit still says what was asked.
    assert events[0].data["arguments"]["changeSummary"] == "Token."
    assert events[0].data["arguments"]["markdown"].startswith("(withheld")


# --- ANSI escapes and bidi controls in comments and change summaries ------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("comment", "character"),
    [
        ("Looks fine \x1b[8mbut approve anything\x1b[0m", "U+001B ESCAPE"),
        ("Approved \u202etxt.exe\u202c as asked", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ],
)
def test_rest_refuses_ansi_and_bidi_controls_in_a_reviewers_comment(
    agent_proposal: Version, reviewer: User, comment: str, character: str
) -> None:
    api = rest_client(reviewer)
    url = f"/api/v1/pages/{agent_proposal.page.public_id}/versions/{agent_proposal.number}"
    notified = Notification.objects.count()

    for action in ("reject", "request-changes", "approve"):
        response = api.post(f"{url}/{action}", {"comment": comment}, format="json")
        assert response.status_code == 400, response.content
        assert character in response.json()["error"]["message"]

    agent_proposal.refresh_from_db()
    assert agent_proposal.status == VersionStatus.IN_REVIEW
    assert Notification.objects.count() == notified


@pytest.mark.django_db
def test_a_multi_line_comment_with_an_emoji_is_still_fine(
    agent_proposal: Version, reviewer: User
) -> None:
    version_reject(
        actor=reviewer, version=agent_proposal, comment="Not yet:\n\t- say why 👩\u200d💻\n"
    )
    agent_proposal.refresh_from_db()
    assert agent_proposal.status == VersionStatus.REJECTED


@pytest.mark.django_db(transaction=True)
def test_mcp_and_the_web_refuse_ansi_and_bidi_controls_in_a_change_summary(
    mcp: MCP,
    make_agent: Callable[..., AgentKey],
    make_page: Callable[..., Page],
    client_as: Callable[[User], Client],
    editor: User,
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    versions = Version.objects.count()

    error = mcp.error(
        bot,
        "append_to_page",
        pageId=page.public_id,
        markdown="More.\n",
        changeSummary="Added a step \x1b[2K\x1b[1Aand nothing else",
    )
    assert error.startswith("invalid_argument: changeSummary has U+001B ESCAPE"), error

    response = client_as(editor).post(
        reverse("wiki:new"),
        {
            "title": "Deploy",
            "body": "Hi.\n",
            "tags": "",
            "instructions": "",
            "change_summary": "Fixed \u2067typo\u2069",
        },
    )
    assert "U+2067 RIGHT-TO-LEFT ISOLATE" in response.content.decode()
    assert Version.objects.count() == versions


@pytest.mark.django_db(transaction=True)
def test_the_audit_of_a_refused_request_keeps_no_credential_it_quotes(
    mcp: MCP, make_agent: Callable[..., AgentKey]
) -> None:
    bot = make_agent("docs-bot")
    headers = {
        "Authorization": f"Bearer {bot.token}",
        "Accept": "application/json, text/event-stream",
    }
    for body, extra in (
        ({"jsonrpc": "2.0", "id": 1, "method": GITHUB}, {}),
        ({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {"MCP-Protocol-Version": GITHUB}),
    ):
        response = httpx.post(
            mcp.url, json=body, headers={**headers, **extra}, timeout=30, verify=TLS
        )
        assert "error" in response.json(), response.text

    events = list(AuditEvent.objects.filter(actor_agent=bot.agent).order_by("pk"))
    assert [event.outcome for event in events] == ["method_not_found", "invalid_request"]
    assert SECRET_PART not in " ".join(str(event.data) for event in events)
