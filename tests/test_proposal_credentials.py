# ruff: noqa: E501 (the samples are pasted whole, as an author would paste them)
"""Credentials never reach review: refused with kind and line at every door, nothing stored.

The samples are made up (random characters in each service's token shape); the ordinary
paragraphs are the kind of technical prose a handbook holds, naming keys without holding any.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from core.errors import InvalidArgument
from core.models import AuditEvent
from reviews.actions.propose import version_propose
from tests.fixtures_credentials import paragraph
from tests.fixtures_mcp import MCP, AgentKey
from wiki.models import Page, Version, VersionStatus
from wiki.validators import validate_markdown

# (kind the author is told, the credential as someone would paste it)
CREDENTIALS: list[tuple[str, str]] = [
    ("AWS access key", "export AWS_ACCESS_KEY_ID=AKIAIDVWTFKTANGPVYQE"),
    ("AWS access key", "Temporary key: ASIA6BEMZUMLENMWFQTR"),
    (
        "AWS secret access key",
        "[default]\naws_secret_access_key = qiJ5PqKfUg7z1xtn1DjaiZ9sHB7QziKzxgErUFUc",
    ),
    ("AWS access key", 'aws_secret_key = "3IdJE+3536/U9Zk+N21XP2a4QL/Ol9TtSz7SzeNP"'),
    (
        "Azure storage account key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=NqIkyBA+hyPi6zcxDf+z381G/1DYeFZQN/c2xOXUmKwvzfyMcU2of/WRRJaLZ+lEtSbWI9vAMuIiLyCIzC8gwr==;EndpointSuffix=core.windows.net",
    ),
    ("Google API key", "maps_key: AIzaqeg577wl6tPbGhKKtCkMWZ9RdnfECc2xbND"),
    ("GitHub token", "GITHUB_TOKEN=ghp_aybhHitbwJuQ5gKeiOLS4GMtbtK4FEzkQxYI"),
    ("GitHub token", "oauth: gho_STCguXPeGq0eKoNy5cQ0uyVsOYYDVJXRhovv"),
    ("GitHub token", "The app token is ghs_uUvBEwJSuBVKpbYeZjCpQrWH10dkcxaP50Aq for now."),
    (
        "GitHub token",
        "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",
    ),
    ("GitLab token", "PRIVATE-TOKEN: glpat-wc7zGVmbELfGmFFHFM1J"),
    ("GitLab token", "runner token glrt-kVzGAVb9VGCdzKfsG_fkNFI-"),
    (
        "Slack token or webhook",
        "SLACK_BOT_TOKEN=xoxb-69698659945-3220554660664-c92all9kovkyqwguwjrnsoiq",
    ),
    (
        "Slack token or webhook",
        "user token xoxp-11891777402-34970340565-7317796424042-be4cb8d74adc1c5d9c114467833b3f84",
    ),
    (
        "Slack token or webhook",
        "curl -X POST https://hooks.slack.com/services/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",
    ),
    ("Stripe live key", "stripe.api_key = 'sk_live_hGdscBhujlxzwhJAReMvB83m'"),
    ("Stripe live key", "restricted: rk_live_BRK5PcXxFSs25g3jFm25ECru"),
    (
        "private key block",
        "-----BEGIN RSA PRIVATE KEY-----\nmfGNEBgEolOGSE6MsaUFs2gjdkTdYDki4gfptAjmgV9G1QxKBghE/iLjxlfXPXBW\nKLnbjFN4LqV/jzIAZ823NEgZAIqxHpWsgTyU4uU438NxescGbbqjhAfe0LwDuyWq\nX+nkYYv6RwBoaEisEw8xCNopcN+soo2s+knQKE9PDXlPO/jWkw84jI9RZh2rXF3I\n-----END RSA PRIVATE KEY-----",
    ),
    (
        "private key block",
        "-----BEGIN OPENSSH PRIVATE KEY-----\ngVQ4P2NUPkrMqZ72GSpPuDrtlUvl9bGEpbeswF6ew+No93zgQbDnBOYpQmp8YwhW\nD1IuixzFMIAJdMr2KUiP3PwbclL9z9RXEj7DStXUyC7HVHcIVWtbgZ5lUH22HVc9\nNbWS5d/Hy954aQG6qsVNz/cKvrEXuiW223PSAnZ6wqZ5BuhNL3BeqtRMW7OL5sIo\n-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "private key block",
        "-----BEGIN EC PRIVATE KEY-----\nb+MACxy51ua+0THkkijxwN/6ZrZNRpP/n9V5khgBuJFfc7/8eslttOaI5KGClDna\ne2sKi53+vo4wq/rWkNN9fVsBkTxqwWhATUvusGRPuvKKmsHcih331NIjRUFlFycL\nB4KzlA5baSk30loWfCodQVPsWeuqKngiqDU8CP70z0oFaIKxIOF8W2whyeTYLsEw\n-----END EC PRIVATE KEY-----",
    ),
    (
        "private key block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nnq/1hBjlp0q98H86nzXLM9zeeCUYLqiRsK0zjGEYAe7pKvvvx+TI8q3+tctJp3cz\n1LZ89Hbpvme8hkw7eVjWkD1rcJ/WDoVX3G4JyTioqg5L09MchtXZlv3mVn7UGpp2\nW4/iDnl9ihxQT5oAfRO/zN6oQj3OC2Sj25Bgm+KZQvhFnKiTNyrkUnihwt9BdadV\n-----END PGP PRIVATE KEY BLOCK-----",
    ),
    (
        "JSON Web Token",
        "token: eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAic3ZjLXFvNjRpayIsICJpYXQiOiAxNzY0NDYwODAwfQ.LNJfv_ULjRjfWcHfpYmFuIVfjfz9pNQFVddpURWdYR-",
    ),
    (
        "JSON Web Token",
        "Authorization: Bearer eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAic3ZjLWp1ZHRpNCIsICJpYXQiOiAxNzY0NDYwODAwfQ.XzOeJGErg9y3JkOBid0szTdKNSn6W--MstzH2GfLGXl",
    ),
    (
        "password in a connection string",
        "DATABASE_URL=postgres://app:QfKPTKJ2XqEnFY@db.internal:5432/prod",
    ),
    ("password in a connection string", "mysql://root:3l02Q4O5n9De@10.0.3.7/billing"),
    (
        "password in a connection string",
        "mongodb+srv://admin:3aHUwMya1bjIaSr8@cluster0.mongodb.net/app",
    ),
    ("password in a connection string", "amqp://orders:TsA0EF4e4Spd@mq.internal:5672/"),
    (
        "password in a connection string",
        "Server=sql01;Database=Sales;User Id=sales_app;Password=noKzqlSziUlW2c;",
    ),
    ("npm token", "//registry.npmjs.org/:_authToken=npm_CUdCg4saAqa6NmozBvNb8a3JuHcsbHbLol6E"),
    ("OpenAI API key", "OPENAI_API_KEY=sk-proj-c798z7O6jHtH9YSICIJhT3BlbkFJzVWTkWYC8KQWEmhsNhZb"),
]

ORDINARY: list[str] = [
    "Set AWS_SECRET_ACCESS_KEY in your environment before running the deploy script.",
    "The GitHub token lives in the repository secrets as `GITHUB_TOKEN`; never print it.",
    "Rotate the Stripe secret key every quarter. Live keys start with `sk_live_`, test keys "
    "with `sk_test_`.",
    "Connect with `postgres://user:password@localhost:5432/app`, replacing user and password.",
    "In CI the URL is `postgres://app:${DB_PASSWORD}@db:5432/app`, filled from the vault.",
    "Use `mysql://<user>:<password>@<host>/<database>` as the connection string template.",
    "The connection string looks like `Server=sql01;Database=Sales;User Id=app;"
    "Password={password};` with the password from the key vault.",
    "A JWT has three parts, header.payload.signature, each base64url-encoded; check `exp`.",
    "Send the token as `Authorization: Bearer <token>`; a missing token gets a 401.",
    "Slack bot tokens start with `xoxb-` and user tokens with `xoxp-`; ask IT for one.",
    "Create a GitLab personal access token (it starts with `glpat-`) with the `read_api` scope.",
    "Generate an SSH key with `ssh-keygen -t ed25519`; the private key stays in `~/.ssh`.",
    "Paste your public key (`ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEXAMPLEpubkey user@laptop`) "
    "into the form; it is not secret.",
    "Certificates begin with `-----BEGIN CERTIFICATE-----`; they are public and may be shared.",
    "The AWS docs use AKIAIOSFODNN7EXAMPLE as a sample access key id.",
    "Our example config: `aws_secret_access_key = YOUR_SECRET_ACCESS_KEY_GOES_HERE_PLEASE`.",
    "The release commit is 3f9c2a7e1b4d8f06a5c3e2d1b0a9f8e7d6c5b4a3 and the image digest is "
    "sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c.",
    "Request ids look like 6f1c2b9e-4a7d-4e3b-9c8a-1d2e3f4a5b6c in the logs.",
    "Keys in the API are strings like `customer.refund_window`; values are JSON.",
    "The token bucket allows 120 requests per minute per agent; bursts are refused.",
    "Use `git config --global credential.helper store` only on your own laptop.",
    "The password policy: at least 12 characters, no reuse of the last five passwords.",
    "`export DATABASE_URL=postgres://postgres@127.0.0.1:5432/quire` uses trust auth locally.",
    "Set `EMAIL_HOST_PASSWORD` to the SMTP password; Quire reads it from the environment.",
    "The webhook URL has the form `https://hooks.slack.com/services/T.../B.../...`.",
    "OAuth access tokens expire after an hour; refresh tokens last 30 days.",
    "Run `npm login` to write your token to `~/.npmrc`; never commit that file.",
    "The API key header is `X-Api-Key`; ask the platform team for a key per service.",
    "Private key files need mode 600: `chmod 600 ~/.ssh/id_ed25519`.",
    "Stripe webhooks are signed; verify the `Stripe-Signature` header with the endpoint secret.",
]

pytestmark = pytest.mark.django_db


def expected_line(text: str) -> int:
    # The one multi-line sample whose credential is on its second line: a credentials file.
    return 4 if text.startswith("[default]\n") else 3


def test_there_are_thirty_of_each() -> None:
    assert len(CREDENTIALS) == len({text for _, text in CREDENTIALS}) == 30
    assert len(ORDINARY) == len(set(ORDINARY)) == 30


def test_it_refuses_each_credential_naming_its_kind_and_line() -> None:
    for kind, text in CREDENTIALS:
        with pytest.raises(InvalidArgument) as refused:
            validate_markdown(paragraph(text))
        message = refused.value.message
        assert f"line {expected_line(text)} ({kind})" in message, (kind, message)
        assert refused.value.field == "markdown"
        # The credential itself is never repeated back (messages end up in logs).
        assert all(len(part) < 12 or part not in message for part in text.split())


def test_it_accepts_ordinary_paragraphs_that_mention_keys_and_tokens() -> None:
    for text in ORDINARY:
        assert validate_markdown(paragraph(text)) == paragraph(text)


def nothing_stored(before: tuple[int, int]) -> None:
    assert (Page.objects.count(), Version.objects.count()) == before


def counts() -> tuple[int, int]:
    return Page.objects.count(), Version.objects.count()


def long_parts(text: str) -> list[str]:
    """The pieces of a sample long enough to be the credential, to look for in stored rows."""
    return [part for part in text.replace("=", " ").replace(":", " ").split() if len(part) >= 16]


def test_mcp_write_tools_refuse_credentials_and_store_nothing(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    before = counts()

    for kind, text in CREDENTIALS:
        line = f"line {expected_line(text)} ({kind})"
        for tool, arguments in (
            ("create_page", {"title": "Deploy", "markdown": paragraph(text)}),
            (
                "update_page",
                {"pageId": page.public_id, "markdown": paragraph(text), "changeSummary": "Keys."},
            ),
            (
                "append_to_page",
                {"pageId": page.public_id, "markdown": paragraph(text), "changeSummary": "Keys."},
            ),
        ):
            error = mcp.error(bot, tool, **arguments)
            assert error.startswith("invalid_argument: markdown holds what looks like a "), error
            assert line in error, (tool, kind, error)

    nothing_stored(before)
    calls = AuditEvent.objects.filter(action__startswith="mcp.", outcome="invalid_argument")
    assert calls.count() == 90
    logged = " ".join(str(event.data) for event in calls)
    assert not [part for _, text in CREDENTIALS for part in long_parts(text) if part in logged]


def test_mcp_accepts_ordinary_paragraphs(
    mcp: MCP, make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]
) -> None:
    page = make_page("Deploy notes", "How we deploy.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))

    for number, text in enumerate(ORDINARY, 1):
        created = mcp.ok(bot, "create_page", title=f"Note {number}", markdown=paragraph(text))
        assert created["status"] == "in_review"
    for text in ORDINARY[:5]:
        mcp.ok(
            bot,
            "append_to_page",
            pageId=page.public_id,
            markdown=paragraph(text),
            changeSummary="Notes.",
        )

    assert Version.objects.filter(author_agent=bot.agent).count() == 35


Door = tuple[str, Client, str, Callable[[str], dict[str, Any]]]


@pytest.fixture
def web_doors(
    make_page: Callable[..., Page],
    client_as: Callable[[User], Client],
    editor: User,
    reader: User,
    reviewer: User,
) -> list[Door]:
    """Every form that takes markdown: new page, edit and append as a reader (who proposes)
    and as an editor (who publishes), and a reviewer's edit-then-approve."""
    page = make_page("Deploy notes", "How we deploy.\n")
    proposal = version_propose(
        actor=reader, page=page, body="How we deploy, step by step.\n", change_summary="More."
    )

    def live_number() -> int:
        # The forms carry the live version they were opened on: the one live now.
        live = Page.objects.select_related("live_version").get(pk=page.pk).live_version
        assert live is not None
        return live.number

    def page_form(body: str) -> dict[str, Any]:
        return {
            "title": "Deploy",
            "body": body,
            "tags": "",
            "instructions": "",
            "change_summary": "Notes.",
            "base_number": live_number(),
            "same_title_ok": "on",  # many pages called Deploy, on purpose
        }

    def append_form(body: str) -> dict[str, Any]:
        return {"body": body, "change_summary": "Notes."}

    def edit_form(body: str) -> dict[str, Any]:
        return {
            "action": "edit",
            "title": "Deploy notes",
            "tags": "",
            "body": body,
            "comment": "Tidied.",
            "expected_live_number": live_number(),
        }

    as_reader, as_editor = client_as(reader), client_as(editor)
    edit = reverse("wiki:edit", args=[page.public_id])
    append = reverse("wiki:append", args=[page.public_id])
    return [
        ("new page (reader)", as_reader, reverse("wiki:new"), page_form),
        ("new page (editor)", as_editor, reverse("wiki:new"), page_form),
        ("edit (reader)", as_reader, edit, page_form),
        ("edit (editor)", as_editor, edit, page_form),
        ("append (reader)", as_reader, append, append_form),
        ("append (editor)", as_editor, append, append_form),
        (
            "edit then approve (reviewer)",
            client_as(reviewer),
            reverse("reviews:review", args=[page.public_id, proposal.number]),
            edit_form,
        ),
    ]


def test_every_form_refuses_credentials_and_stores_nothing(web_doors: list[Door]) -> None:
    before = counts()
    waiting = list(Version.objects.filter(status=VersionStatus.IN_REVIEW).values_list("pk"))

    for kind, text in CREDENTIALS:
        for door, client, url, data in web_doors:
            response = client.post(url, data(paragraph(text)))
            html = response.content.decode()
            assert response.status_code in (200, 400), (door, response.status_code)
            assert "holds what looks like a credential" in html, (door, kind)
            assert f"line {expected_line(text)} ({kind})" in html, (door, kind)

    nothing_stored(before)
    assert list(Version.objects.filter(status=VersionStatus.IN_REVIEW).values_list("pk")) == (
        waiting
    )


def test_every_form_accepts_ordinary_paragraphs(web_doors: list[Door]) -> None:
    # The reviewer first: the reader's next edit withdraws the proposal being reviewed.
    door, client, url, data = web_doors[-1]
    response = client.post(url, data(paragraph(ORDINARY[-1])))
    assert response.status_code == 302, (door, response.content.decode()[:2000])
    for text in ORDINARY[:-1]:
        for door, client, url, data in web_doors[:-1]:
            response = client.post(url, data(paragraph(text)))
            assert response.status_code == 302, (door, response.content.decode()[:2000])


def test_a_credential_in_instructions_is_refused_at_that_field(web_doors: list[Door]) -> None:
    _, client, url, data = web_doors[1]
    form = data("Plain words.\n") | {"instructions": f"Log in with {CREDENTIALS[6][1]}"}

    response = client.post(url, form)

    assert "instructions holds what looks like a credential: line 1 (GitHub token)" in (
        response.content.decode().lower().replace("github", "GitHub")
    )


def test_import_for_review_reports_each_credential_and_imports_the_rest(
    admin_user: User, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for number, (_, text) in enumerate(CREDENTIALS, 1):
        (folder / f"secret-{number:02}.md").write_text(paragraph(text))
    for number, text in enumerate(ORDINARY, 1):
        (folder / f"plain-{number:02}.md").write_text(paragraph(text))
    out, err = io.StringIO(), io.StringIO()

    call_command("import_markdown", str(folder), stdout=out, stderr=err)

    assert "imported 30 pages (created 30, updated 0, unchanged 0)" in out.getvalue()
    skipped = [line for line in err.getvalue().splitlines() if line.startswith("skipped ")]
    assert len(skipped) == 30
    for number, (kind, text) in enumerate(CREDENTIALS, 1):
        assert skipped[number - 1].startswith(
            f"skipped notes/secret-{number:02}.md: body holds what looks like a credential: "
            f"line {expected_line(text)} ({kind})."
        )
    assert not Page.objects.filter(source_path__startswith="notes/secret-").exists()
    assert Version.objects.filter(status=VersionStatus.IN_REVIEW).count() == 30
