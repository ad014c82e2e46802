"""`make bench-review`: a reviewer in Chromium clears sixty agent proposals, one by one and
with batch selection.

1. Builds a site in a fresh database (BENCH_REVIEW_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/quire_bench_review; its name must contain "bench": it is
   dropped and created afresh; a sqlite:/// URL works too): the 18F handbook
   (../shared/corpus/18f-handbook) imported and published, a reviewer, six agents.
2. Serves it with gunicorn; the six agents, each in its own session of the official MCP client
   over HTTP, read pages (get_page_source) and propose ten changes each, of mixed kinds:
   wording fixes and numbers or dates changed (edit_page), paragraphs added (append_to_page),
   text removed and headings renamed (edit_page), new pages (create_page).
3. Copies that database three times, so every walk decides the very same proposals, and
   serves each copy to a reviewer in Chromium (Playwright, /usr/bin/chromium):
   one by one with the mouse, as before batches: open the oldest proposal, decide it on its
   review page (Approve, or a reason and Reject); Quire opens the next one;
   one by one with the keys: j, a (a, a on a review page), r and the reason;
   batch: "Select the low-risk ones" in the queue, untick any the reviewer would reject,
   "Approve selected" in one action, then the rest one by one with the mouse.
   The reviewer approves every proposal but six (three removals and three changed numbers,
   rejected with a reason). Clicks, keys typed, decisions sent (POSTs) and seconds are
   counted from the Reviews link to the empty queue.
4. After each walk, reads the database: every version approved must have a DiffShown row of
   the reviewer for exactly its change against the version it replaced (reviews/shown.py);
   the run fails otherwise, and when the queue is not empty.
5. Writes its own section of bench/REPORT.md (the rest kept) and
   bench/results/review_volume.json.

The seconds are the machine's (the walk and its page loads), not a person's reading time.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import psycopg
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import sync_playwright
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.servers import free_port  # noqa: E402
from tests.waits import PATIENCE, answered, wait_until  # noqa: E402

CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
HANDBOOK = CORPUS / "18f-handbook" / "pages"
RESULTS = ROOT / "bench" / "results"
REPORT = ROOT / "bench" / "REPORT.md"
LOGS = ROOT / "var" / "bench" / "review_volume"
REPORT_HEADING = "## Review at volume: sixty agent proposals cleared in Chromium"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "bench-review-password-1"
REVIEWER = "reviewer"
AGENTS = 6
# What the agents propose, and how many of each: sixty in all.
KINDS: dict[str, int] = {
    "wording": 15,
    "addition": 12,
    "removal": 9,
    "number": 9,
    "heading": 6,
    "new_page": 9,
}
# The reviewer rejects this many of each kind (the others are approved).
REJECTED: dict[str, int] = {"removal": 3, "number": 3}
REASON = "Keep this as it is: it is still right."
# get_page_source shows a page whole up to 10,000 characters: the agents pick such pages.
WHOLE_PAGE_CHARS = 9_000
# In-line wording an editor would fix: (old, new), the first that a line holds is used.
WORDING = [
    (" in order to ", " to "),
    (" utilize ", " use "),
    (" make sure ", " ensure "),
    (" a lot of ", " many "),
    ("e-mail", "email"),
    (" very ", " "),
    (" really ", " "),
    (" just ", " "),
]
# Contractions spelled out, with a straight or a typographic apostrophe.
CONTRACTIONS = {
    "can't": "cannot",
    "don't": "do not",
    "Don't": "Do not",
    "it's": "it is",
    "we're": "we are",
    "you're": "you are",
    "won't": "will not",
}
WORDING += [
    (old.replace("'", apostrophe), new)
    for apostrophe in ("\u2019", "'")
    for old, new in CONTRACTIONS.items()
]
HEADING = re.compile(r"^(#{2,6})\s+(.+?)\s*$")
NUMBER = re.compile(r"(?<![\w/.#:=-])(\d{1,4})(?![\w/.%:-])")


# --- what the agents propose (pure: tests/test_bench_review_volume.py runs it) ----------------


@dataclass(frozen=True)
class Planned:
    agent: int
    kind: str
    page_id: str
    title: str
    reject: bool = False


def _prose_lines(markdown: str) -> list[str]:
    """Lines of running text, each found once in the page (edit_page's oldText must be)."""
    lines = []
    fenced = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        text = line.strip()
        if (
            fenced
            or len(text) < 40
            or text.startswith(("#", "|", ">", "<", "{%", "---", "!["))
            or markdown.count(line) != 1
        ):
            continue
        lines.append(line)
    return lines


def change_for(kind: str, markdown: str, title: str, agent: int) -> tuple[str, dict[str, Any]]:
    """The MCP tool and arguments an agent calls for a change of `kind` to a page whose
    source is `markdown`; ValueError when the page holds nothing to change that way."""
    if kind == "addition":
        return "append_to_page", {
            "markdown": "Last checked against the team's current practice; ask in the "
            "handbook channel if something here no longer holds.",
            "changeSummary": "Say when the page was last checked and where to ask.",
        }
    if kind == "new_page":
        return "create_page", {
            "title": f"{title}: questions (agent {agent + 1})",
            "markdown": f"Questions people ask about {title}, answered by the team.\n\n"
            "## Who to ask\n\nThe team that owns the page.\n",
            "changeSummary": "A page for the questions people ask about this topic.",
        }
    old, new = _edited_line(kind, markdown)
    summaries = {
        "wording": "Tighten the wording.",
        "removal": "Remove a paragraph that repeats the one before.",
        "number": "Correct a figure.",
        "heading": "Rename a section to say what it holds.",
    }
    return "edit_page", {
        "edits": [{"oldText": old, "newText": new}],
        "changeSummary": summaries[kind],
    }


def _edited_line(kind: str, markdown: str) -> tuple[str, str]:
    if kind == "heading":
        for line in markdown.split("\n"):
            match = HEADING.match(line)
            if match and markdown.count(line) == 1:
                return line, f"{match.group(1)} {match.group(2)} in practice"
        raise ValueError("no heading")
    for line in _prose_lines(markdown):
        if kind == "wording":
            for old, new in WORDING:
                if old in line:
                    return line, line.replace(old, new, 1)
        elif kind == "number":
            found = NUMBER.search(line)
            if found and "](" not in line and "http" not in line:
                changed = str(int(found.group(1)) + 1)
                return line, line[: found.start()] + changed + line[found.end() :]
        elif kind == "removal":
            if len(line) > 80 and not re.search(r"\d|\]\(|http|\*\*", line):
                return line + "\n", ""
    raise ValueError(f"nothing to change as {kind}")


def plan(pages: list[tuple[str, str, str]]) -> list[Planned]:
    """Sixty changes on sixty distinct pages ((page id, title, body), in a stable order), dealt
    to the agents in turn; the first of each kind in REJECTED are the ones to reject."""
    free = [page for page in pages if len(page[2]) <= WHOLE_PAGE_CHARS]
    used: set[str] = set()
    planned: list[Planned] = []
    for kind, count in KINDS.items():
        fits = []
        for page_id, title, body in free:
            if page_id in used:
                continue
            try:
                change_for(kind, body, title, 0)
            except ValueError:
                continue
            fits.append((page_id, title))
            if len(fits) == count:
                break
        if len(fits) < count:
            raise SystemExit(f"the handbook has only {len(fits)} pages for {kind}, not {count}")
        for n, (page_id, title) in enumerate(fits):
            used.add(page_id)
            reject = n < REJECTED.get(kind, 0)
            planned.append(Planned(len(planned) % AGENTS, kind, page_id, title, reject))
    return planned


# --- the database and the server -----------------------------------------------------------


def database_url() -> str:
    url = os.environ.get(
        "BENCH_REVIEW_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/quire_bench_review"
    )
    if "bench" not in urlparse(url).path:
        raise SystemExit(
            f"BENCH_REVIEW_DATABASE_URL names {url!r}; the benchmark drops and recreates it, so "
            "its name must contain 'bench' (e.g. .../quire_bench_review)."
        )
    return url


def _sqlite_path(url: str) -> Path | None:
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:") else None


def drop(url: str) -> None:
    path = _sqlite_path(url)
    if path is not None:
        path.unlink(missing_ok=True)
        return
    parsed = urlparse(url)
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(parsed.path.lstrip("/"))
            )
        )


def recreate(url: str, template: str | None = None) -> None:
    """Drop the database `url` names and create it empty, or as a copy of `template`."""
    drop(url)
    path = _sqlite_path(url)
    if path is not None:
        if template is not None:
            shutil.copyfile(template.removeprefix("sqlite:///"), path)
        return
    parsed = urlparse(url)
    create = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(parsed.path.lstrip("/")))
    if template is not None:
        create += sql.SQL(" TEMPLATE {}").format(sql.Identifier(urlparse(template).path[1:]))
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        conn.execute(create)


def copy_url(url: str, suffix: str) -> str:
    path = _sqlite_path(url)
    if path is not None:
        return f"sqlite:///{path.with_name(path.stem + '_' + suffix + path.suffix)}"
    parsed = urlparse(url)
    return parsed._replace(path=parsed.path + "_" + suffix).geturl()


def site_env(url: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("REDIS_URL", "DATABASE_REPLICA_URL", "EMAIL_HOST")
    }
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-review-secret-key-not-for-production-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "QUIRE_AGENT_RATE_LIMIT": "100000000",
        "QUIRE_EMBEDDING_MODEL": "none",
        "LOG_LEVEL": "WARNING",
    }


def step(name: str, url: str) -> dict[str, Any]:
    """Run this file's `name` step in a process of its own on the database `url`; its JSON."""
    out = subprocess.run(
        [sys.executable, __file__, name],
        cwd=ROOT,
        env=site_env(url),
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


class Server:
    """gunicorn serving the database `url`, as production serves it."""

    def __init__(self, url: str) -> None:
        port = free_port()
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log = (LOGS / "gunicorn.log").open("ab")  # and the emails, on the console
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                f"--bind=127.0.0.1:{port}",
                "--workers=2",
                f"--timeout={int(PATIENCE)}",
                "--log-level=warning",
            ],
            cwd=ROOT,
            env=site_env(url),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_until(
            lambda: answered(self.base + "/healthz"),
            what="gunicorn",
            alive=lambda: self.process.poll() is None,
        )

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


# --- the steps run in their own process (Django set up on one database) -----------------------
# Each step imports Django's models after django.setup(): the run itself serves several
# databases one after the other and never sets Django up.


def setup_site() -> dict[str, Any]:
    """Migrate, import the handbook, make the reviewer and the agents; the plan and tokens."""
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from agents.services import agent_create
    from core.actors import SystemActor
    from wiki.models import Page
    from wiki.roles import REVIEWERS

    call_command("migrate", verbosity=0)
    admin = User.objects.create_superuser("bench-admin", "admin@example.com", PASSWORD)
    started = time.perf_counter()
    call_command("import_markdown", str(HANDBOOK), "--publish", "--author", admin.username)
    import_seconds = time.perf_counter() - started
    reviewer = User.objects.create_user(REVIEWER, "reviewer@example.com", PASSWORD)
    reviewer.groups.add(Group.objects.get_or_create(name=REVIEWERS)[0])
    owner = User.objects.create_user("agent-owner", "owner@example.com", PASSWORD)
    system = SystemActor("bench")
    tokens = [
        agent_create(
            actor=system,
            name=f"agent-{n + 1}",
            owner=owner,
            can_edit_pages=True,
            all_pages=True,
        )[1]
        for n in range(AGENTS)
    ]
    pages = Page.objects.filter(live_version__isnull=False).select_related("live_version")
    rows = [
        (page.public_id, page.title, page.live_version.body)
        for page in pages.order_by("path")
        if page.live_version is not None
    ]
    return {
        "pages": len(rows),
        "import_seconds": round(import_seconds, 1),
        "tokens": tokens,
        "plan": [asdict(planned) for planned in plan(rows)],
    }


def unshown_approvals(reviewer: Any) -> list[str]:
    """Every approved version whose change, against the version it replaced, `reviewer` was
    not shown (reviews.shown): "<title> v<number>" each."""
    from reviews.models import DiffShown
    from reviews.shown import shown_digest
    from wiki.models import Version, VersionStatus

    approved = Version.objects.filter(status=VersionStatus.APPROVED, decided_by=reviewer)
    missing = []
    for version in approved.select_related("page", "base_version"):
        digest = shown_digest(version, version.base_version)
        if not DiffShown.objects.filter(user=reviewer, version=version, digest=digest).exists():
            missing.append(f"{version.page.title} v{version.number}")
    return missing


def check_walk() -> dict[str, Any]:
    """What the walk decided, read from the database, and what it approved unshown."""
    import django

    django.setup()
    from django.contrib.auth.models import User

    from reviews.models import DecisionBatchItem
    from wiki.models import Version, VersionStatus

    reviewer = User.objects.get(username=REVIEWER)
    decided = Version.objects.filter(decided_by=reviewer)
    return {
        "approved": decided.filter(status=VersionStatus.APPROVED).count(),
        "rejected": decided.filter(status=VersionStatus.REJECTED).count(),
        "waiting": Version.objects.filter(status=VersionStatus.IN_REVIEW).count(),
        "in_batches": DecisionBatchItem.objects.count(),
        "unshown": unshown_approvals(reviewer),
    }


def proposal_classes() -> dict[str, Any]:
    """How Quire classed the proposals (reviews/classify.py) and how many are low-risk."""
    import django

    django.setup()
    from reviews.classify import is_low_risk, labels
    from wiki.models import Version, VersionStatus

    waiting = list(Version.objects.filter(status=VersionStatus.IN_REVIEW))
    return {
        "classes": Counter(" + ".join(labels(v.change_classes)) for v in waiting).most_common(),
        "low_risk": sum(is_low_risk(v) for v in waiting),
    }


# --- the agents -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    page_id: str
    number: int
    kind: str
    reject: bool


async def agent_proposes(base: str, token: str, work: list[Planned]) -> list[Proposal]:

    made = []
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=PATIENCE) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for planned in work:
            source = await session.call_tool("get_page_source", {"pageId": planned.page_id})
            shown = source.structuredContent or {}
            if source.isError or shown.get("truncated"):
                raise SystemExit(f"get_page_source of {planned.title!r} failed: {shown}")
            tool, arguments = change_for(
                planned.kind, shown["markdown"], planned.title, planned.agent
            )
            key = "parentId" if tool == "create_page" else "pageId"
            result = await session.call_tool(tool, {**arguments, key: planned.page_id})
            if result.isError:
                text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                raise SystemExit(f"{tool} on {planned.title!r} failed: {text}")
            data = result.structuredContent or {}
            made.append(
                Proposal(data["pageId"], int(data["versionNumber"]), planned.kind, planned.reject)
            )
    return made


async def agents_propose(base: str, tokens: list[str], planned: list[Planned]) -> list[Proposal]:
    work = [[p for p in planned if p.agent == n] for n in range(len(tokens))]
    made = await asyncio.gather(
        *(agent_proposes(base, token, mine) for token, mine in zip(tokens, work, strict=True))
    )
    return [proposal for mine in made for proposal in mine]


# --- the reviewer -----------------------------------------------------------------------------


@dataclass
class Walk:
    mode: str
    clicks: int = 0
    keys: int = 0
    submits: int = 0  # decisions sent (a batch is one)
    seconds: float = 0.0
    in_batch: int = 0

    def count_submit(self, request: Any) -> None:
        if is_submit(request):
            self.submits += 1


def is_submit(request: Any) -> bool:
    """A decision sent: a POST under /reviews/, not the "seen" POST a page sends itself."""
    return request.method == "POST" and "/reviews/" in request.url and "/seen/" not in request.url


REVIEW_URL = re.compile(r"/reviews/pages/([^/]+)/v(\d+)/")
MODES = {
    "one": "one by one, mouse",
    "keys": "one by one, keys",
    "batch": "batch, then one by one",
}


def _click(page: Any, locator: Any, walk: Walk) -> None:
    """A click that opens a page or sends a form, and the page it leads to."""
    with page.expect_navigation():
        locator.click()
    walk.clicks += 1


def _press(page: Any, key: str, walk: Walk, *, loads: bool = False) -> None:
    if loads:
        with page.expect_navigation():
            page.keyboard.press(key)
    else:
        page.keyboard.press(key)
    walk.keys += 1


def _type(page: Any, text: str, walk: Walk) -> None:
    page.keyboard.type(text)
    walk.keys += len(text)


def _shown(page: Any, verdicts: dict[tuple[str, int], Proposal]) -> Proposal | None:
    """The proposal the review page shows (None: not on a review page)."""
    found = REVIEW_URL.search(page.url)
    return verdicts[(found.group(1), int(found.group(2)))] if found else None


def reviewer_walks(base: str, mode: str, proposals: list[Proposal]) -> Walk:
    """The reviewer clears the queue in Chromium, as MODES says."""

    verdicts = {(p.page_id, p.number): p for p in proposals}
    walk = Walk(MODES[mode])
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(PATIENCE * 1000)
            page.goto(f"{base}/login/")
            page.fill("input[name=username]", REVIEWER)
            page.fill("input[name=password]", PASSWORD)
            with page.expect_navigation():
                page.click("button[type=submit]")
            page.on(
                "request",
                lambda request: (
                    setattr(walk, "submits", walk.submits + 1) if is_submit(request) else None
                ),
            )
            started = time.monotonic()
            _click(page, page.locator("a[href='/reviews/']").first, walk)  # the top bar's
            if mode == "keys":
                _by_keys(page, verdicts, walk)
            else:
                if mode == "batch":
                    _batch_low_risk(page, verdicts, walk)
                _by_mouse(page, verdicts, walk)
            walk.seconds = time.monotonic() - started
            left = page.locator("tr.rv-row").count()
            if left:
                raise SystemExit(f"{walk.mode}: the queue still shows {left} proposals")
        finally:
            browser.close()
    return walk


def _by_mouse(page: Any, verdicts: dict[tuple[str, int], Proposal], walk: Walk) -> None:
    """Open the oldest proposal, decide it on its page; Quire opens the next one."""
    first = page.locator("a.rv-queue-link").first
    if first.count():
        _click(page, first, walk)
    while (proposal := _shown(page, verdicts)) is not None:
        if proposal.reject:
            page.locator("#id_reject_comment").click()
            walk.clicks += 1
            _type(page, REASON, walk)
            _click(page, page.locator("#reject-form button[type=submit]"), walk)
        else:
            _click(page, page.locator("#approve-form button[type=submit]"), walk)


def _by_keys(page: Any, verdicts: dict[tuple[str, int], Proposal], walk: Walk) -> None:
    """The queue's keys: j to the first row, a to approve (from the row when it allows, or
    on the review page it opens, where a asks and a again approves), r to reject with a
    reason (Enter sends it in the queue; on a review page Tab to Reject, Enter)."""
    while True:
        proposal = _shown(page, verdicts)
        if proposal is None:
            rows = page.locator("tr.rv-row")
            if not rows.count():
                return
            _press(page, "j", walk)
            found = re.match(r"row-(.+)-(\d+)$", str(rows.first.get_attribute("id")))
            assert found is not None
            if verdicts[(found.group(1), int(found.group(2)))].reject:
                _press(page, "r", walk)
                _type(page, REASON, walk)
                _press(page, "Enter", walk, loads=True)
            else:
                _press(page, "a", walk, loads=True)
        elif proposal.reject:
            _press(page, "r", walk)
            _type(page, REASON, walk)
            _press(page, "Tab", walk)
            _press(page, "Enter", walk, loads=True)
        else:
            _press(page, "a", walk)
            _press(page, "a", walk, loads=True)


def _batch_low_risk(page: Any, verdicts: dict[tuple[str, int], Proposal], walk: Walk) -> None:
    """Tick the low-risk rows, untick any to reject, approve them in one action."""
    page.get_by_role("button", name="Select the low-risk ones").click()
    walk.clicks += 1
    ticked = page.locator("input.rv-pick:checked")
    for n in reversed(range(ticked.count())):
        box = ticked.nth(n)
        page_id, number, _ = str(box.get_attribute("value")).split(":", 2)
        if verdicts[(page_id, int(number))].reject:
            box.click()
            walk.clicks += 1
    walk.in_batch = page.locator("input.rv-pick:checked").count()
    _click(page, page.get_by_role("button", name="Approve selected"), walk)
    message = page.locator(".messages").inner_text()
    if "approved in one action" not in message:
        raise SystemExit(f"the batch was not approved: {message}")


# --- the run and its report -------------------------------------------------------------------


def run() -> dict[str, Any]:
    url = database_url()
    recreate(url)
    print("importing the 18F handbook and making six agents...", flush=True)
    site = step("setup", url)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=site_env(url),
        check=True,
    )
    planned = [Planned(**row) for row in site["plan"]]
    server = Server(url)
    try:
        started = time.monotonic()
        proposals = asyncio.run(agents_propose(server.base, site["tokens"], planned))
        propose_seconds = time.monotonic() - started
    finally:
        server.stop()
    print(f"{len(proposals)} proposals by {AGENTS} agents in {propose_seconds:.1f} s", flush=True)
    classes = step("classes", url)
    walks = []
    checks = {}
    for mode in MODES:
        copy = copy_url(url, mode)
        recreate(copy, template=url)
        server = Server(copy)
        try:
            walk = reviewer_walks(server.base, mode, proposals)
        finally:
            server.stop()
        checks[walk.mode] = step("check", copy)
        drop(copy)
        walks.append(walk)
        print(f"{walk}: {checks[walk.mode]}", flush=True)
    return {
        "site": {key: site[key] for key in ("pages", "import_seconds")},
        "proposals": len(proposals),
        "kinds": dict(KINDS),
        "rejected": sum(p.reject for p in proposals),
        "propose_seconds": round(propose_seconds, 1),
        "classes": classes,
        "walks": [asdict(walk) for walk in walks],
        "checks": checks,
        "finished": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "load": " ".join(f"{n:.2f}" for n in os.getloadavg()),
    }


def failures(result: dict[str, Any]) -> list[str]:
    found = []
    expected_rejects = result["rejected"]
    for mode, check in result["checks"].items():
        if check["unshown"]:
            found.append(f"{mode}: approved without being shown: {', '.join(check['unshown'])}")
        if check["waiting"]:
            found.append(f"{mode}: {check['waiting']} proposals still wait")
        if check["rejected"] != expected_rejects:
            found.append(f"{mode}: rejected {check['rejected']}, not {expected_rejects}")
    return found


def markdown_report(result: dict[str, Any], command: str) -> str:
    count = result["proposals"]
    machine = f"{platform.node()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"
    lines = [
        REPORT_HEADING,
        "",
        f"`{command}` on {result['finished']}; {machine}; load average after the run "
        f"{result['load']}. {result['site']['pages']} pages of the 18F handbook, imported "
        f"in {result['site']['import_seconds']} s; six agents proposed {count} changes over "
        f"MCP (the official client, HTTP, gunicorn) in {result['propose_seconds']} s: "
        + ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in result["kinds"].items())
        + f". Quire classed {result['classes']['low_risk']} of them low-risk. The reviewer "
        f"approves all but {result['rejected']} (rejected with a {len(REASON)}-character "
        "reason); each walk on its own copy of the same database.",
        "",
        "| Walk | Clicks | Keys | Decisions sent | Seconds | Per proposal: clicks | keys "
        "| seconds | Approved in one batch | Approved unshown |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for walk in result["walks"]:
        check = result["checks"][walk["mode"]]
        lines.append(
            f"| {walk['mode']} | {walk['clicks']} | {walk['keys']} | {walk['submits']} | "
            f"{walk['seconds']:.1f} | {walk['clicks'] / count:.2f} | {walk['keys'] / count:.2f} "
            f"| {walk['seconds'] / count:.2f} | {walk['in_batch']} | {len(check['unshown'])} |"
        )
    lines += [
        "",
        "How Quire classed them: "
        + "; ".join(f"{label or 'unclassed'} {n}" for label, n in result["classes"]["classes"])
        + ".",
        "",
        "Every walk starts with the top bar's Reviews link. One by one, mouse: open the "
        "oldest proposal, then on each review page Approve, or click the reason box, type "
        "the reason and Reject; Quire opens the next. One by one, keys: j to the first row, "
        "a (from the row when it is a small fresh change shown whole, or on the review page "
        "it opens: a, then a again), r, the reason and Enter (on a review page Tab, Enter). "
        'Batch: "Select the low-risk ones" (untick any to reject: none here), "Approve '
        'selected" in one action, then the rest one by one with the mouse. Decisions sent '
        "are the POSTs to /reviews/ (a batch is one). Seconds are the machine's walk (page "
        "loads and decisions), not a person's reading. After each walk the database is "
        "read: every approved version has a DiffShown row of the reviewer for exactly its "
        "change against the version it replaced (the run fails otherwise), nothing waits, "
        "and the six to reject were rejected.",
    ]
    return "\n".join(lines) + "\n"


def write_report(section: str) -> None:
    """This bench's section of REPORT.md, from its heading to the next one; the rest kept."""
    text = REPORT.read_text() if REPORT.exists() else ""
    if REPORT_HEADING in text:
        start = text.index(REPORT_HEADING)
        end = text.find("\n## ", start + len(REPORT_HEADING))
        text = text[:start] + section + ("" if end == -1 else text[end:])
    else:
        text = text.rstrip("\n") + "\n\n" + section
    REPORT.write_text(text)


def main() -> int:
    if len(sys.argv) > 1:
        steps = {"setup": setup_site, "check": check_walk, "classes": proposal_classes}
        print(json.dumps(steps[sys.argv[1]]()))
        return 0
    result = run()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "review_volume.json").write_text(json.dumps(result, indent=2))
    write_report(markdown_report(result, "nice -n 10 make bench-review"))
    found = failures(result)
    for failure in found:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
