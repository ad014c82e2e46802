"""Checks a proposal gets before a person looks at it: links to pages that do not exist or
that some readers of the page cannot open, text that repeats another page or a waiting
proposal, a credential-like string, and a heading structure the change breaks. Shown on the
review page and returned to the agent with its write result; they warn, never refuse.

Only what the change adds is checked (a broken link already live is not the proposal's), and
pages are named only when `reader` (the reviewer, or the agent) may see them.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from reviews.merge import appended_body
from wiki import permissions
from wiki.markdown import page_references
from wiki.models import Page, Version, VersionKind, VersionStatus
from wiki.scope import Scope
from wiki.search import search_pages
from wiki.selectors import in_scope

LINKS_CHECKED = 20
PARAGRAPHS_CHECKED = 5
DUPLICATE_MIN_CHARS = 80  # a shorter paragraph repeating another page is ordinary
DUPLICATE_RATIO = 0.85
PAGE_LINK = re.compile(r"\]\(\s*/p/(pg_[a-z2-7]{8})/?[^)]*\)")
SECRET_WORD = re.compile(
    r"(?i)\b(pass(?:word|wd|phrase)?|secret|token|api[_ -]?key|access[_ -]?key|"
    r"private[_ -]?key|client[_ -]?secret|credentials?)\b[\"']?\s*[:=]\s*[\"']?([^\s\"'`<>]{6,})"
)
PLACEHOLDER = re.compile(
    r"(?i)^(\$\{?\w+\}?|%\w+%|\{\{.*\}\}|x{4,}|\*{4,}|\.{3,}|<.*>|example\w*)$"
)
RANDOM_TOKEN = re.compile(r"(?<![\w/.-])[A-Za-z0-9_+/=-]{32,}(?![\w/.-])")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)[\s#]*$")


@dataclass(frozen=True)
class Finding:
    """One thing a reviewer should look at: its kind, a sentence, and the line it is on."""

    kind: str  # "broken_link", "hidden_link", "duplicate", "credential", "headings"
    message: str
    line: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.message, "line": self.line}


def _texts(version: Version) -> tuple[str, str]:
    """What is live and what approving `version` would make of it."""
    live = version.page.live_version
    before = live.body if live is not None else ""
    if version.kind == VersionKind.APPEND:
        return before, appended_body(before, version.proposed_body)
    return before, version.body


def _added_lines(before: str, after: str) -> list[tuple[int, str]]:
    """(line number in `after`, text) of each line the change adds or rewrites."""
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        (j + 1, new[j])
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("insert", "replace")
        for j in range(j1, j2)
    ]


def _new_links(before: str, after: str) -> list[str]:
    """The page ids `after` links to that `before` did not (the first LINKS_CHECKED)."""
    linked = [*page_references(after), *PAGE_LINK.findall(after)]
    known = set(page_references(before)) | set(PAGE_LINK.findall(before))
    return [pid for pid in dict.fromkeys(linked) if pid not in known][:LINKS_CHECKED]


def _link_findings(page: Page, new: list[str], reader: Scope) -> list[Finding]:
    if not new:
        return []
    targets = {
        target.public_id: target
        for target in Page.objects.filter(public_id__in=new).select_related("live_version")
    }
    visible = set(
        Page.objects.filter(reader.q(), public_id__in=list(targets)).values_list(
            "public_id", flat=True
        )
    )
    found = []
    readers: set[int] | None = None
    for public_id in new:
        target = targets.get(public_id)
        if target is None or target.live_version_id is None or target.archived:
            found.append(
                Finding(
                    "broken_link",
                    f"{public_id} links to no live page (none by that id, or it is archived "
                    "or not published yet): readers see a broken link.",
                )
            )
            continue
        if readers is None:
            readers = set(permissions.people_with("read", page).values_list("pk", flat=True))
        cannot = readers - set(permissions.people_with("read", target).values_list("pk", flat=True))
        if cannot:
            name = f"“{target.title}” ({public_id})" if public_id in visible else public_id
            found.append(
                Finding(
                    "hidden_link",
                    f"{name} is readable by fewer people than this page: {len(cannot)} of "
                    "its readers would see a broken link.",
                )
            )
    return found


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[*_`#>\[\]()]", " ", text).split()).lower()


def _paragraphs(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Runs of added lines (first line number, text), long enough to be worth matching."""
    runs: list[tuple[int, list[str]]] = []
    previous = -2
    for number, text in lines:
        if not text.strip() or number != previous + 1 or not runs:
            if text.strip():
                runs.append((number, [text]))
        else:
            runs[-1][1].append(text)
        previous = number
    return [
        (start, " ".join(run))
        for start, run in runs
        if len(_normalised(" ".join(run))) >= DUPLICATE_MIN_CHARS
    ][:PARAGRAPHS_CHECKED]


def _repeats(paragraph: str, body: str) -> bool:
    wanted = _normalised(paragraph)
    if wanted in _normalised(body):
        return True
    return any(
        difflib.SequenceMatcher(None, wanted, _normalised(block)).ratio() >= DUPLICATE_RATIO
        for block in re.split(r"\n\s*\n", body)
        if abs(len(_normalised(block)) - len(wanted)) < len(wanted) // 3
    )


def _duplicate_findings(
    version: Version, paragraphs: list[tuple[int, str]], reader: Scope
) -> list[Finding]:
    found = []
    for line, paragraph in paragraphs:
        query = " ".join(re.findall(r"\w{4,}", paragraph)[:8])
        hits = [
            hit
            for hit in search_pages(query, scope=reader, limit=5, semantic=False)
            if hit.page_id != version.page_id
        ]
        bodies = dict(
            Page.objects.filter(pk__in=[hit.page_id for hit in hits]).values_list(
                "pk", "live_version__body"
            )
        )
        same = [hit for hit in hits if _repeats(paragraph, bodies.get(hit.page_id) or "")]
        if same:
            found.append(
                Finding(
                    "duplicate",
                    f"this paragraph repeats “{same[0].title}” ({same[0].public_id}): link to "
                    "it, or say why both pages need it.",
                    line,
                )
            )
            continue
        waiting = (
            Version.objects.filter(
                in_scope(reader),
                status=VersionStatus.IN_REVIEW,
                body__contains=paragraph[:60],
            )
            .exclude(pk=version.pk)
            .select_related("page")
            .first()
        )
        if waiting is not None:
            found.append(
                Finding(
                    "duplicate",
                    f"this paragraph is also in a waiting proposal, v{waiting.number} of "
                    f"“{waiting.page.title}” ({waiting.page.public_id}).",
                    line,
                )
            )
    return found


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _credential_findings(lines: list[tuple[int, str]]) -> list[Finding]:
    found = []
    for number, text in lines:
        said = SECRET_WORD.search(text)
        looks_set = said is not None and not PLACEHOLDER.match(said.group(2))
        random = any(
            _entropy(token) > 4.0 and re.search(r"\d", token) and re.search(r"[A-Za-z]", token)
            for token in RANDOM_TOKEN.findall(text)
        )
        if looks_set or random:
            what = f"a value for “{said.group(1)}”" if looks_set and said else "a random token"
            found.append(
                Finding(
                    "credential",
                    f"line {number} holds what looks like a credential ({what}). If it is "
                    "real, it must not be in the wiki: take it out and have it rotated.",
                    number,
                )
            )
    return found


def _headings(text: str) -> list[tuple[int, int, str]]:
    return [
        (number, len(match.group(1)), match.group(2).strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if (match := HEADING.match(line))
    ]


def _heading_problems(text: str) -> dict[str, int]:
    """Each problem of `text`'s headings, with the line it is first seen on."""
    problems: dict[str, int] = {}
    seen: Counter[tuple[int, str]] = Counter()
    level = 0
    for number, depth, name in _headings(text):
        if not name:
            problems.setdefault("a heading with no text", number)
        if level and depth > level + 1:
            problems.setdefault(f"a level {depth} heading right under a level {level} one", number)
        seen[(depth, name.lower())] += 1
        if name and seen[(depth, name.lower())] == 2:
            problems.setdefault(f"two headings named “{name}” (their links collide)", number)
        level = depth
    return problems


def _heading_findings(before: str, after: str) -> list[Finding]:
    earlier = _heading_problems(before)
    return [
        Finding("headings", f"the change leaves {problem} (line {line}).", line)
        for problem, line in _heading_problems(after).items()
        if problem not in earlier
    ]


def proposal_checks(version: Version, *, reader: Scope | Callable[[], Scope]) -> list[Finding]:
    """What a person should look at in `version` before deciding it, as `reader` may see it
    (or a function giving that Scope: it is worked out only when a link or a paragraph needs
    it, since an agent's costs a query)."""
    before, after = _texts(version)
    added = _added_lines(before, after)
    paragraphs = _paragraphs(added)
    links = _new_links(before, after)
    scope = (reader if isinstance(reader, Scope) else reader()) if links or paragraphs else None
    return [
        *(_link_findings(version.page, links, scope) if scope is not None else []),
        *(_duplicate_findings(version, paragraphs, scope) if scope is not None else []),
        *_credential_findings(added),
        *_heading_findings(before, after),
    ]
