"""Refuse text that holds a credential before it is stored: one check for every door and
every stored text (bodies, instructions, titles, tags, summaries, comments, attachment text).

Detection is Yelp's detect-secrets (its token-shaped detectors, not its entropy or keyword
guesses, which flag ordinary prose), plus shapes it does not know, written as its plugins.
A value that is plainly a placeholder (`<password>`, `${TOKEN}`, `xxxxxx`, AWS's `...EXAMPLE`
keys) is not a credential, and neither is prose that names a variable. The text is checked as
written and as a reader sees it (`as_read`): entities decoded, invisible characters gone, wide
forms folded, emphasis flattened, percent-escapes decoded, look-alike letters of other
scripts (Cyrillic U+0440 for "p") read as the Latin letter they pass for, so a token cannot hide
behind its own markup. A token split over two lines, one written in base64 (a Kubernetes
secret's `data:`), and a private key pasted without its BEGIN/END lines are credentials too.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from itertools import pairwise
from typing import NamedTuple
from urllib.parse import unquote

from confusable_homoglyphs import utils as confusables_data
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

from core.characters import DEFAULT_IGNORABLE_RE
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


class _OpenAIProjectKeyDetector(RegexBasedDetector):
    # Project, service-account and admin keys; detect-secrets knows only the older shape.
    secret_type = "OpenAI API key"  # noqa: S105 (a kind, not a secret)
    denylist = (re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}"),)


class _NpmTokenDetector(RegexBasedDetector):
    # detect-secrets finds npm tokens only on an .npmrc `_authToken=` line.
    secret_type = "npm token"  # noqa: S105 (a kind, not a secret)
    denylist = (re.compile(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),)


class _UrlPasswordWithoutUserDetector(RegexBasedDetector):
    # `redis://:password@host`: Redis URLs often have a password and no user, which
    # detect-secrets' basic-auth shape (`user:password@`) misses.
    secret_type = "password in a connection string"  # noqa: S105 (a kind, not a secret)
    denylist = (re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://:([^\s{}@/]+)@"),)


_ASSIGNED = "password assignment"


class _PasswordAssignmentDetector(RegexBasedDetector):
    # `password = 'hunter22'`, `"db_password": "..."`, `PASSWORD: "..."`: a value in quotes
    # assigned to a name that says it is a password or secret (a config file, code).
    secret_type = "password assignment"  # noqa: S105 (a kind, not a secret)
    denylist = (
        re.compile(
            r"(?:pass(?:word|wd|phrase)?|pwd|secret|api_?key|access_?token|auth_?token)"
            r"""["']?\s*(?::|=|:=|=>)\s*(?:'([^'\s]{6,200})'|"([^"\s]{6,200})")""",
            re.IGNORECASE,
        ),
    )


class _AnyCase(RegexBasedDetector):
    """A detector's shapes in any letter case: `GHP_...` or a Stripe key in capitals is still
    the token to whoever reads it and types it back."""

    secret_type = ""
    denylist: tuple[re.Pattern[str], ...] = ()

    def __init__(self, detector: RegexBasedDetector) -> None:
        self.secret_type = detector.secret_type
        self.denylist = tuple(
            re.compile(pattern.pattern, pattern.flags | re.IGNORECASE)
            for pattern in detector.denylist
        )


class _AnyCaseAwsKeyDetector(RegexBasedDetector):
    # Bounded on both sides, unlike detect-secrets' capitals-only shape: in any case "Asia"
    # followed by sixteen letters would otherwise be a key.
    secret_type = "AWS access key"  # noqa: S105 (a kind, not a secret)
    denylist = (
        re.compile(
            r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])",
            re.IGNORECASE,
        ),
    )


class _Check(NamedTuple):
    detector: RegexBasedDetector
    kind: str  # what the author is told
    # A detector in any letter case is a slow regular expression: it runs only when the
    # text, in small letters, holds one of these (none: always).
    hints: tuple[str, ...] = ()


_DETECTORS: tuple[_Check, ...] = (
    _Check(AWSKeyDetector(), "AWS access key"),
    _Check(_AnyCaseAwsKeyDetector(), "AWS access key", ("akia", "asia", "abia", "acca", "a3t")),
    _Check(_AwsSecretKeyDetector(), "AWS secret access key"),
    _Check(AzureStorageKeyDetector(), "Azure storage account key"),
    _Check(_GoogleApiKeyDetector(), "Google API key"),
    _Check(
        _AnyCase(GitHubTokenDetector()),
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _Check(_AnyCase(_FineGrainedGitHubTokenDetector()), "GitHub token", ("github_pat_",)),
    _Check(
        _AnyCase(GitLabTokenDetector()),
        "GitLab token",
        (
            *("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-"),
            *("glimt-", "glptt-", "glagent-", "gloas-"),
        ),
    ),
    _Check(SlackDetector(), "Slack token or webhook", ("xox", "hooks.slack.com")),
    _Check(_AnyCase(StripeDetector()), "Stripe live key", ("k_live_",)),
    _Check(_AnyCase(PrivateKeyDetector()), "private key block", ("private key", "putty-user-key")),
    _Check(JwtTokenDetector(), "JSON Web Token"),
    _Check(BasicAuthDetector(), "password in a connection string"),
    _Check(_ConnectionStringPasswordDetector(), "password in a connection string"),
    _Check(
        _PasswordAssignmentDetector(),
        _ASSIGNED,
        ("pass", "pwd", "secret", "key", "token"),
    ),
    _Check(OpenAIDetector(), "OpenAI API key"),
    _Check(
        _AnyCase(_OpenAIProjectKeyDetector()),
        "OpenAI API key",
        ("sk-proj-", "sk-svcacct-", "sk-admin-"),
    ),
    _Check(PypiTokenDetector(), "PyPI token"),
    _Check(NpmDetector(), "npm token"),
    _Check(_AnyCase(_NpmTokenDetector()), "npm token", ("npm_",)),
    _Check(_UrlPasswordWithoutUserDetector(), "password in a connection string", ("://:",)),
    _Check(SendGridDetector(), "SendGrid API key"),
    _Check(DiscordBotTokenDetector(), "Discord bot token"),
    _Check(TelegramBotTokenDetector(), "Telegram bot token"),
    _Check(MailchimpDetector(), "Mailchimp API key"),
    _Check(SquareOAuthDetector(), "Square OAuth secret"),
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


# Inline markup that splits a word without showing: emphasis, strike-through and code marks,
# and the inline HTML tags the sanitiser keeps (never `<password>`, a placeholder).
_INLINE_MARKS = re.compile(
    r"[*~`]|</?(?:a|abbr|b|code|del|em|i|ins|kbd|mark|q|s|small|span|strong|sub|sup|u)"
    r"(?:\s[^<>]*)?>",
    re.IGNORECASE,
)


_MARKUP_CHARS = frozenset("&*~`<%")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_WORD = re.compile(r"[^\W_]+|_", re.UNICODE)
_RUN = re.compile(r"\w+(?:[-_./+=]\w+)*", re.UNICODE)


@cache
def _lookalikes() -> dict[str, str]:
    """Each letter or digit of another script that Unicode's confusables data says passes
    for an ASCII letter or digit (Cyrillic U+0440 for "p", Greek
    U+039F for "O")."""
    table: dict[str, str] = {}
    for char, glyphs in confusables_data.load("confusables.json").items():
        if len(char) != 1 or char.isascii():
            continue
        like = next(
            (g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()),
            None,
        )
        if like is not None:
            table[char] = like
    return table


def _fold_lookalikes(line: str) -> str:
    """Runs of word characters that mix ASCII with look-alikes of other scripts, written in
    ASCII. A word wholly in another script (Russian prose) is left as it is."""
    table = _lookalikes()

    def fold(match: re.Match[str]) -> str:
        run = match.group()
        if run.isascii() or not any(c.isascii() and c.isalnum() for c in run):
            return run
        return "".join(table.get(char, char) for char in run)

    return _RUN.sub(fold, line)


def as_read(text: str) -> str:
    """`text` as a reader of the rendered page takes it in, line for line: HTML entities and
    percent-escapes decoded, default-ignorable characters (zero-width, soft hyphen...)
    removed, full-width and other compatibility forms folded (NFKC), look-alike letters read
    as the ASCII they pass for, and inline emphasis and tags flattened."""
    lines = []
    for line in text.split("\n"):
        if line.isascii() and not _MARKUP_CHARS.intersection(line):
            lines.append(line)  # most lines: nothing to decode, fold or flatten
            continue
        line = html.unescape(line)
        if _PERCENT_ESCAPE.search(line):
            line = unquote(line)
        line = line.replace("\n", " ").replace("\r", " ")
        line = unicodedata.normalize("NFKC", DEFAULT_IGNORABLE_RE.sub("", line))
        if not line.isascii():
            line = _fold_lookalikes(line)
        lines.append(_INLINE_MARKS.sub("", line))
    return "\n".join(lines)


def _found(lines: list[tuple[int, str]]) -> set[tuple[int, str]]:
    """Each (line number, kind) in the numbered lines. Detectors run over all of them at once
    first (a few regular expressions), and line by line only when one of them matched, so
    ordinary pages cost next to nothing."""
    found: set[tuple[int, str]] = set()
    text = "\n".join(line for _, line in lines)
    lowered = text.lower()
    for detector, kind, hints in _DETECTORS:
        if hints and not any(hint in lowered for hint in hints):
            continue
        if _holds(detector, text):
            found.update((n, kind) for n, line in lines if _holds(detector, line))
    return found


# Where a line may be cut and go on the next: spaces, a shell's or Python's continuation, a
# string closed on one line and opened again on the next (`"ghp_abc" +` / `"def"`).
_LINE_START = re.compile(r"""\A[ \t>]*(?:\+[ \t]*)?["']?""")
_TOKEN_END = re.compile(r"[\w+/=-]{4,}[\"']?[ \t\\+]*\Z")
_TOKEN_START = re.compile(r"""[ \t>]*(?:\+[ \t]*)?["']?[\w+/=-]{4,}""")
# How much of each line's end and the next one's start a split token can span.
_JOIN_SPAN = 400


def _without_line_end(line: str) -> str:
    """`line` without what continues it on the next one (trailing spaces, `\\`, `...`, a
    closing quote and `+`). Done with string methods: as a regular expression searched over
    the line it cost time cubic in a run of spaces (a padded table row took seconds)."""
    line = line.rstrip(" \t")
    if line.endswith("..."):
        return line[:-3].rstrip(" \t")
    # A shell's or Python's `\` and a `+` both may follow a string closed on this line.
    if line.endswith(("\\", "+")):
        line = line[:-1].rstrip(" \t")
    if line.endswith(("'", '"')):
        line = line[:-1]
    return line.rstrip(" \t")


def _joined(lines: list[tuple[int, str]]) -> set[tuple[int, str]]:
    """Credentials that show only when a line is read on into the next one (a token cut in two
    by a line break or a blank line), found on the first of the two lines."""
    written = [(n, line) for n, line in lines if line.strip()]
    pairs = [
        (n, _without_line_end(first[-_JOIN_SPAN:]) + _LINE_START.sub("", second[:_JOIN_SPAN]))
        for (n, first), (m, second) in pairwise(written)
        # Blank lines between the halves do not part them for a reader (two paragraphs),
        # when a token's letters end the one and start the other (prose ends with a stop).
        if m == n + 1 or (_TOKEN_END.search(first[-64:]) and _TOKEN_START.match(second))
    ]
    if not pairs:
        return set()
    return _found(pairs)


# Base64 a reader would decode: a run of its letters on one line, or a block of lines that
# hold nothing else (a key's body, wrapped at 64 or 76 characters).
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}")
_BASE64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/]{16,}={0,2}[ \t]*")
# DER of a private key: SEQUENCE, its length, then version 0 or 1 (INTEGER) followed by the
# next INTEGER (PKCS #1), the algorithm's SEQUENCE (PKCS #8) or the key's OCTET STRING
# (SEC 1). A certificate or a public key starts with a SEQUENCE inside, never a version.
_DER_PRIVATE_KEY = re.compile(
    rb"\A\x30(?:[\x00-\x7f]|\x81.|\x82..)\x02\x01[\x00\x01][\x02\x30\x04]", re.S
)
_OPENSSH_KEY = b"openssh-key-v1\x00"


def _decoded(run: str) -> bytes:
    run = run.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        return base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _in_base64(lines: list[tuple[int, str]]) -> set[tuple[int, str]]:
    """Credentials inside base64 (a private key's body without its BEGIN/END lines, a
    token encoded), found on the line where the base64 starts."""
    runs: list[tuple[int, str]] = []
    block: list[tuple[int, str]] = []
    for n, line in [*lines, (0, "")]:
        if _BASE64_LINE.fullmatch(line):
            block.append((n, line.strip()))
            continue
        if block:
            runs.append((block[0][0], "".join(part for _, part in block)))
        block = []
        runs.extend((n, match.group()) for match in _BASE64_RUN.finditer(line))
    found: set[tuple[int, str]] = set()
    for n, run in runs:
        data = _decoded(run)
        if not data:
            continue
        if _DER_PRIVATE_KEY.match(data) or data.startswith(_OPENSSH_KEY):
            found.add((n, "private key block"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if all(char.isprintable() or char in "\n\r\t" for char in text):
            found.update((n, kind) for _, kind in _found(list(enumerate(text.split("\n")))))
    return found


# What a reader never sees: an HTML comment (the sanitiser drops it), kept line for line.
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Between a table's cells, for reading a row's cells on into each other.
_CELL_BORDER = re.compile(r"[ \t]*\|[ \t]*")


def _as_shown(text: str) -> str:
    """`text` without its HTML comments (a newline kept for each one they held), and with a
    table row's cells read into each other: how a token cut by `<!-- -->` or put half in
    one cell and half in the next shows on the page."""
    if "<!--" in text:
        text = _HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    if "|" not in text:
        return text
    return "\n".join(
        _CELL_BORDER.sub("", line) if line.count("|") >= 2 else line for line in text.split("\n")
    )


def credentials_in(text: str) -> list[tuple[int, str]]:
    """Each (line, kind) of a credential in `text`, as written or as a reader would see it:
    its own markup read past, its comments dropped, its table cells read on, read on over
    a line break, or decoded from base64."""
    if not text:
        return []
    written = list(enumerate(text.split("\n"), 1))
    found = _credentials_in(written)
    shown = _as_shown(text)
    if not found and shown != text:
        # Shown otherwise, only the lines that show differently (and their neighbours).
        found = _credentials_in(_around_changes(written, shown.split("\n")))
    # A token of a known kind assigned to `api_key = "..."` is told by its kind alone.
    named = {n for n, kind in found if kind != _ASSIGNED}
    return [(n, kind) for n, kind in found if kind != _ASSIGNED or n not in named]


def _credentials_in(written: list[tuple[int, str]]) -> list[tuple[int, str]]:
    found = _found(written)
    # As read, only the lines that read differently need another look.
    read_lines = as_read("\n".join(line for _, line in written)).split("\n")
    read = list(zip(written, read_lines, strict=True))
    found |= _found([(n, seen) for (n, line), seen in read if seen != line])
    as_seen = [(n, seen) for (n, _), seen in read]
    if not found:
        # A split or an encoded token is looked for only where nothing plainer was found:
        # the author is told the first reason to remove it.
        found = _joined(as_seen) | _in_base64(as_seen)
    return sorted(found)


def _around_changes(written: list[tuple[int, str]], shown: list[str]) -> list[tuple[int, str]]:
    """The shown lines that differ from the written ones, each with the non-blank line before
    and after it (a token may run on from or into them)."""
    changed = [
        i for i, ((_, line), seen) in enumerate(zip(written, shown, strict=True)) if line != seen
    ]
    keep: set[int] = set()
    for i in changed:
        keep.add(i)
        before = next((j for j in range(i - 1, -1, -1) if shown[j].strip()), None)
        after = next((j for j in range(i + 1, len(shown)) if shown[j].strip()), None)
        keep.update(j for j in (before, after) if j is not None)
    return [(written[i][0], shown[i]) for i in sorted(keep)]


def holds_credential(text: str) -> bool:
    return bool(credentials_in(text))


def refuse_credentials(text: str, *, field: str = "markdown", name: str = "") -> None:
    """Raise InvalidArgument naming each credential's kind and line in `text`, as written or
    as read, if it holds any. `field` is the field the error belongs to; `name` what the
    message calls it (`tags[2]`, `the text of notes.pdf`)."""
    ordered = credentials_in(text)
    if not ordered:
        return
    listed = ", ".join(f"line {n} ({kind})" for n, kind in ordered[:_LISTED])
    more = f" and {len(ordered) - _LISTED} more" if len(ordered) > _LISTED else ""
    raise InvalidArgument(
        f"{name or field} holds what looks like a credential: {listed}{more}. Credentials must not "
        "go into the wiki, where reviewers, agents and the page history would keep them. "
        "Remove it and refer to the secret by name instead (for example “the deploy token "
        "in the team vault”), then submit again; nothing was saved.",
        field=field,
        detail={"credentials": [{"line": n, "kind": kind} for n, kind in ordered]},
    )
