"""Benchmark: import the English tldr pages, then time page views, search and MCP tool calls.

`make bench` runs it on a temporary SQLite database, and also on PostgreSQL when
BENCH_DATABASE_URL is set (its database name must contain "bench": it is dropped and
created afresh). Writes bench/REPORT.md and prints its path. BENCH_PAGES limits how many
pages are imported (default: all 7,425); BENCH_REQUESTS sets calls per measurement (default
200), cut short after BENCH_SECONDS_PER_OPERATION seconds (default 15, at least 30 calls).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
TLDR = CORPUS / "tldr-pages.tar.gz"
REPORT = ROOT / "bench" / "REPORT.md"
SEED = 20261130
SECONDS_PER_OPERATION = float(os.environ.get("BENCH_SECONDS_PER_OPERATION", "15"))
MIN_SAMPLES = 30
QUERIES = [
    "git",
    "docker container",
    "list files",
    "compress archive",
    "network interface",
    "ssh key",
    "python",
    "kill process",
    "disk usage",
    "download file",
    "search text in files",
    "package manager",
    "convert image",
    "user password",
    "http request",
    "kubernetes",
]


# --- parent: one subprocess per database, then the report --------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worker", metavar="DATABASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        results = run_on(args.worker)
        args.out.write_text(json.dumps(results, indent=2))
        return 0
    if not TLDR.exists():
        print(f"The tldr corpus is missing at {TLDR}; set QUIRE_CORPUS.", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="quire-bench-") as tmp:
        targets = [("SQLite", f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")]
        pg_url = os.environ.get("BENCH_DATABASE_URL", "").strip()
        if pg_url:
            targets.append(("PostgreSQL", recreate_postgres(pg_url)))
        runs = []
        for label, url in targets:
            out = Path(tmp) / f"{label}.json"
            print(f"\n== {label} ==", flush=True)
            env = {
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "DATABASE_URL": url,
                "DEBUG": "0",
                "SECRET_KEY": "bench-only-secret-key",
                "ALLOWED_HOSTS": "testserver",
                "QUIRE_AGENT_RATE_LIMIT": "1000000",
                "LOG_LEVEL": "WARNING",
            }
            env.pop("REDIS_URL", None)
            command = [sys.executable, __file__, "--worker", url, "--out", str(out)]
            subprocess.run(command, cwd=ROOT, env=env, check=True)
            runs.append((label, json.loads(out.read_text())))
    REPORT.write_text(render_report(runs))
    print(f"\nReport written to {REPORT}")
    return 0


def recreate_postgres(url: str) -> str:
    import psycopg

    name = urlparse(url).path.lstrip("/")
    if "bench" not in name:
        raise SystemExit(
            f"BENCH_DATABASE_URL names the database {name!r}; the benchmark drops and recreates "
            "it, so its name must contain 'bench' (e.g. .../quire_bench)."
        )
    admin_url = urlparse(url)._replace(path="/postgres").geturl()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url


# --- child: build the database and measure -------------------------------------------------


def run_on(database_url: str) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    limit = int(os.environ.get("BENCH_PAGES", "0") or 0)
    requests = int(os.environ.get("BENCH_REQUESTS", "200") or 200)
    call_command("migrate", verbosity=0)
    admin = make_admin()
    with tempfile.TemporaryDirectory(prefix="tldr-") as tmp:
        source = extract_english(Path(tmp), limit)
        files = sum(1 for _ in source.rglob("*.md"))
        print(f"importing {files} markdown files...", flush=True)
        started = time.perf_counter()
        call_command("import_markdown", str(source), "--publish", "--author", admin.username)
        import_seconds = time.perf_counter() - started

    from wiki.models import Page

    pages = list(Page.objects.filter(live_version__isnull=False).values_list("public_id", "pk"))
    rng = random.Random(SEED)
    sample = [rng.choice(pages) for _ in range(requests)]
    queries = [QUERIES[i % len(QUERIES)] for i in range(requests)]
    results: dict[str, Any] = {
        "database": connection.vendor,
        "database_version": database_version(connection),
        "files": files,
        "pages": len(pages),
        "import_seconds": round(import_seconds, 1),
        "requests": requests,
        "measurements": {},
    }
    measure = results["measurements"]

    from django.test import Client

    client = Client()
    client.force_login(admin)
    measure["page view (GET /p/<id>/)"] = timed(
        [lambda p=p: expect(client.get(f"/p/{p[0]}/"), 200) for p in sample]
    )
    measure["search results page (GET /search/?q=)"] = timed(
        [lambda q=q: expect(client.get("/search/", {"q": q}), 200) for q in queries]
    )

    from wiki.search import search_pages

    measure["wiki.search.search_pages(query)"] = timed(
        [lambda q=q: search_pages(q) for q in queries]
    )
    measure.update(measure_mcp(admin, sample, queries))
    measure.update(measure_curation(admin, client, [pk for _, pk in pages]))
    show(measure)
    return results


def measure_curation(admin: Any, client: Any, page_pks: list[int]) -> dict[str, dict[str, Any]]:
    """The reviewer's queue with 500 proposals, a review page, and a set editor with 2,000
    entries (or as many pages as were imported)."""
    from agents.models import Agent, PageSetEntry
    from reviews import services
    from wiki.models import Page

    agent, _ = Agent.objects.get_or_create(name="bench-bot", defaults={"can_edit_pages": True})
    targets = list(Page.objects.filter(pk__in=page_pks[:500]).select_related("live_version"))
    proposals = [
        services.version_propose(
            actor=agent,
            page=page,
            body=page.live_version.body + "\nOne more line from the agent.\n",
            change_summary="Add a line",
        )
        for page in targets
        if page.live_version is not None
    ]
    curated, _ = Agent.objects.get_or_create(name="bench-curated")
    PageSetEntry.objects.filter(agent=curated).delete()
    PageSetEntry.objects.bulk_create(
        PageSetEntry(agent=curated, page_id=pk, use_when=["Use it."], position=i)
        for i, pk in enumerate(page_pks[:2000])
    )
    entries = PageSetEntry.objects.filter(agent=curated).count()
    rng = random.Random(SEED)
    picked = [rng.choice(proposals) for _ in range(50)]
    return {
        f"review queue, {len(proposals)} waiting (GET /reviews/)": timed(
            [lambda: expect(client.get("/reviews/"), 200) for _ in range(50)]
        ),
        "review page (GET /reviews/pages/<id>/v<n>/)": timed(
            [
                lambda v=v: expect(
                    client.get(f"/reviews/pages/{v.page.public_id}/v{v.number}/"), 200
                )
                for v in picked
            ]
        ),
        f"set editor, {entries} entries (GET /agents/<id>/)": timed(
            [lambda: expect(client.get(f"/agents/{curated.pk}/"), 200) for _ in range(50)]
        ),
        "page picker (GET /pages/pick/?q=)": timed(
            [
                lambda q=q: expect(client.get("/pages/pick/", {"q": q}), 200)
                for q in ("git", "dock", "tar", "ls", "python", "network")
            ]
            * 5
        ),
    }


def make_admin() -> Any:
    from django.contrib.auth.models import User

    admin, _ = User.objects.get_or_create(username="bench-admin")
    admin.is_superuser = admin.is_staff = True
    admin.set_unusable_password()
    admin.save()
    return admin


def extract_english(into: Path, limit: int) -> Path:
    """The English pages only (pages/, 7,425 files), optionally the first `limit` of them."""
    with tarfile.open(TLDR) as archive:
        members = [m for m in archive.getmembers() if m.isfile() and m.name.startswith("pages/")]
        if limit:
            keep = set(sorted(m.name for m in members)[:limit])
            members = [m for m in members if m.name in keep]
        # In archive order: seeking backwards in a gzip stream decompresses it from the start.
        archive.extractall(into, members=members, filter="data")
    return into / "pages"


def database_version(connection: Any) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SHOW server_version")
        else:
            cursor.execute("SELECT sqlite_version()")
        return str(cursor.fetchone()[0])


def expect(response: Any, status: int) -> Any:
    if response.status_code != status:
        raise SystemExit(f"{response.status_code} from {response.request['PATH_INFO']}")
    return response


def timed(calls: list[Callable[[], Any]]) -> dict[str, Any]:
    """Latency percentiles (ms) and SQL queries per call, after two warm-up calls."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for call in calls[:2]:
        call()
    samples: list[float] = []
    query_counts: list[int] = []
    budget_ends = time.perf_counter() + SECONDS_PER_OPERATION
    for call in calls:
        if len(samples) >= MIN_SAMPLES and time.perf_counter() > budget_ends:
            break  # slow operations get fewer samples, so the whole run stays short
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            call()
            samples.append((time.perf_counter() - started) * 1000)
        query_counts.append(len(captured))
    return summarise(samples, query_counts)


def show(measurements: dict[str, dict[str, Any]]) -> None:
    for name, m in measurements.items():
        print(f"  {name}: p50 {m['p50']} ms, p95 {m['p95']} ms (n={m['n']})", flush=True)


def summarise(samples: list[float], query_counts: list[int]) -> dict[str, Any]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 1)

    return {
        "n": len(samples),
        "p50": pct(50),
        "p95": pct(95),
        "p99": pct(99),
        "mean": round(statistics.fmean(samples), 1),
        "queries": f"{min(query_counts)}-{max(query_counts)}"
        if min(query_counts) != max(query_counts)
        else str(query_counts[0]),
    }


def measure_mcp(
    admin: Any, sample: list[tuple[str, int]], queries: list[str]
) -> dict[str, dict[str, Any]]:
    """browse, search_pages and get_page through /mcp in process (the whole Django stack)."""
    try:
        from agents import services as agent_services
    except ImportError:
        return {}
    from django.test import Client

    from wiki.models import Page

    agent, token = agent_services.agent_create(actor=admin, name="bench-agent", owner=admin)
    for page in Page.objects.filter(parent__isnull=True, live_version__isnull=False):
        agent_services.page_set_add(
            actor=admin, agent=agent, page=page, use_when=[f"Commands for {page.title}."]
        )
    client = Client(
        HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_ACCEPT="application/json, text/event-stream"
    )
    counter = iter(range(1, 10**9))

    def call(tool: str, arguments: dict[str, Any]) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": next(counter),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        response = expect(client.post("/mcp", body, content_type="application/json"), 200)
        if b'"isError": true' in response.content or b'"isError":true' in response.content:
            raise SystemExit(f"{tool} failed: {response.content[:300]!r}")

    return {
        "MCP browse()": timed([lambda: call("browse", {}) for _ in sample[:50]]),
        "MCP search_pages(query)": timed(
            [lambda q=q: call("search_pages", {"query": q}) for q in queries]
        ),
        "MCP get_page(pageId)": timed(
            [lambda p=p: call("get_page", {"pageId": p[0]}) for p in sample]
        ),
    }


# --- the report -----------------------------------------------------------------------------


def render_report(runs: list[tuple[str, dict[str, Any]]]) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Quire benchmark",
        "",
        f"Run {now} by `make bench` (bench/run.py) on {platform.platform()}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPU(s).",
        "",
        "Corpus: the English tldr pages (`pages/` of ../shared/corpus/tldr-pages.tar.gz), "
        "imported with `import_markdown --publish`. Latencies are wall-clock milliseconds "
        "measured in process through Django's test client (no network, DEBUG off); "
        '"queries" is SQL queries per call.',
        "",
    ]
    for label, result in runs:
        lines += [
            f"## {label} {result['database_version']}",
            "",
            f"Imported {result['files']:,} files as {result['pages']:,} live pages in "
            f"{result['import_seconds']:,} s "
            f"({result['files'] / max(result['import_seconds'], 0.001):,.0f} files/s).",
            "",
            "| operation | n | p50 ms | p95 ms | p99 ms | mean ms | queries |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, m in result["measurements"].items():
            lines.append(
                f"| {name} | {m['n']} | {m['p50']} | {m['p95']} | {m['p99']} | {m['mean']} "
                f"| {m['queries']} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
