"""`make bench-million`: Quire's reads at 38,760 pages and up to about 1,000,000, over HTTP.

1. Builds the tldr site once (bench/site.py through bench/run.py: 38,760 pages, every
   language, imported) in BENCH_MILLION_DATABASE_URL (default
   postgres://postgres@127.0.0.1:5432/quire_bench_million; its name must contain "bench"),
   then grows it copy by copy in SQL, not through the import: each copy k is every page of
   the imported site (its rows in wiki_page, its live version in wiki_version, its index row
   in wiki_searchdocument, tsvector included, triggers off while copying) under new
   top-level pages (`m<k>-pages/...`), its ids offset by k times the site's.
2. At each size of BENCH_MILLION_SCALES (default 38760,116280,1000000; the site grows to the
   next size, whole copies, before each; a size below the site's drops the copies past it, and
   BENCH_MILLION_REMEASURE=1 measures a size measured before again), serves it with gunicorn
   (bench/run.py serve: gthread, QUIRE_SERVER_TIMING=1) and measures, one client, every
   question in a shuffled order each round (BENCH_MILLION_ROUNDS, default 12): keyword
   search_pages for three agents (every page; the pages/linux subtree, about 2,000 pages; 101
   scattered single pages) over the bench's questions (bench/run.py QUERIES and a
   2,000-character one); get_page; browse's first page and a subtree; recent_activity's first
   page; the web tree (GET / signed in); and the bare authenticated view (GET /api/v1/me/), the
   baseline, in the same rounds. Each sample is the client's wall time and the worker's CPU
   time for it (the response's Server-Timing header: time.thread_time in the worker).
3. Writes bench/results/million.json and the "Reads at a million pages" section of
   bench/REPORT.md: per question and size, p50 and p95 of wall and CPU, p95 against the bare
   view's, and per question the growth exponent fitted from the smallest size to the largest
   (p95 ~ pages^b, least squares over the sizes measured).

PostgreSQL as the machine runs it (fsync and synchronous_commit as the server says: the
report records them), so every call's commit is a durable one. Hybrid search is not measured
here: it needs pgvector (bench/pgvector_server.py) and every page's vectors.
"""

from __future__ import annotations

import json
import math
import os
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import run  # noqa: E402 - bench/run.py: the site, the server, the questions
import search_scale  # noqa: E402 - the long question

RESULTS = ROOT / "bench" / "results" / "million.json"
HEADING = "## Reads at a million pages"
ROUNDS = int(os.environ.get("BENCH_MILLION_ROUNDS", "12"))
SCALES = [int(n) for n in os.environ.get("BENCH_MILLION_SCALES", "38760,116280,1000000").split(",")]
TARGET_P95_MS = 300.0
SUBTREE = "pages/linux"
SCATTERED = 101


def database_url() -> str:
    url = os.environ.get(
        "BENCH_MILLION_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/quire_bench_million"
    )
    if "bench" not in urlparse(url).path:
        raise SystemExit(f"BENCH_MILLION_DATABASE_URL is {url}: its name must contain 'bench'.")
    return url


# --- growing the site in SQL ------------------------------------------------------------------

# What a copy changes; every other column is copied as it is.
_PAGE_CHANGES = {
    "id": "id + %(pk)s",
    "public_id": "'pg_' || lpad(to_hex(id + %(pk)s), 8, '0')",
    "slug": "CASE WHEN parent_id IS NULL THEN %(prefix)s || slug ELSE slug END",
    "path": "%(prefix)s || path",
    "parent_id": "parent_id + %(pk)s",
    "live_version_id": "live_version_id + %(vk)s",
    "source_path": "NULL",
    "archived_with_id": "NULL",
}
_VERSION_CHANGES = {
    "id": "v.id + %(vk)s",
    "page_id": "v.page_id + %(pk)s",
    **{
        column: "NULL"
        for column in ("base_version_id", "parent_id", "reverted_from_id", "merged_into_id")
    },
}


def _columns(conn: Any, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
        "AND table_schema = current_schema() ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [row[0] for row in rows]


def _select(columns: list[str], changes: dict[str, str], alias: str = "") -> tuple[str, str]:
    """The INSERT's column list and the SELECT's expressions."""
    names = ", ".join(f'"{column}"' for column in columns)
    values = ", ".join(changes.get(column, f'{alias}"{column}"') for column in columns)
    return names, values


def grow(url: str, pages: int) -> int:
    """Copy the imported site in SQL until the wiki holds at least `pages` pages; how many."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        base = _base_size(conn)
        base_pages, base_versions = base["pages"], base["versions"]
        have = _one(conn, "SELECT count(*) FROM wiki_page")
        copy = have // base["count"]
        if have > pages:
            copies = math.ceil(pages / base["count"]) - 1
            have = _shrink(conn, copies, base_pages)
            copy = copies + 1
        while have < pages:
            started = time.perf_counter()
            _copy(conn, copy, base_pages, base_versions)
            have = _one(conn, "SELECT count(*) FROM wiki_page")
            print(
                f"  copy {copy}: {have:,} pages ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
            copy += 1
        conn.execute("VACUUM ANALYZE")
    return int(have)


def _shrink(conn: Any, copies: int, pages: int) -> int:
    """Drop the copies past the first `copies` (to measure a smaller size again later)."""
    above = (copies + 1) * pages
    with conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")
        for table in ("wiki_searchdocument", "wiki_version", "wiki_auditevent", "agents_pageread"):
            conn.execute(f"DELETE FROM {table} WHERE page_id > %s", [above])  # noqa: S608
        conn.execute("DELETE FROM agents_pagesetentry WHERE page_id > %s", [above])
        conn.execute("DELETE FROM wiki_page WHERE id > %s", [above])
    conn.execute("VACUUM ANALYZE")
    return int(_one(conn, "SELECT count(*) FROM wiki_page"))


def _base_size(conn: Any) -> dict[str, int]:
    """The imported site's largest ids and page count (copies' ids start above them)."""
    row = conn.execute(
        "SELECT max(id), count(*) FROM wiki_page WHERE path NOT LIKE 'm%%-%%'"
    ).fetchone()
    versions = conn.execute(
        "SELECT max(v.id) FROM wiki_version v JOIN wiki_page p ON p.id = v.page_id "
        "WHERE p.path NOT LIKE 'm%%-%%'"
    ).fetchone()[0]
    return {"pages": row[0], "count": row[1], "versions": versions}


def _copy(conn: Any, k: int, pages: int, versions: int) -> None:
    """Copy k: every imported page with its live version and index row, ids + k*offset."""
    values = {"pk": k * pages, "vk": k * versions, "prefix": f"m{k}-", "pages": pages}
    page_columns, page_values = _select(_columns(conn, "wiki_page"), _PAGE_CHANGES)
    version_columns, version_values = _select(
        _columns(conn, "wiki_version"), _VERSION_CHANGES, "v."
    )
    with conn.transaction():
        # No triggers (the index's would compute every tsvector again; the copied rows'
        # foreign keys hold, being the imported rows' own, offset).
        conn.execute("SET LOCAL session_replication_role = replica")
        conn.execute(
            f"INSERT INTO wiki_page ({page_columns}) SELECT {page_values} FROM wiki_page "  # noqa: S608 - column names from the catalog
            "WHERE id <= %(pages)s AND path NOT LIKE 'm%%-%%'",
            values,
        )
        conn.execute(
            f"INSERT INTO wiki_version ({version_columns}) SELECT {version_values} "  # noqa: S608
            "FROM wiki_version v JOIN wiki_page p ON p.live_version_id = v.id "
            "WHERE p.id <= %(pages)s AND p.path NOT LIKE 'm%%-%%'",
            values,
        )
        # No fingerprint (wiki.copies): the copies are not shown as copies of one page, so
        # that each size's searches see as many distinct pages as it holds.
        conn.execute(
            """
            INSERT INTO wiki_searchdocument (page_id, title, tags, body, vector, language)
            SELECT d.page_id + %(pk)s, d.title, d.tags, d.body, d.vector, d.language
            FROM wiki_searchdocument d JOIN wiki_page p ON p.id = d.page_id
            WHERE p.id <= %(pages)s AND p.path NOT LIKE 'm%%-%%'
            """,
            values,
        )


# --- agents, pages and a browser session (in this process, through Django) ---------------


def prepare(url: str) -> dict[str, Any]:
    """Agents made afresh for this size: every page, a subtree, 101 scattered pages; the
    pages get_page reads; a signed-in session for the web tree."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.db import connection

    from agents import services as agent_services
    from agents.models import Agent
    from wiki.models import Page

    admin = User.objects.get(username="bench-admin")
    Agent.objects.filter(name__startswith="million-").delete()
    everything, every_token = agent_services.agent_create(
        actor=admin, name="million-all", owner=admin, all_pages=True
    )
    subtree_root = Page.objects.get(path=SUBTREE)
    subtree, subtree_token = agent_services.agent_create(
        actor=admin, name="million-subtree", owner=admin, pages=[subtree_root]
    )
    with connection.cursor() as cursor:
        # Leaves spread over the whole site, the same ones for a given size.
        cursor.execute(
            "SELECT id FROM wiki_page p WHERE live_version_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM wiki_page c WHERE c.parent_id = p.id) ORDER BY md5(id::text) "
            "LIMIT %s",
            [SCATTERED],
        )
        picked = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT count(*) FROM wiki_page WHERE path LIKE %s", [SUBTREE + "/%"])
        below = cursor.fetchone()[0]
    scattered, scattered_token = agent_services.agent_create(
        actor=admin,
        name="million-scattered",
        owner=admin,
        pages=list(Page.objects.filter(pk__in=picked).order_by("path")),
    )
    reads = list(
        Page.objects.filter(pk__in=picked[:4]).order_by("pk").values_list("public_id", flat=True)
    )
    engine = import_module(settings.SESSION_ENGINE)
    session = engine.SessionStore()
    session[SESSION_KEY] = str(admin.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = admin.get_session_auth_hash()
    session.save()
    connection.close()
    del everything, subtree, scattered
    return {
        "tokens": {"all": every_token, "subtree": subtree_token, "scattered": scattered_token},
        "subtree": f"{SUBTREE} ({below + 1:,} pages)",
        "reads": reads,
        "session": session.session_key,
    }


# --- measuring --------------------------------------------------------------------------------


class Client:
    """One HTTP client; every call's wall time here and CPU time in the worker."""

    def __init__(self, base: str, api_token: str, session: str) -> None:
        self.base = base
        self.http = httpx.Client(timeout=300)
        self.api = {"Authorization": f"Token {api_token}"}
        self.cookies = {"sessionid": session}

    def tool(self, token: str, name: str, **arguments: Any) -> tuple[float, float]:
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        started = time.perf_counter()
        answer = self.http.post(self.base + "/mcp", headers=headers, json=body)
        wall = (time.perf_counter() - started) * 1000
        if answer.status_code != 200 or answer.json()["result"].get("isError"):
            raise SystemExit(f"{name} {arguments}: {answer.status_code} {answer.text[:300]}")
        return wall, _cpu(answer)

    def get(self, path: str, *, web: bool = False) -> tuple[float, float]:
        started = time.perf_counter()
        answer = self.http.get(
            self.base + path,
            headers={} if web else self.api,
            cookies=self.cookies if web else None,
        )
        wall = (time.perf_counter() - started) * 1000
        if answer.status_code != 200:
            raise SystemExit(f"GET {path}: {answer.status_code} {answer.text[:300]}")
        return wall, _cpu(answer)


def _cpu(answer: httpx.Response) -> float:
    timing = dict(
        part.strip().split(";dur=") for part in answer.headers["Server-Timing"].split(",")
    )
    return float(timing["cpu"])


def questions(client: Client, prepared: dict[str, Any]) -> dict[str, Any]:
    """Every question: a name and the call that asks it."""
    tokens = prepared["tokens"]
    asked: dict[str, Any] = {"bare view (GET /api/v1/me/)": lambda: client.get("/api/v1/me/")}
    for kind, queries in search_scale.QUERY_KINDS.items():
        for query in queries:
            for agent in ("all", "subtree", "scattered"):
                label = f"search {agent}: {search_scale.short(query)} ({kind})"
                asked[label] = lambda token=tokens[agent], query=query: client.tool(
                    token, "search_pages", query=query
                )
    for n, page in enumerate(prepared["reads"]):
        asked[f"get_page #{n + 1}"] = lambda page=page: client.tool(
            tokens["all"], "get_page", pageId=page
        )
    asked["browse, first page"] = lambda: client.tool(tokens["all"], "browse")
    asked[f"browse under {SUBTREE}"] = lambda: client.tool(tokens["all"], "browse", under=SUBTREE)
    asked["recent_activity, first page"] = lambda: client.tool(tokens["all"], "recent_activity")
    asked["web tree (GET / signed in)"] = lambda: client.get("/", web=True)
    return asked


def measure(asked: dict[str, Any], rounds: int) -> dict[str, dict[str, list[float]]]:
    rng = random.Random(run.SEED)
    samples: dict[str, dict[str, list[float]]] = {q: {"wall": [], "cpu": []} for q in asked}
    names = list(asked)
    for name in names:
        asked[name]()  # warm every path once
    for n in range(rounds):
        rng.shuffle(names)
        for name in names:
            wall, cpu = asked[name]()
            samples[name]["wall"].append(wall)
            samples[name]["cpu"].append(cpu)
        print(f"  round {n + 1}/{rounds}", flush=True)
    return samples


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)


def summary(samples: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    return {
        name: {
            "wall_p50": pct(s["wall"], 50),
            "wall_p95": pct(s["wall"], 95),
            "cpu_p50": pct(s["cpu"], 50),
            "cpu_p95": pct(s["cpu"], 95),
        }
        for name, s in samples.items()
    }


def database_facts(url: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        facts = {
            name: _one(conn, f"SHOW {name}")
            for name in ("server_version", "fsync", "synchronous_commit", "shared_buffers")
        }
        facts["database_size"] = _one(
            conn, "SELECT pg_size_pretty(pg_database_size(current_database()))"
        )
        return facts


def _one(conn: Any, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    assert row is not None
    return row[0]


def _measured_before() -> dict[str, Any]:
    if not RESULTS.exists():
        return {}
    sizes: dict[str, Any] = json.loads(RESULTS.read_text())["sizes"]
    return sizes


def main() -> int:
    url = database_url()
    os.environ["BENCH_REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")
    os.environ["QUIRE_SERVER_TIMING"] = "1"
    site = run.build_site(url)
    search_scale.setup_django(url)
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}",
        "rounds": ROUNDS,
        # BENCH_REUSE=1 keeps the sizes measured before (the site only grows).
        "sizes": _measured_before() if os.environ.get("BENCH_REUSE") == "1" else {},
    }
    for scale in SCALES:
        pages = grow(url, scale)
        if str(pages) in results["sizes"] and os.environ.get("BENCH_MILLION_REMEASURE") != "1":
            continue
        prepared = prepare(url)
        server, base = run.serve(url)
        try:
            client = Client(base, site["api_token"], prepared["session"])
            load_before = search_scale.load()
            started = time.perf_counter()
            print(f"measuring at {pages:,} pages...", flush=True)
            samples = measure(questions(client, prepared), ROUNDS)
            results["sizes"][str(pages)] = {
                "pages": pages,
                "load_before": load_before,
                "load_after": search_scale.load(),
                "seconds": round(time.perf_counter() - started),
                "subtree": prepared["subtree"],
                "database": database_facts(url),
                "questions": summary(samples),
            }
        finally:
            server.terminate()
            server.wait(timeout=60)
        RESULTS.write_text(json.dumps(results, indent=2))
    write_section(render(results))
    print(f"wrote {RESULTS} and the '{HEADING}' section of {run.REPORT}", flush=True)
    return 0


# --- the report -----------------------------------------------------------------------------


def growth(points: list[tuple[int, float]]) -> float | None:
    """b in p95 ~ pages^b, least squares on the logs."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(t, 0.01)) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def render(r: dict[str, Any]) -> str:
    sizes = list(r["sizes"].values())
    largest = sizes[-1]
    bare = largest["questions"]["bare view (GET /api/v1/me/)"]
    lines = [
        HEADING,
        "",
        f"`nice -n 19 .venv/bin/python bench/million.py` ({r['date']}; {r['rounds']} rounds, "
        f"one client, every question in a shuffled order each round). Machine: {r['machine']}; "
        "PostgreSQL on the same machine, durable commits (fsync "
        f"{largest['database']['fsync']}, synchronous_commit "
        f"{largest['database']['synchronous_commit']}), shared_buffers "
        f"{largest['database']['shared_buffers']}. Wall: the client's time per call; CPU: the "
        "worker's own CPU time for it (Server-Timing, time.thread_time), which the shared "
        "machine's load does not stretch.",
        "",
        "| size | pages | database | load before → after | took |",
        "|---|---|---|---|---|",
    ]
    for size in sizes:
        lines.append(
            f"| {size['pages']:,} | subtree {size['subtree']} | "
            f"{size['database']['database_size']} | {size['load_before']} → "
            f"{size['load_after']} | {size['seconds']} s |"
        )
    lines += [
        "",
        f"At {largest['pages']:,} pages, per question (ms); `/bare` is the p95 against the bare "
        f"view's ({bare['wall_p95']} ms wall, {bare['cpu_p95']} ms CPU); growth: b in "
        "p50 (and p95) ~ pages^b fitted over the sizes measured (least squares on the logs; "
        "under this machine's load p95 is noisy, p50 less so); target: p95 under "
        f"{TARGET_P95_MS:.0f} ms.",
        "",
        "| question | wall p50 | wall p95 | /bare | CPU p50 | CPU p95 | CPU /bare | growth b "
        "(p50) | growth b (p95) | p95 < 300 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    over = 0
    for name, q in largest["questions"].items():
        points = [
            (size["pages"], size["questions"][name]["wall_p95"])
            for size in sizes
            if name in size["questions"]
        ]
        b = growth(points)
        b50 = growth(
            [
                (size["pages"], size["questions"][name]["wall_p50"])
                for size in sizes
                if name in size["questions"]
            ]
        )
        met = q["wall_p95"] < TARGET_P95_MS
        over += not met
        lines.append(
            f"| {name} | {q['wall_p50']} | {q['wall_p95']} | "
            f"{q['wall_p95'] / bare['wall_p95']:.1f}x | {q['cpu_p50']} | {q['cpu_p95']} | "
            f"{q['cpu_p95'] / bare['cpu_p95']:.1f}x | {'' if b50 is None else f'{b50:.2f}'} | "
            f"{'' if b is None else f'{b:.2f}'} | "
            f"{'yes' if met else '**no**'} |"
        )
    lines += [
        "",
        f"{over} of {len(largest['questions'])} questions over the {TARGET_P95_MS:.0f} ms p95 "
        f"target at {largest['pages']:,} pages.",
    ]
    if len(sizes) > 1:
        lines += ["", "Wall p95 (ms) per size:", ""]
        header = " | ".join(f"{s['pages']:,}" for s in sizes)
        lines += [f"| question | {header} |", "|---|" + "---|" * len(sizes)]
        for name in largest["questions"]:
            cells = " | ".join(str(s["questions"].get(name, {}).get("wall_p95", "")) for s in sizes)
            lines.append(f"| {name} | {cells} |")
    return "\n".join(lines) + "\n"


def write_section(section: str) -> None:
    text = run.REPORT.read_text() if run.REPORT.exists() else ""
    if HEADING in text:
        start = text.index(HEADING)
        end = text.find("\n## ", start + len(HEADING))
        text = text[:start] + section + ("" if end == -1 else text[end:])
    else:
        text = text.rstrip("\n") + "\n\n" + section
    run.REPORT.write_text(text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--report"]:  # the section again from the results file, no measuring
        write_section(render(json.loads(RESULTS.read_text())))
        raise SystemExit(0)
    raise SystemExit(main())
