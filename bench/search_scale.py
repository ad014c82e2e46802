"""`make bench-scale`: search_pages at 116,280 pages, over HTTP, against its own SQL.

1. Builds the site (bench/site.py with BENCH_COPIES=3: every tldr page of every language,
   imported three times, each copy under a top-level folder of its own) in a database whose
   name contains "bench" (BENCH_SCALE_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/quire_bench_scale): dropped and created afresh, unless
   BENCH_REUSE=1 finds it built (its figures are kept in var/bench/). Then migrates it, so a
   site built by older code is brought up to date as an operator's would be.
2. Three agents: `bench-agent`, whose set holds the three copies (every page); `scale-subtree`,
   whose set is one subtree of about 2,000 pages; `scale-scattered`, 101 single pages drawn
   from the whole site.
3. Serves the site with gunicorn as bench/run.py does (gthread workers, which keep the
   client's connection alive; BENCH_WORKER_CLASS=sync BENCH_WORKERS=3 serves it as the docker
   entrypoint does, a connection per request), and
   calls search_pages through MCP over HTTP for every query of the bench's set
   (bench/run.py QUERIES, CJK included) for each agent, interleaved in a shuffled order each
   round with the same search's SQL sent straight to PostgreSQL (raw SQL, captured from
   wiki.search for that agent's set), so load falls on both alike. Each MCP call is made twice
   in the round: with httpx (the official MCP Python client's HTTP library, the headline
   figure) and with the standard library's http.client (the least a client spends), so the
   report tells the client's cost from the server's. An answer that is not a result (HTTP
   error, tool error, the statement timeout's "try again") counts as an error.
4. Writes bench/results/search-scale.json and its own section of bench/REPORT.md (the rest
   of the report is kept).

BENCH_SCALE_ROUNDS sets the rounds (default 24: each set's p95 is taken over 480 calls, about
two minutes on an idle machine); BENCH_COPIES the copies (default 3);
BENCH_REDIS_URL the served site's Redis (bench/run.py). Search mode: keyword-only by default;
BENCH_SCALE_MODE=hybrid serves (and captures the raw SQL) with the embedding model,
BENCH_EMBEDDING_MODEL (default all-minilm-l6-v2, Quire's default), and fails unless /healthz
says hybrid. The site needs its vectors first (`manage.py embed_pages` with DATABASE_URL set
to the bench's database, e.g. a PostgreSQL with pgvector from bench/pgvector_server.py). Each
mode writes its own results file and report section.
"""

from __future__ import annotations

import http.client
import json
import os
import platform
import random
import re
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

import run  # noqa: E402 - bench/run.py, the HTTP bench this one shares its site and client with

HYBRID = os.environ.get("BENCH_SCALE_MODE", "keyword") == "hybrid"
RESULTS = (
    ROOT / "bench" / "results" / ("search-scale-hybrid.json" if HYBRID else "search-scale.json")
)
SECTION = "## Search at 116,280 pages" + (", hybrid" if HYBRID else "")
DEFAULT_MODEL = "all-minilm-l6-v2"
ROUNDS = int(os.environ.get("BENCH_SCALE_ROUNDS", "24"))
SUBTREE_PAGES = 2_000
SCATTERED_ENTRIES = 101
TARGET_P95_MS = 2_000.0


def database_url() -> str:
    url = os.environ.get(
        "BENCH_SCALE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/quire_bench_scale"
    )
    if "bench" not in urlparse(url).path:
        raise SystemExit(
            f"BENCH_SCALE_DATABASE_URL is {url}; the benchmark drops and recreates its "
            "database, so its name must contain 'bench'."
        )
    return url


def load() -> str:
    return " ".join(f"{n:.2f}" for n in os.getloadavg())


# --- agents and statements (in this process, through Django) --------------------------------


def setup_django(url: str) -> None:
    os.environ.update(run.site_env(url))
    import django

    django.setup()


def small_set_agents() -> dict[str, dict[str, Any]]:
    """`scale-subtree` and `scale-scattered`, made afresh; their tokens and set sizes."""
    from django.contrib.auth.models import User
    from django.db import connection

    from agents import services as agent_services
    from agents.models import Agent
    from wiki.models import Page

    admin = User.objects.get(username="bench-admin")
    Agent.objects.filter(name__in=["scale-subtree", "scale-scattered"]).delete()
    with connection.cursor() as cursor:
        # The subtree of the second copy whose size is nearest SUBTREE_PAGES.
        cursor.execute(
            """
            SELECT p.id, count(c.id) FROM wiki_page p
            JOIN wiki_page c ON c.path LIKE p.path || '/%%' AND c.live_version_id IS NOT NULL
            WHERE p.path LIKE 'copy2/%%' AND p.path NOT LIKE 'copy2/%%/%%/%%'
            GROUP BY p.id ORDER BY abs(count(c.id) - %s), p.id LIMIT 1
            """,
            [SUBTREE_PAGES],
        )
        root_id, below = cursor.fetchone()
    root = Page.objects.get(pk=root_id)
    agents: dict[str, dict[str, Any]] = {}
    agent, token = agent_services.agent_create(actor=admin, name="scale-subtree", owner=admin)
    agent_services.page_set_add(actor=admin, agent=agent, page=root, use_when=["Commands."])
    agents["subtree"] = {"token": token, "set": f"{root.path} ({below + 1:,} pages)"}
    leaves = list(
        Page.objects.filter(live_version__isnull=False, children__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    picked = random.Random(run.SEED).sample(leaves, SCATTERED_ENTRIES)
    agent, token = agent_services.agent_create(actor=admin, name="scale-scattered", owner=admin)
    for page in Page.objects.filter(pk__in=picked).order_by("path"):
        agent_services.page_set_add(actor=admin, agent=agent, page=page, use_when=["A command."])
    agents["scattered"] = {"token": token, "set": f"{SCATTERED_ENTRIES} single pages"}
    return agents


def statements(queries: list[str]) -> dict[str, dict[str, list[str]]]:
    """The SQL search_pages runs, per agent and query (as bench/run.py search_sql does)."""
    from django.db import connection

    from agents import selectors
    from agents.models import Agent

    names = {
        "everything": "bench-agent",
        "subtree": "scale-subtree",
        "scattered": "scale-scattered",
    }
    found: dict[str, dict[str, list[str]]] = {}
    for label, name in names.items():
        scope = selectors.agent_scope(Agent.objects.get(name=name))
        found[label] = {query: run.captured_search_sql(query, scope) for query in queries}
    connection.close()
    return found


# --- measuring --------------------------------------------------------------------------------


def search_request(token: str, query: str) -> tuple[dict[str, str], bytes]:
    """The headers and body of one search_pages call over MCP."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_pages", "arguments": {"query": query}},
    }
    return headers, json.dumps(body).encode()


def search_problem(status: int, content: bytes) -> str | None:
    """None when a search_pages answer is a result, else what went wrong."""
    if status != 200:
        return f"HTTP {status}"
    body = json.loads(content)
    if "error" in body:
        return f"JSON-RPC error {body['error'].get('code')}"
    result = body["result"]
    if result.get("isError"):
        return str(result["content"][0]["text"])[:120]
    return None


def search_call(http: httpx.Client, base: str, token: str, query: str) -> str | None:
    """One search_pages over MCP with httpx (the official MCP client's HTTP library)."""
    headers, body = search_request(token, query)
    answer = http.post(base + "/mcp", headers=headers, content=body)
    return search_problem(answer.status_code, answer.content)


class LeanClient:
    """POSTs with the standard library's http.client: the least an HTTP client spends on a
    call (httpx spent 0.6 to 0.9 ms of CPU a call more on this bench's machine), so that
    what the server costs can be told from what the client costs. It keeps its connection
    while the server does, and connects again when the server closes it (sync workers)."""

    def __init__(self, base: str) -> None:
        address = urlparse(base)
        self.host, self.port = address.hostname or "127.0.0.1", address.port or 80
        self.connection: http.client.HTTPConnection | None = None

    def post(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
            try:
                self.connection.request("POST", path, body=body, headers=headers)
                response = self.connection.getresponse()
                content = response.read()
            except (http.client.RemoteDisconnected, ConnectionError):
                # The server closed a kept connection between two calls: once more, afresh.
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
                continue
            if response.will_close:
                self.connection.close()
                self.connection = None
            return response.status, content
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


def lean_search_call(lean: LeanClient, token: str, query: str) -> str | None:
    """One search_pages over MCP with http.client."""
    headers, body = search_request(token, query)
    return search_problem(*lean.post("/mcp", headers, body))


def measure(
    url: str, base: str, tokens: dict[str, str], api_token: str, queries: list[str]
) -> dict[str, Any]:
    import psycopg

    sql = statements(queries)
    # Never prepared: psycopg prepares a statement run 5 times, and PostgreSQL then reuses
    # the plan of a statement without parameters, where the served search (its values bound
    # apart, plan_cache_mode=force_custom_plan) is planned every time. Prepared, the raw leg
    # skipped the planning the search does (at 116,283 pages and load 9.8, four searches in
    # 101 single pages took 11.5 ms prepared, 28.9 ms not).
    raw = psycopg.connect(url, autocommit=True, prepare_threshold=None)
    raw.execute("SET jit = off")
    http = httpx.Client(timeout=120)
    lean = LeanClient(base)
    calls = [
        (label, query, way)
        for label in tokens
        for query in queries
        for way in ("mcp", "lean", "raw")
    ]
    # The HTTP floor, as bench/run.py's bare_view: the cheapest authenticated view, a few
    # times a round.
    calls += [("floor", str(n), "bare") for n in range(5)]
    model = None
    if HYBRID:
        # What search_pages does beyond its SQL in hybrid mode: embed the query (in Python,
        # before the SQL), timed here in the same rounds with the model the site serves.
        from wiki.semantic import embedder

        model = embedder()
        assert model is not None, "hybrid mode needs the embedding model in this process"
        calls += [("embed", query, "embed") for query in queries]
    samples: dict[tuple[str, str, str], list[float]] = {call: [] for call in calls}
    errors: dict[str, int] = {}
    loads: list[float] = []
    rng = random.Random(run.SEED)
    for label, query, way in calls:  # warm up every path once
        if way == "mcp":
            search_call(http, base, tokens[label], query)
        elif way == "lean":
            lean_search_call(lean, tokens[label], query)
    for n in range(ROUNDS):
        rng.shuffle(calls)
        for label, query, way in calls:
            started = time.perf_counter()
            if way == "bare":
                answer = http.get(
                    base + "/api/v1/me/", headers={"Authorization": f"Token {api_token}"}
                )
                if answer.status_code != 200:
                    errors[f"floor: HTTP {answer.status_code}"] = 1
            elif way == "embed":
                assert model is not None
                model.query(query)
            elif way in ("mcp", "lean"):
                problem = (
                    search_call(http, base, tokens[label], query)
                    if way == "mcp"
                    else lean_search_call(lean, tokens[label], query)
                )
                if problem is not None:
                    key = f"{label} / {query}: {problem}"
                    errors[key] = errors.get(key, 0) + 1
            else:
                run.send_search_sql(raw, sql[label][query])
            samples[(label, query, way)].append((time.perf_counter() - started) * 1000)
        loads.append(os.getloadavg()[0])
        print(f"  round {n + 1}/{ROUNDS}, load {load()}", flush=True)
    raw.close()
    lean.close()
    per_query = {
        label: {
            query: {
                "mcp": run.percentiles(samples[(label, query, "mcp")]),
                "raw": run.percentiles(samples[(label, query, "raw")]),
            }
            for query in queries
        }
        for label in tokens
    }
    pooled = {
        label: {
            way: run.percentiles([v for q in queries for v in samples[(label, q, way)]])
            for way in ("mcp", "lean", "raw")
        }
        for label in tokens
    }
    floor = [v for (label, _, way), values in samples.items() if way == "bare" for v in values]
    embedding = [v for (_, _, way), values in samples.items() if way == "embed" for v in values]
    return {
        "floor": run.percentiles(floor),
        **({"embedding": run.percentiles(embedding)} if embedding else {}),
        "per_query": per_query,
        "pooled": pooled,
        "errors": errors,
        "load_min": min(loads),
        "load_max": max(loads),
    }


def main() -> int:
    if not run.TLDR.exists():
        print(f"The tldr corpus is missing at {run.TLDR}; set QUIRE_CORPUS.", file=sys.stderr)
        return 1
    os.environ.setdefault("BENCH_COPIES", "3")
    hybrid = HYBRID
    # bench/run.py's site_env serves (and this process captures the raw SQL with) the model
    # BENCH_EMBEDDING_MODEL names.
    if hybrid:
        os.environ.setdefault("BENCH_EMBEDDING_MODEL", DEFAULT_MODEL)
    else:
        os.environ["BENCH_EMBEDDING_MODEL"] = "none"
    url = database_url()
    site = run.build_site(url)
    setup_django(url)
    agents = small_set_agents()
    tokens = {"everything": site["agent_token"], **{k: v["token"] for k, v in agents.items()}}
    if run.redis_url() != "none":
        import redis

        redis.Redis.from_url(run.redis_url()).flushdb()
    server, base = run.serve(url)
    try:
        health = httpx.get(base + "/healthz", timeout=30).json()
        wanted = "hybrid" if hybrid else "keyword-only"
        if health.get("search", {}).get("mode") != wanted:
            raise SystemExit(f"the site does not serve {wanted} search: /healthz {health}")
        queries = [q for kind in run.QUERIES.values() for q in kind]
        print(f"{ROUNDS} rounds of {len(queries)} queries x 3 sets x (MCP, raw SQL)...")
        measured = measure(url, base, tokens, site["api_token"], queries)
    finally:
        server.terminate()
        server.wait(30)
    results = {
        "run": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s)",
        "pages": site["pages"],
        "copies": int(os.environ["BENCH_COPIES"]),
        "healthz": health,
        "mode": "hybrid" if hybrid else "keyword",
        "sets": {"everything": "the three copies (every page)"}
        | {k: v["set"] for k, v in agents.items()},
        "rounds": ROUNDS,
        "server": os.environ.get("BENCH_WORKER_CLASS", "gthread"),
        "queries": run.QUERIES,
        **measured,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    write_section(render(results))
    print(render(results))
    print(f"wrote {RESULTS} and the section '{SECTION}' of {run.REPORT}")
    slow = [
        (label, query, m["mcp"]["p95_ms"])
        for label, by_query in results["per_query"].items()
        for query, m in by_query.items()
        if m["mcp"]["p95_ms"] >= TARGET_P95_MS
    ]
    return 1 if slow or results["errors"] else 0


# --- the report -------------------------------------------------------------------------------


def render(r: dict[str, Any]) -> str:
    mode = "keyword-only" if r["mode"] == "keyword" else "hybrid"
    lines = [
        SECTION,
        "",
        f"Run {r['run']} by `{'BENCH_SCALE_MODE=hybrid ' if r['mode'] == 'hybrid' else ''}"
        f"make bench-scale` (bench/search_scale.py) on {r['machine']}, "
        f"shared with other work: load average {r['load_min']:.1f} to {r['load_max']:.1f} "
        f"(1 minute) during the run. Site: {r['pages']:,} live pages, the tldr pages "
        f"imported {r['copies']} times, on PostgreSQL, served by gunicorn "
        f"({r.get('server', 'gthread')} workers) as bench/run.py serves it; search {mode} "
        f"(/healthz: `{json.dumps(r['healthz'])}`). "
        f"{r['rounds']} rounds; in each, every query for each set over MCP search_pages "
        "(HTTP) and the same search's SQL sent straight to PostgreSQL (raw), in a shuffled "
        "order. Sets: " + "; ".join(f"{k}: {v}" for k, v in r["sets"].items()) + ". "
        "The raw leg sends every statement the search sends, as wiki.search.search_pages sent "
        "them for that set in this process, in a search after the first (the wiki's "
        "languages, which a process's first search reads, left out; each statement with its "
        "settings in one round trip, set_config and the statement pipelined), on one "
        "connection of its own"
        + (
            "; it does not embed the query (the model runs in Python, before the SQL), which "
            "search_pages does."
            if r["mode"] == "hybrid"
            else "."
        ),
        "",
        "search_pages is called with httpx, the HTTP library of the official MCP Python "
        "client; in the same rounds it is also called with the standard library's http.client "
        "(the least a client spends: its columns tell what the client costs from what the "
        "server costs).",
        "",
        "| set | search_pages p50 / p95 ms | raw SQL p50 / p95 ms | p95 ratio "
        "| over http.client p50 / p95 ms | its p95 ratio | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, m in r["pooled"].items():
        errors = sum(n for key, n in r["errors"].items() if key.startswith(f"{label} /"))
        lean = m["lean"]
        lines.append(
            f"| {label} | {m['mcp']['p50_ms']} / {m['mcp']['p95_ms']} | "
            f"{m['raw']['p50_ms']} / {m['raw']['p95_ms']} | "
            f"{run.ratio(m['mcp']['p95_ms'], m['raw']['p95_ms'])} | "
            f"{lean['p50_ms']} / {lean['p95_ms']} | "
            f"{run.ratio(lean['p95_ms'], m['raw']['p95_ms'])} | {errors} |"
        )
    floor = r["floor"]
    lines += [
        "",
        f"The HTTP floor in the same rounds (GET /api/v1/me/, the cheapest authenticated view, "
        f"as `make bench`'s bare_view): p50 {floor['p50_ms']} ms, p95 {floor['p95_ms']} ms.",
    ]
    if "embedding" in r:
        embedding = r["embedding"]
        lines += [
            "",
            f"The query's embedding alone, in the same rounds (the served model in the bench's "
            f"process, one ONNX thread, as search_pages embeds it beside its keyword SQL): p50 "
            f"{embedding['p50_ms']} ms, p95 {embedding['p95_ms']} ms. search_pages p95 against "
            "raw SQL p95 plus the embedding's p95: "
            + "; ".join(
                f"{label} "
                + run.ratio(m["mcp"]["p95_ms"], m["raw"]["p95_ms"] + embedding["p95_ms"])
                for label, m in r["pooled"].items()
            )
            + ".",
        ]
    labels = list(r["per_query"])
    lines += [
        "",
        "search_pages p95 ms per query (target: under 2,000 ms, no error):",
        "",
        "| kind | query | " + " | ".join(labels) + " |",
        "|---|---|" + "---:|" * len(labels),
    ]
    for kind, queries in r["queries"].items():
        for query in queries:
            cells = [str(r["per_query"][label][query]["mcp"]["p95_ms"]) for label in labels]
            lines.append(f"| {kind} | {query} | " + " | ".join(cells) + " |")
    worst = max(
        m["mcp"]["p95_ms"] for by_query in r["per_query"].values() for m in by_query.values()
    )
    lines += [
        "",
        f"Slowest query's p95: {worst} ms; errors: "
        + (", ".join(f"{k} ({n})" for k, n in r["errors"].items()) or "none")
        + ".",
        "",
    ]
    return "\n".join(lines)


def write_section(section: str) -> None:
    """Replace this bench's section of REPORT.md (up to the next `## `), or append it."""
    text = run.REPORT.read_text() if run.REPORT.exists() else "# Quire benchmark\n"
    # The heading's whole line: the keyword section's heading begins the hybrid one's.
    pattern = re.compile("^" + re.escape(SECTION) + r"$.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    run.REPORT.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
