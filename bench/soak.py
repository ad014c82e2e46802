"""Soak: many agents and reviewers at once against Quire as production runs it, then checks.

Starts its own redis-server and aiosmtpd SMTP server on free ports, a fresh PostgreSQL
database (SOAK_DATABASE_URL, whose name must contain "soak": it is dropped and created
afresh), a Celery worker and gunicorn with two or more workers. Agent clients (the official
MCP client) browse, search, read, append, replace and create pages; reviewers list and
decide proposals through the REST API. With --faults, Redis and then the SMTP server are
killed and restarted half-way. Afterwards the outbox is drained and it checks: no 5xx, no
lost or duplicated versions, gap-free version numbers, every approved append in its live
page, every notification emailed (at least once; a repeat under the same Message-ID). A
worker slow to stop is killed after 30 s and the run still checks and reports. Writes
bench/results/soak.json and the report bench/results/soak.md (or --output and its .md);
exits 1 if a check fails.

    python bench/soak.py --seconds 60 --agents 16 --reviewers 4 [--faults]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT))

from tests.servers import RedisServer, SMTPServer, free_port  # noqa: E402
from tests.waits import PATIENCE, answered, wait_until  # noqa: E402

PASSWORD = "soak-password-123"
LOG_PAGES = 6  # receive appends only, so every approved append must stay in the live page
DRAFT_PAGES = 6  # receive whole replacements
STOP_GRACE_SECONDS = 30


def wait_until_serving(base: str, process: subprocess.Popen[bytes]) -> None:
    """Until gunicorn answers /healthz: the clock of the load starts once it serves. On a
    busy machine a worker takes long to boot; it is waited for, not given fixed seconds."""
    try:
        wait_until(
            lambda: answered(base + "/healthz"),
            what="gunicorn",
            alive=lambda: process.poll() is None,
        )
    except AssertionError as error:
        raise RuntimeError(str(error)) from None


def recreate_database(url: str) -> None:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    if "soak" not in name:
        sys.exit(f"SOAK_DATABASE_URL's database name must contain 'soak' (it is dropped): {name}")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


# --- measuring --------------------------------------------------------------------------------


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    http_5xx: list[str] = field(default_factory=list)
    writes: list[tuple[str, str, int]] = field(default_factory=list)  # agent, page, number
    # The line each write added, by (page, number): an approved one must stay in the page.
    markers: dict[tuple[str, int], str] = field(default_factory=dict)

    def record(self, kind: str, started: float, outcome: str) -> None:
        self.latencies[kind].append((time.monotonic() - started) * 1000)
        self.outcomes[kind][outcome] += 1

    async def on_response(self, response: Any) -> None:
        if response.status_code >= 500:
            self.http_5xx.append(f"{response.status_code} {response.request.url.path}")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


# --- the clients ------------------------------------------------------------------------------


async def agent_client(
    base: str, name: str, token: str, pages: dict[str, list[str]], tally: Tally, stop: float
) -> None:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(name)
    headers = {"Authorization": f"Bearer {token}"}
    hooks = {"response": [tally.on_response]}
    async with (
        httpx.AsyncClient(headers=headers, timeout=PATIENCE, event_hooks=hooks) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        n = 0
        while time.monotonic() < stop:
            n += 1
            kind = rng.choices(
                [
                    "browse",
                    "search_pages",
                    "get_page",
                    "get_page_source",
                    "append_to_page",
                    "update_page",
                    "create_page",
                ],
                weights=[8, 18, 24, 10, 22, 12, 6],
            )[0]
            arguments: dict[str, Any]
            if kind == "browse":
                arguments = {}
            elif kind == "search_pages":
                arguments = {"query": rng.choice(["log", "draft", "notes", "soak entry"])}
            elif kind in ("get_page", "get_page_source"):
                arguments = {"pageId": rng.choice(pages["log"] + pages["draft"])}
            elif kind == "append_to_page":
                marker = f"soak-{name}-{n}"
                arguments = {
                    "pageId": rng.choice(pages["log"]),
                    "markdown": f"- entry {marker}",
                    "changeSummary": f"Log {marker}.",
                }
            elif kind == "update_page":
                page_id = rng.choice(pages["draft"] + pages["log"])
                # A whole-page replace of the text the agent was shown (its own pending
                # draft if it has one), with the liveVersion shown beside it as baseVersion,
                # as the tool says: approving it must never erase what went live since.
                source = await session.call_tool("get_page_source", {"pageId": page_id})
                shown = source.structuredContent or {}
                if source.isError or shown.get("truncated") or shown.get("liveVersion") is None:
                    continue
                marker = f"soak-{name}-{n}"
                arguments = {
                    "pageId": page_id,
                    "markdown": shown["markdown"].rstrip("\n") + f"\n\n- rewrite {marker}\n",
                    "changeSummary": "Add a line to the page.",
                    "baseVersion": shown["liveVersion"],
                }
            else:
                arguments = {
                    "title": f"Notes {name} {n}",
                    "markdown": f"Notes written by {name}.\n",
                    "changeSummary": "New notes page.",
                }
            started = time.monotonic()
            try:
                result = await session.call_tool(kind, arguments)
            except Exception as exc:  # noqa: BLE001 - a transport failure is an outcome
                tally.record(kind, started, f"transport:{exc.__class__.__name__}")
                await asyncio.sleep(0.5)
                continue
            if result.isError:
                text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                tally.record(kind, started, text.split(":", 1)[0])
                continue
            tally.record(kind, started, "ok")
            if kind in ("append_to_page", "update_page", "create_page"):
                data = result.structuredContent or {}
                tally.writes.append((name, data["pageId"], int(data["versionNumber"])))
                if kind != "create_page":
                    tally.markers[(data["pageId"], int(data["versionNumber"]))] = marker


async def reviewer_client(base: str, name: str, key: str, tally: Tally, stop: float) -> None:
    import httpx

    rng = random.Random(name)
    headers = {"Authorization": f"Token {key}"}
    hooks = {"response": [tally.on_response]}
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=PATIENCE, event_hooks=hooks
    ) as http:
        while time.monotonic() < stop:
            started = time.monotonic()
            try:
                listing = await http.get("/api/v1/reviews/", params={"limit": 20})
            except httpx.TransportError as exc:
                tally.record("list_reviews", started, f"transport:{exc.__class__.__name__}")
                await asyncio.sleep(0.5)
                continue
            tally.record("list_reviews", started, str(listing.status_code))
            results = listing.json().get("results", []) if listing.status_code == 200 else []
            if not results:
                await asyncio.sleep(0.2)
                continue
            proposal = rng.choice(results)
            url = f"/api/v1/pages/{proposal['pageId']}/versions/{proposal['number']}"
            action = "approve" if rng.random() < 0.75 else "reject"
            started = time.monotonic()
            try:
                response = await http.post(f"{url}/{action}", json={"comment": "Soak decision."})
                if response.status_code == 409 and action == "approve":
                    # A stale replace whose merge conflicts: the reviewer rejects it instead.
                    tally.record(action, started, "409")
                    action, started = "reject", time.monotonic()
                    response = await http.post(f"{url}/reject", json={"comment": "Conflicts."})
            except httpx.TransportError as exc:
                tally.record(action, started, f"transport:{exc.__class__.__name__}")
                continue
            tally.record(action, started, str(response.status_code))


# --- the run ----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--reviewers", type=int, default=4)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--faults", action="store_true", help="kill and restart Redis and SMTP")
    parser.add_argument("--drain-seconds", type=int, default=180)
    parser.add_argument("--output", default=str(RESULTS / "soak.json"))
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("the soak needs redis-server (Debian package redis-server)")
    database_url = os.environ.get(
        "SOAK_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/quire_soak"
    )

    work = Path(tempfile.mkdtemp(prefix="quire-soak-"))
    redis, smtp = RedisServer(work), SMTPServer(free_port())
    redis.start()
    children: list[subprocess.Popen[bytes]] = []
    try:
        smtp.start()
        return soak(args, database_url, work, redis, smtp, children)
    finally:
        # Whatever happened, nothing the run started is left behind.
        for process in children:
            stop_process(process, "a server of the run", [])
        smtp.stop()
        redis.stop()


def stop_process(process: subprocess.Popen[bytes], name: str, notes: list[str]) -> None:
    """SIGTERM, and SIGKILL after STOP_GRACE_SECONDS: a worker slow to finish its tasks must
    not cost the run its checks and its report."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_GRACE_SECONDS)
        notes.append(f"{name} still running {STOP_GRACE_SECONDS} s after SIGTERM: killed")


def soak(
    args: argparse.Namespace,
    database_url: str,
    work: Path,
    redis: RedisServer,
    smtp: SMTPServer,
    children: list[subprocess.Popen[bytes]],
) -> int:
    recreate_database(database_url)
    web_port = free_port()
    base = f"http://127.0.0.1:{web_port}"
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "0",
        "SECRET_KEY": "soak-secret-key-not-for-production-use-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis.url,
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp.port),
        "QUIRE_BASE_URL": base,
        # The soak measures the system, not the per-agent limit (tested on its own).
        "QUIRE_AGENT_RATE_LIMIT": "1000000",
        # Short windows so that gathered follow-ups and sweeps happen within the run.
        "QUIRE_REVIEW_EMAIL_GATHER_SECONDS": "10",
        "QUIRE_OUTBOX_SWEEP_GRACE_SECONDS": "5",
        # Approval emails wait out the undo window: a short one, so they go within the run.
        "QUIRE_APPROVAL_UNDO_SECONDS": "10",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)

    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from agents.services import agent_create
    from core.actors import SystemActor
    from reviews.actions.create import page_create
    from reviews.api_tokens import api_token_create
    from wiki.roles import EDITORS, REVIEWERS

    system = SystemActor("soak")
    editor = User.objects.create_user("editor", "editor@example.com", PASSWORD)
    editor.groups.add(Group.objects.get_or_create(name=EDITORS)[0])
    owner = User.objects.create_user("owner", "owner@example.com", PASSWORD)
    reviewers = []
    for n in range(args.reviewers):
        user = User.objects.create_user(f"reviewer{n}", f"reviewer{n}@example.com", PASSWORD)
        user.groups.add(Group.objects.get_or_create(name=REVIEWERS)[0])
        reviewers.append((user.username, api_token_create(actor=system, user=user)))

    def publish(title: str) -> str:
        version = page_create(
            actor=editor, title=title, body=f"# {title}\n\nStart.\n", publish=True
        )
        return version.page.public_id

    pages = {
        "log": [publish(f"Log {n}") for n in range(LOG_PAGES)],
        "draft": [publish(f"Draft {n}") for n in range(DRAFT_PAGES)],
    }
    from wiki.models import Page

    everything = list(Page.objects.all())
    agents = []
    for n in range(args.agents):
        _, token = agent_create(
            actor=system, name=f"agent-{n}", owner=owner, can_edit_pages=True, pages=everything
        )
        agents.append((f"agent-{n}", token))

    logs = {name: work / f"{name}.log" for name in ("worker", "web")}
    child_env = {**os.environ}
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--concurrency",
            "2",
            "--loglevel",
            "warning",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=child_env,
        stdout=logs["worker"].open("wb"),
        stderr=subprocess.STDOUT,
    )
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{web_port}",
            "--workers",
            str(args.web_workers),
            "--timeout",  # a worker silent this long is killed: not on a busy machine
            str(int(PATIENCE)),
        ],
        cwd=ROOT,
        env=child_env,
        stdout=logs["web"].open("wb"),
        stderr=subprocess.STDOUT,
    )
    children += [worker, web]
    wait_until_serving(base, web)

    tally = Tally()
    events: list[str] = []
    started_at = time.monotonic()
    stop = started_at + args.seconds

    def faults() -> None:
        plan = [
            (0.30, "kill Redis", redis.stop),
            (0.45, "restart Redis", redis.start),
            (0.55, "stop SMTP", smtp.stop),
            (0.75, "restart SMTP", smtp.start),
        ]
        for fraction, what, action in plan:
            time.sleep(max(0.0, started_at + fraction * args.seconds - time.monotonic()))
            action()
            events.append(f"{time.monotonic() - started_at:.0f}s: {what}")

    fault_thread = threading.Thread(target=faults, daemon=True) if args.faults else None
    if fault_thread is not None:
        fault_thread.start()

    async def load() -> None:
        await asyncio.gather(
            *(agent_client(base, name, token, pages, tally, stop) for name, token in agents),
            *(reviewer_client(base, name, key, tally, stop) for name, key in reviewers),
        )

    asyncio.run(load())
    if fault_thread is not None:
        fault_thread.join()
    load_seconds = time.monotonic() - started_at

    # Drain: what the outage or the gathering left in the outbox is sent by the sweep.
    from reviews import outbox
    from reviews.models import Notification, NotificationStatus

    owed = [NotificationStatus.PENDING, NotificationStatus.SENDING]
    deadline = time.monotonic() + args.drain_seconds
    while Notification.objects.filter(status__in=owed).exists() and time.monotonic() < deadline:
        outbox.retry_pending()
        time.sleep(2)
    # A notification is marked sent once the SMTP server has taken its email: wait until
    # the inbox holds one for each (at most the drain's time again; verify() says what is not).
    sent = set(
        Notification.objects.filter(status=NotificationStatus.SENT).values_list("pk", flat=True)
    )
    deadline = time.monotonic() + args.drain_seconds
    while not sent <= emailed_notifications(smtp) and time.monotonic() < deadline:
        time.sleep(0.2)

    shutdown: list[str] = []
    stop_process(web, "gunicorn", shutdown)
    stop_process(worker, "the Celery worker", shutdown)

    checks, figures = verify(tally, pages, smtp)

    total_calls = sum(len(values) for values in tally.latencies.values())
    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(load_seconds, 1),
        "agents": args.agents,
        "reviewers": args.reviewers,
        "web_workers": args.web_workers,
        "faults": events,
        "shutdown": shutdown,
        "calls": total_calls,
        "calls_per_second": round(total_calls / load_seconds, 1),
        "http_5xx": len(tally.http_5xx),
        "by_kind": {
            kind: {
                "calls": len(values),
                "p50_ms": percentile(values, 0.50),
                "p95_ms": percentile(values, 0.95),
                "p99_ms": percentile(values, 0.99),
                "outcomes": dict(tally.outcomes[kind]),
            }
            for kind, values in sorted(tally.latencies.items())
        },
        **figures,
        "checks": checks,
    }
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    output.with_suffix(".md").write_text(markdown_report(report))
    print(markdown_report(report))
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        print(f"SOAK FAILED: {', '.join(failed)}; logs in {work}")
        for line in tally.http_5xx[:20]:
            print("  5xx:", line)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


def emailed_notifications(smtp: SMTPServer) -> set[int]:
    """The notifications some email in the inbox carries (its X-Quire-Notifications header)."""
    return {
        int(part)
        for message in list(smtp.inbox.messages)
        for part in str(message["X-Quire-Notifications"] or "").split(",")
        if part.strip()
    }


def verify(
    tally: Tally, pages: dict[str, list[str]], smtp: SMTPServer
) -> tuple[dict[str, bool], dict[str, Any]]:
    from reviews.models import Notification, NotificationStatus
    from wiki.models import Page, Version, VersionKind, VersionStatus

    versions = list(
        Version.objects.select_related("page", "author_agent").values_list(
            "page__public_id", "number", "author_agent__name", "kind", "status", "proposed_body"
        )
    )
    # A stale proposal approved as a merge goes live as a new number carrying its author
    # (`merged_into`): that version was published by the reviewer, not written by the agent.
    merges = set(
        Version.objects.filter(merged_into__isnull=False).values_list(
            "merged_into__page__public_id", "merged_into__number"
        )
    )
    agent_versions = Counter(
        (page, number, agent)
        for page, number, agent, *_ in versions
        if agent is not None and (page, number) not in merges
    )
    written = Counter((page, number, agent) for agent, page, number in tally.writes)
    numbers: dict[str, list[int]] = defaultdict(list)
    for page, number, *_ in versions:
        numbers[page].append(number)
    live = {
        page.public_id: page.live_version.body
        for page in Page.objects.filter(public_id__in=pages["log"]).select_related("live_version")
        if page.live_version is not None
    }
    approved_appends = [
        (page, body)
        for page, _, _, kind, status, body in versions
        if kind == VersionKind.APPEND and status == VersionStatus.APPROVED and page in live
    ]
    missing_appends = [page for page, body in approved_appends if body.strip() not in live[page]]
    # Every write only adds a line to the text its agent was shown: a line approved once
    # must be in its page now, or an approval erased it.
    bodies = dict(
        Page.objects.filter(public_id__in={page for page, _ in tally.markers})
        .exclude(live_version=None)
        .values_list("public_id", "live_version__body")
    )
    approved = {
        (page, number)
        for page, number, _, _, status, _ in versions
        if status == VersionStatus.APPROVED
    }
    erased = [
        f"{page} v{number}"
        for (page, number), marker in tally.markers.items()
        if (page, number) in approved and marker not in bodies.get(page, "")
    ]

    rows = dict(Notification.objects.values_list("pk", "status"))
    delivered: Counter[int] = Counter()
    message_ids: dict[int, set[str]] = defaultdict(set)
    for message in smtp.inbox.messages:
        header = message["X-Quire-Notifications"]
        for part in str(header or "").split(","):
            if part.strip():
                delivered[int(part)] += 1
                message_ids[int(part)].add(str(message["Message-ID"]))
    sent = {pk for pk, status in rows.items() if status == NotificationStatus.SENT}
    statuses = Counter(rows.values())
    checks = {
        "no 5xx": not tally.http_5xx,
        "no lost version (every accepted write is stored)": all(
            agent_versions[key] == 1 for key in written
        ),
        "no duplicated version (every stored agent version was answered once)": written
        == agent_versions,
        "gap-free version numbers": all(
            sorted(found) == list(range(1, len(found) + 1)) for found in numbers.values()
        ),
        "every approved append is in its live page": not missing_appends,
        "no approved edit erased (agents pass baseVersion)": not erased,
        "every notification sent or skipped": set(statuses)
        <= {NotificationStatus.SENT, NotificationStatus.SKIPPED},
        # Delivery is at least once (reviews/outbox.py): a repeat is allowed, and must carry
        # the Message-ID of the first.
        "every sent notification emailed, a repeat under the same Message-ID": all(
            delivered[pk] >= 1 and len(message_ids[pk]) == 1 for pk in sent
        )
        and set(delivered) <= sent,
    }
    figures = {
        "versions": len(versions),
        "agent_writes_answered": len(tally.writes),
        "approved_appends": len(approved_appends),
        "approved_edits_checked": sum(1 for key in tally.markers if key in approved),
        "erased_edits": erased[:20],
        "notifications": dict(statuses),
        "emails": len(smtp.inbox.messages),
        "repeated_notifications": sum(1 for count in delivered.values() if count > 1),
    }
    return checks, figures


def markdown_report(report: dict[str, Any]) -> str:
    lines = [
        "# Soak report",
        "",
        f"{report['when']}: {report['agents']} agents (MCP) and {report['reviewers']} reviewers "
        f"(REST) for {report['seconds']} s against gunicorn ({report['web_workers']} workers), "
        "PostgreSQL, Redis and a Celery worker, mail to aiosmtpd.",
        "",
        f"Faults: {', '.join(report['faults']) or 'none'}.",
        "",
        f"Shutdown: {', '.join(report['shutdown']) or 'clean'}.",
        "",
        f"{report['calls']} calls ({report['calls_per_second']}/s), {report['http_5xx']} 5xx; "
        f"{report['versions']} versions, {report['approved_appends']} approved appends; "
        f"{sum(report['notifications'].values())} notifications in {report['emails']} emails "
        f"({report['repeated_notifications']} sent more than once).",
        "",
        "| call | calls | p50 ms | p95 ms | p99 ms | outcomes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for kind, row in report["by_kind"].items():
        outcomes = ", ".join(f"{name} {count}" for name, count in sorted(row["outcomes"].items()))
        lines.append(
            f"| {kind} | {row['calls']} | {row['p50_ms']} | {row['p95_ms']} | {row['p99_ms']} "
            f"| {outcomes} |"
        )
    lines += ["", "| check | result |", "|---|---|"]
    lines += [f"| {name} | {'pass' if ok else 'FAIL'} |" for name, ok in report["checks"].items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
