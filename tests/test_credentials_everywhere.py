# ruff: noqa: E501 (the samples are pasted whole, as an author would paste them)
"""Credentials are refused in every stored text, as a reader would see it, and a new agent
token is never kept in the session store.

The bypasses are what a probe got past the body check: new token shapes (OpenAI project keys,
bare npm tokens, a password in a redis:// URL with no user), and a known token disguised so
that the page still shows it (a zero-width space, an HTML entity, emphasis, a full-width
underscore, a prefix in other letter case). The fields are every text that is stored and shown
to someone: titles, tags, change summaries, reviewers' comments (emailed to the agent's owner),
attachment text (returned to agents by get_page), agents' descriptions and use-when lines.
The samples are made up, in each service's shape.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from agents.models import Agent, PageSetEntry
from core.errors import InvalidArgument
from core.models import AuditEvent
from reviews.models import Notification
from tests.fixtures_credentials import GITHUB, paragraph
from tests.fixtures_mcp import MCP, AgentKey
from tests.fixtures_web import rest_client
from wiki.models import Attachment, Page, Version, VersionStatus
from wiki.validators import validate_markdown

pytestmark = pytest.mark.django_db

GITHUB_KIND = "GitHub token"

# (what gets past today, the kind the author is told, the text)
BYPASSES: list[tuple[str, str, str]] = [
    (
        "an OpenAI project key",
        "OpenAI API key",
        "OPENAI_API_KEY=sk-proj-KzyDsvodQS4Ul_PqiIGN_MFAhg3z9VPxTs2Vb_9wDzUFWoNqGBL-t65YSVUiFcNpiKcoAsQ4zpTXLGfCWtwBN26xzJhXWV1Ff2xIxta2Noe71LkiQRwPVimuWpNXRdCH30AQRErNq7nwjAmlntvxSPf8YhWf",
    ),
    ("a bare npm token", "npm token", "NPM_TOKEN=npm_bf5asArftJLm63DgoGpP0ZSucMiQqbBCSDAy"),
    (
        "a redis:// password without a user",
        "password in a connection string",
        "REDIS_URL=redis://:EKjVP0ss5lXTJy@cache.internal:6379/0",
    ),
    (
        "a rediss:// password without a user",
        "password in a connection string",
        "celery broker: rediss://:EKjVP0ss5lXTJy@cache.internal:6380",
    ),
    ("a zero-width space inside", GITHUB_KIND, f"GITHUB_TOKEN={GITHUB[:14]}\u200b{GITHUB[14:]}"),
    ("a soft hyphen inside", GITHUB_KIND, f"GITHUB_TOKEN={GITHUB[:9]}\u00ad{GITHUB[9:]}"),
    ("an entity for its underscore", GITHUB_KIND, "GITHUB_TOKEN=" + GITHUB.replace("_", "&#95;")),
    ("a named entity for it", GITHUB_KIND, "GITHUB_TOKEN=" + GITHUB.replace("_", "&lowbar;")),
    (
        "emphasis splitting it",
        GITHUB_KIND,
        f"GITHUB_TOKEN={GITHUB[:12]}**{GITHUB[12:24]}**{GITHUB[24:]}",
    ),
    (
        "inline HTML splitting it",
        GITHUB_KIND,
        f"GITHUB_TOKEN={GITHUB[:12]}<b>{GITHUB[12:24]}</b>{GITHUB[24:]}",
    ),
    ("a full-width underscore", GITHUB_KIND, "GITHUB_TOKEN=" + GITHUB.replace("_", "\uff3f")),
    ("its prefix in capitals", GITHUB_KIND, "GITHUB_TOKEN=GHP" + GITHUB[3:]),
    ("an AWS key in small letters", "AWS access key", "aws_access_key_id = akiaidvwtfktangpvyqe"),
    ("a Stripe key in capitals", "Stripe live key", "STRIPE_KEY=SK_LIVE_hGdscBhujlxzwhJAReMvB83m"),
    (
        "a private key header in small letters",
        "private key block",
        "-----begin rsa private key-----\nmfGNEBgEolOGSE6MsaUFs2gjdkTdYDki4gfptAjmgV9G1QxKBghE/iLjxlfXPXBW",
    ),
]

# Prose the normalisation must not turn into a credential.
ORDINARY: list[str] = [
    "**Note:** npm tokens start with `npm_`; *never* paste one into a page.",
    "OpenAI project keys begin with `sk-proj-`; keep yours in the vault.",
    "Point Celery at `redis://:<password>@cache:6379/0`, the password from the vault.",
    "Locally `REDIS_URL=redis://localhost:6379/0` needs no password at all.",
    "With a password: `redis://:${REDIS_PASSWORD}@redis:6379/0` in docker-compose.",
    "Entities such as &amp;, &lt;b&gt; and &#95; show as &, <b> and _.",
    "\uff26\uff55\uff4c\uff4c-width letters (\uff21\uff22\uff23\uff11\uff12\uff13) read as "
    "ABC123, and \uff3f as an underscore.",
    "The __init__.py file and *args, **kwargs are Python's, not secrets.",
    "Globs like `**/*.md` and `docs/**` match every markdown file below.",
    "A word\u00adbreak\u00adable word and a zero\u200bwidth space are invisible here.",
    "An AWS region such as ap-southeast-1 and the Asia-Pacific sales team are fine.",
    "The ASIA team (Asiapacificsalesregion) meets on Mondays.",
]


@pytest.mark.parametrize(("case", "kind", "text"), BYPASSES, ids=[case for case, _, _ in BYPASSES])
def test_it_refuses_a_credential_in_a_body_however_it_is_written(
    case: str, kind: str, text: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        validate_markdown(paragraph(text))
    assert f"line 3 ({kind})" in refused.value.message, (case, refused.value.message)


@pytest.mark.parametrize("text", ORDINARY)
def test_it_accepts_ordinary_prose_with_emphasis_entities_and_wide_letters(text: str) -> None:
    assert validate_markdown(paragraph(text)) == paragraph(text)


# --- every stored field, at the doors ------------------------------------------------------


def refusal(error: str, field: str, kind: str = GITHUB_KIND) -> None:
    # Forms start the sentence with a capital.
    expected = f"{field} holds what looks like a credential: line 1 ({kind})"
    assert expected.lower() in error.lower(), error


def test_mcp_refuses_a_credential_in_a_title_tags_or_change_summary(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    versions = Version.objects.count()

    refusal(mcp.error(bot, "create_page", title=f"Token {GITHUB}", markdown="Hi.\n"), "title")
    refusal(
        mcp.error(bot, "create_page", title="Deploy", markdown="Hi.\n", tags=["ok", GITHUB]),
        "tags[1]",
    )
    refusal(
        mcp.error(
            bot,
            "update_page",
            pageId=page.public_id,
            title="Deploy notes",
            markdown="How we deploy, again.\n",
            changeSummary=f"Added {GITHUB[:14]}\u200b{GITHUB[14:]}",
        ),
        "changeSummary",
    )
    refusal(
        mcp.error(
            bot,
            "append_to_page",
            pageId=page.public_id,
            markdown="More.\n",
            changeSummary="npm_bf5asArftJLm63DgoGpP0ZSucMiQqbBCSDAy",
        ),
        "changeSummary",
        "npm token",
    )

    assert Version.objects.count() == versions
    logged = " ".join(str(event.data) for event in AuditEvent.objects.all())
    assert GITHUB[14:] not in logged and "bf5asArftJLm63" not in logged


def test_the_web_refuses_a_credential_in_a_title_tags_or_change_summary(
    client_as: Callable[[User], Client], editor: User
) -> None:
    client = client_as(editor)
    form = {
        "title": "Deploy",
        "body": "Hi.\n",
        "tags": "",
        "instructions": "",
        "change_summary": "",
    }
    for field, change, name in (
        ("title", {"title": f"Deploy {GITHUB}"}, "title"),
        ("tags", {"tags": f"ops, {GITHUB}"}, "tags[1]"),
        ("change_summary", {"change_summary": f"Key {GITHUB}"}, "changeSummary"),
    ):
        response = client.post(reverse("wiki:new"), form | change)
        assert response.status_code in (200, 400), (field, response.status_code)
        refusal(response.content.decode(), name)
    assert not Page.objects.exists()


def test_rest_refuses_a_credential_in_a_reject_or_approve_comment(
    agent_proposal: Version, reviewer: User
) -> None:
    api = rest_client(reviewer)
    url = f"/api/v1/pages/{agent_proposal.page.public_id}/versions/{agent_proposal.number}"
    notified = Notification.objects.count()

    for action in ("reject", "approve"):
        response = api.post(f"{url}/{action}", {"comment": f"Use {GITHUB}"}, format="json")
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        refusal(error["message"], "comment")

    agent_proposal.refresh_from_db()
    assert agent_proposal.status == VersionStatus.IN_REVIEW
    assert Notification.objects.count() == notified  # nobody was emailed the key


def test_the_review_page_refuses_a_credential_in_a_reject_comment(
    agent_proposal: Version, reviewer: User, client_as: Callable[[User], Client]
) -> None:
    url = f"/reviews/pages/{agent_proposal.page.public_id}/v{agent_proposal.number}/"
    response = client_as(reviewer).post(
        url, {"action": "reject", "comment": "Use " + GITHUB.replace("_", "&#95;")}
    )
    assert response.status_code in (200, 400)
    refusal(response.content.decode(), "comment")
    agent_proposal.refresh_from_db()
    assert agent_proposal.status == VersionStatus.IN_REVIEW


def test_it_refuses_an_attachment_whose_text_holds_a_credential(
    make_page: Callable[..., Page], editor: User, client_as: Callable[[User], Client]
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    upload = SimpleUploadedFile(
        "notes.txt", f"Step one.\nLog in with {GITHUB}\n".encode(), content_type="text/plain"
    )

    response = client_as(editor).post(
        reverse("wiki:attachment_upload", kwargs={"public_id": page.public_id}), {"file": upload}
    )

    assert response.status_code in (200, 400)
    text = response.content.decode()
    expected = "the text of notes.txt holds what looks like a credential: line 2 (github token)"
    assert expected in text.lower(), text
    assert not Attachment.objects.exists()


def test_it_refuses_a_credential_in_an_agents_description_or_use_when(
    make_page: Callable[..., Page], admin_user: User, client_as: Callable[[User], Client]
) -> None:
    admin = client_as(admin_user)
    response = admin.post(
        reverse("agents:new"), {"name": "support-bot", "description": f"Uses {GITHUB}"}
    )
    assert response.status_code == 400
    refusal(response.content.decode(), "description")
    assert not Agent.objects.exists()

    from agents import services as agent_services

    agent, _ = agent_services.agent_create(actor=admin_user, name="support-bot")
    with pytest.raises(InvalidArgument) as refused:
        agent_services.page_set_add(
            actor=admin_user,
            agent=agent,
            page=make_page("Refunds"),
            use_when=["For refunds.", f"Log in with {GITHUB}"],
        )
    refusal(refused.value.message, "use-when line 2")
    assert not PageSetEntry.objects.exists()


# --- a new agent token is never kept in the session store ------------------------------------

TOKEN = re.compile(r"qa_[A-Za-z0-9_-]{40,}")


def stored_sessions() -> str:
    """Everything the session store holds: the rows, and the cache cached_db sessions use."""
    rows = [str(session.get_decoded()) for session in Session.objects.all()]
    cached = [str(cache.get(key)) for key in _session_cache_keys()]
    return " ".join(rows + cached)


def _session_cache_keys() -> list[str]:
    from django.contrib.sessions.backends.cached_db import KEY_PREFIX

    return [KEY_PREFIX + session.session_key for session in Session.objects.all()]


@pytest.mark.parametrize("action", ["create", "rotate"])
def test_a_new_token_is_shown_once_and_never_kept_in_the_session_store(
    admin_user: User, action: str
) -> None:
    admin = Client()
    admin.force_login(admin_user)
    if action == "create":
        response = admin.post(reverse("agents:new"), {"name": "support-bot"})
    else:
        from agents import services as agent_services

        agent, _ = agent_services.agent_create(actor=admin_user, name="support-bot")
        response = admin.post(reverse("agents:rotate", args=[agent.pk]))
    assert response.status_code == 302

    kept = stored_sessions()
    shown = admin.get(response["Location"])
    [token] = set(TOKEN.findall(shown.content.decode()))

    assert token not in kept and "qa_" not in kept
    assert token not in stored_sessions()
    assert not TOKEN.findall(admin.get(response["Location"]).content.decode())


def test_the_token_page_shows_nothing_to_a_browser_without_its_cookie(admin_user: User) -> None:
    """What the session store keeps alone cannot show the token: the browser's one-time
    cookie holds the other half."""
    admin = Client()
    admin.force_login(admin_user)
    response = admin.post(reverse("agents:new"), {"name": "support-bot"})
    for name in list(admin.cookies):
        if name != "sessionid":
            del admin.cookies[name]

    page = admin.get(response["Location"]).content.decode()

    assert not TOKEN.findall(page)
    assert "cannot be shown again" in page


def test_import_skips_a_file_whose_kept_frontmatter_holds_a_credential(
    admin_user: User, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "deploy.md").write_text(f"---\ntitle: Deploy\nci_token: {GITHUB}\n---\nSteps.\n")
    (folder / "plain.md").write_text("---\ntitle: Plain\nowner: ops\n---\nWords.\n")
    out, err = io.StringIO(), io.StringIO()

    call_command("import_markdown", str(folder), "--publish", stdout=out, stderr=err)

    assert "imported 1 pages" in out.getvalue()
    assert (
        "skipped notes/deploy.md: the frontmatter holds what looks like a credential: "
        "line 1 (GitHub token)"
    ) in err.getvalue()
    assert list(Page.objects.values_list("title", flat=True)) == ["Plain"]


def test_the_admin_rotating_many_agents_keeps_no_token_in_the_session_store(
    admin_user: User,
) -> None:
    """As messages, a dozen tokens overflowed the message cookie into the session."""
    from agents import services as agent_services

    agents = [
        agent_services.agent_create(actor=admin_user, name=f"bot-{n:02}")[0] for n in range(12)
    ]
    admin = Client()
    admin.force_login(admin_user)

    response = admin.post(
        "/admin/agents/agent/",
        {"action": "rotate_tokens", "_selected_action": [agent.pk for agent in agents]},
    )

    tokens = set(TOKEN.findall(response.content.decode()))
    assert len(tokens) == 12
    assert "no-store" in response["Cache-Control"]
    kept = stored_sessions()
    assert not [token for token in tokens if token in kept]
