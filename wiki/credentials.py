"""Refuse text that holds a credential before it is stored: one check for every door.

Detection is Yelp's detect-secrets (its token-shaped detectors, not its entropy or keyword
guesses, which flag ordinary prose), plus four shapes it does not know, written as its
plugins. A value that is plainly a placeholder (`<password>`, `${TOKEN}`, `xxxxxx`, AWS's
`...EXAMPLE` keys) is not a credential, and neither is prose that names a variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from detect_secrets.filters.heuristic import (
    is_prefixed_with_dollar_sign,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector

from core.errors import InvalidArgument


class _GoogleApiKeyDetector(RegexBasedDetector):
    secret_type = "Google API key"  # noqa: S105 (a kind, not a secret)
    denylist = (re.compile(r"AIza[0-9A-Za-z_\-]{35}"),)


class _AwsSecretKeyDetector(RegexBasedDetector):
    # detect-secrets finds a secret access key only in quotes; a credentials file has none.
    secret_type = "AWS secret access key"  # noqa: S105 (a kind, not a secret)
    denylist = (
        re.compile(
            r"aws_?secret_?(?:access_?)?key\s*[=:]\s*([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
            re.IGNORECASE,
        ),
    )


class _FineGrainedGitHubTokenDetector(RegexBasedDetector):
    secret_type = "GitHub token"  # noqa: S105 (a kind, not a secret)
    denylist = (re.compile(r"github_pat_[A-Za-z0-9_]{40,}"),)


class _ConnectionStringPasswordDetector(RegexBasedDetector):
    # ADO.NET / ODBC / JDBC style: `Server=db;User Id=app;Password=...;`
    secret_type = "password in a connection string"  # noqa: S105 (a kind, not a secret)
    denylist = (re.compile(r";\s*(?:password|pwd)\s*=\s*([^;'\"\s]+)", re.IGNORECASE),)


# Each detector with the kind of credential an author is told about.
_DETECTORS: tuple[tuple[RegexBasedDetector, str], ...] = (
    (AWSKeyDetector(), "AWS access key"),
    (_AwsSecretKeyDetector(), "AWS secret access key"),
    (AzureStorageKeyDetector(), "Azure storage account key"),
    (_GoogleApiKeyDetector(), "Google API key"),
    (GitHubTokenDetector(), "GitHub token"),
    (_FineGrainedGitHubTokenDetector(), "GitHub token"),
    (GitLabTokenDetector(), "GitLab token"),
    (SlackDetector(), "Slack token or webhook"),
    (StripeDetector(), "Stripe live key"),
    (PrivateKeyDetector(), "private key block"),
    (JwtTokenDetector(), "JSON Web Token"),
    (BasicAuthDetector(), "password in a connection string"),
    (_ConnectionStringPasswordDetector(), "password in a connection string"),
    (OpenAIDetector(), "OpenAI API key"),
    (PypiTokenDetector(), "PyPI token"),
    (NpmDetector(), "npm token"),
    (SendGridDetector(), "SendGrid API key"),
    (DiscordBotTokenDetector(), "Discord bot token"),
    (TelegramBotTokenDetector(), "Telegram bot token"),
    (MailchimpDetector(), "Mailchimp API key"),
    (SquareOAuthDetector(), "Square OAuth secret"),
)

_PLACEHOLDER_WORDS = {
    *("password", "passwd", "pass", "pwd", "pw", "secret", "token", "key", "apikey"),
    *("changeme", "hunter", "redacted", "placeholder", "dummy", "sample", "test", "user"),
    # "password" in the languages of translated documentation (tldr's pages.de, .fr...)
    *("passwort", "kennwort", "motdepasse", "mot_de_passe", "contraseña", "contrasena"),
    *("senha", "wachtwoord", "parola", "hasło", "haslo", "lozinka", "heslo", "salasana"),
    *("losenord", "lösenord", "sandi", "kata_sandi", "katasandi", "şifre", "sifre", "mật_khẩu"),
}
_PLACEHOLDER_MARKS = ("example", "placeholder", "redacted", "your", "changeme", "dummy")
_FILLER_RE = re.compile(r"(.)\1{5,}")  # xxxxxx, ******, 000000
# A JWT as a path segment of a link is a signed, public redirect (mail tracking links), not
# a bearer credential; one in a query string (`?token=`) may log someone in, so it counts.
_URL_PATH_BEFORE_RE = re.compile(r"https?://[^\s?#]*/\Z")
_LISTED = 5


def _is_credential(value: str, *, detector: RegexBasedDetector, context: str) -> bool:
    lowered = value.lower()
    if isinstance(detector, JwtTokenDetector):
        before = context[: max(context.find(value), 0)]
        if _URL_PATH_BEFORE_RE.search(before[-2000:]):
            return False
    return not (
        is_templated_secret(value)
        or is_prefixed_with_dollar_sign(value)
        or value.startswith("%")  # a Windows %VARIABLE%
        or is_sequential_string(value)
        or lowered.strip("'\"") in _PLACEHOLDER_WORDS
        or any(mark in lowered for mark in _PLACEHOLDER_MARKS)
        or _FILLER_RE.search(value) is not None
    )


def _holds(detector: RegexBasedDetector, text: str) -> bool:
    found: Iterable[str] = detector.analyze_string(text)
    return any(_is_credential(value, detector=detector, context=text) for value in found)


def refuse_credentials(text: str, *, field: str = "markdown") -> None:
    """Raise InvalidArgument naming each credential's kind and line in `text`, if it holds any.

    Detectors run over the whole text first (a few regular expressions), and line by line
    only when one of them matched, so ordinary pages cost next to nothing.
    """
    if not text:
        return
    found: set[tuple[int, str]] = set()
    lines: list[str] = []
    for detector, kind in _DETECTORS:
        if not _holds(detector, text):
            continue
        lines = lines or text.split("\n")
        found.update((n, kind) for n, line in enumerate(lines, 1) if _holds(detector, line))
    if not found:
        return
    ordered = sorted(found)
    listed = ", ".join(f"line {n} ({kind})" for n, kind in ordered[:_LISTED])
    more = f" and {len(ordered) - _LISTED} more" if len(ordered) > _LISTED else ""
    raise InvalidArgument(
        f"{field} holds what looks like a credential: {listed}{more}. Credentials must not "
        "go into the wiki, where reviewers, agents and the page history would keep them. "
        "Remove it and refer to the secret by name instead (for example “the deploy token "
        "in the team vault”), then submit again; nothing was saved.",
        field=field,
        detail={"credentials": [{"line": n, "kind": kind} for n, kind in ordered]},
    )
