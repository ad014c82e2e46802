"""`make bench`: every tldr page on PostgreSQL behind gunicorn, driven over HTTP.

1. Builds the site (bench/site.py) in a database whose name contains "bench"
   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/quire_bench): dropped and
   created afresh, unless BENCH_REUSE=1 and it was built before (its figures are kept in
   var/bench/).
2. Serves it with gunicorn on a free port; starts Basic Memory 0.24 (its own virtualenv on
   Python 3.12, BENCH_PEER_PYTHON) over the same English pages, as the peer.
3. One client: call by call, interleaved in a shuffled order each round so that machine
   load hits all alike: browse (first page, a subtree), search_pages (rare, common, very
   common words, plain questions), get_page, update_page, edit_page, bare_view
   (GET /api/v1/me/), raw_sql_search (the SQL search_pages runs, sent straight to
   PostgreSQL) and peer_search (Basic Memory's search_notes, text mode).
4. Concurrency: 1, 8 and 32 clients, all calling get_page, then all bare_view, in
   alternating blocks; throughput and latency of each at each level.
5. Writes bench/results/latest.json, bench/REPORT.md and bench/results/latency.png.

BENCH_ROUNDS sets the single-client rounds (default 150); BENCH_SECONDS the seconds per
concurrency level (default 15); BENCH_PEER=0 leaves the peer out.
"""

from __future__ import annotations

import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORK = ROOT / "var" / "bench"
RESULTS = ROOT / "bench" / "results"
REPORT = ROOT / "bench" / "REPORT.md"
CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
TLDR = CORPUS / "tldr-pages.tar.gz"
PEER_PYTHON = os.environ.get(
    "BENCH_PEER_PYTHON", str(Path.home() / ".pyenv/versions/3.12.1/bin/python")
)
PEER_PACKAGE = "basic-memory==0.24.1"
SEED = 20261130
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "150"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))
CONCURRENCY = (1, 8, 32)

# Query kinds: how many pages hold the words, and plain questions.
QUERIES = {
    "rare": ["kubectl rollout", "ffmpeg subtitles", "rsync exclude", "openssl certificate"],
    "common": ["compress archive", "list files", "kill process", "network interface"],
    "very common": ["file", "directory", "display", "command"],
    "question": [
        "how do I extract a tar archive",
        "how can I see which process uses a port",
        "how do I change the owner of a file",
        "what is the command to show free disk space",
    ],
    # Words in Chinese, Japanese and Korean, which hold no spaces between words (Korean
    # does between words, not inside them): found through their character pairs.
    "cjk": ["ファイル", "파일 목록", "压缩文件", "디렉토리"],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, seconds: float, **kwargs: Any) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2, **kwargs)
            return
        except httpx.HTTPError:
            time.sleep(0.5)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s")


# --- the site -------------------------------------------------------------------------------


def database_url() -> str:
    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/quire_bench")
    name = urlparse(url).path.lstrip("/")
    if "bench" not in name:
        raise SystemExit(
            f"BENCH_DATABASE_URL names the database {name!r}; the benchmark drops and recreates "
            "it, so its name must contain 'bench' (e.g. .../quire_bench)."
        )
    return url


def redis_url() -> str:
    """The Redis database the served site uses, as in production (docker-compose.yml): rate
    limits and caches there, review emails queued there (no worker runs: they wait). It is
    emptied before the run. BENCH_REDIS_URL=none serves without Redis (the embedded default:
    counters in the database, tasks in process)."""
    return os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")


def site_env(url: str) -> dict[str, str]:
    redis = redis_url()
    return {
        **os.environ,
        **({"REDIS_URL": redis} if redis != "none" else {}),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "QUIRE_AGENT_RATE_LIMIT": "100000000",
        "LOG_LEVEL": "WARNING",
        # Keyword search, as the raw-SQL baseline runs it: search by meaning (the query's
        # embedding, the vector leg) is measured against keyword-only in bench/search_quality.py.
        "QUIRE_EMBEDDING_MODEL": os.environ.get("BENCH_EMBEDDING_MODEL", "none"),
    }


def ensure_database(url: str, *, afresh: bool = False) -> bool:
    """Create the PostgreSQL database `url` names when it is not there (dropped first when
    `afresh`); True when it was created. A SQLite URL is left alone: SQLite creates its file."""
    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    if not parsed.scheme.startswith("postgres"):
        return False
    name = parsed.path.lstrip("/")
    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        if afresh:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        elif conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return True


def build_site(url: str) -> dict[str, Any]:
    """The site's figures and tokens; builds it unless BENCH_REUSE=1 finds it built."""
    import psycopg

    name = urlparse(url).path.lstrip("/")
    saved = WORK / f"site-{name}.json"
    if os.environ.get("BENCH_REUSE") == "1" and saved.exists():
        print(f"reusing the site in {name} ({saved})", flush=True)
        site: dict[str, Any] = json.loads(saved.read_text())
    else:
        ensure_database(url, afresh=True)
        print(f"building the site in {name}: every tldr page...", flush=True)
        out = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "site.py")],
            cwd=ROOT,
            env=site_env(url),
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        ).stdout
        site = json.loads(out.strip().splitlines()[-1])
        WORK.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(site, indent=2))
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=site_env(url),
        check=True,
    )
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    print(
        f"site: {site['pages']:,} pages, imported at {site['import_pages_per_s']} pages/s",
        flush=True,
    )
    return site


def serve(url: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    workers = int(os.environ.get("BENCH_WORKERS", str(2 * (os.cpu_count() or 1) + 1)))
    # gthread keeps connections alive, as an MCP client's are; BENCH_WORKER_CLASS=sync serves
    # as the docker entrypoint does (gunicorn's default: a connection per request).
    worker_class = os.environ.get("BENCH_WORKER_CLASS", "gthread")
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        f"--bind=127.0.0.1:{port}",
        f"--workers={workers}",
        f"--worker-class={worker_class}",
        *(["--threads=8"] if worker_class == "gthread" else []),
        "--log-level=warning",
    ]
    server = subprocess.Popen(command, cwd=ROOT, env=site_env(url))
    base = f"http://127.0.0.1:{port}"
    wait_for(base + "/healthz", 60)
    return server, base


# --- the peer: Basic Memory -----------------------------------------------------------------


def peer_start() -> tuple[subprocess.Popen[bytes] | None, str]:
    """Basic Memory over the English pages, serving MCP over HTTP; None when unavailable."""
    if os.environ.get("BENCH_PEER") == "0":
        return None, ""
    venv = WORK / "peer-venv"
    if not (venv / "bin" / "basic-memory").exists():
        if not Path(PEER_PYTHON).exists():
            print(f"peer skipped: no Python 3.12 at {PEER_PYTHON}", flush=True)
            return None, ""
        subprocess.run([PEER_PYTHON, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", PEER_PACKAGE], check=True)
    home = WORK / "peer"
    notes = home / "notes"
    env = {
        **os.environ,
        "HOME": str(home),
        "BASIC_MEMORY_CONFIG_DIR": str(home / "config"),
        "BASIC_MEMORY_HOME": str(notes),
        "BASIC_MEMORY_LOG_LEVEL": "WARNING",
    }
    if not (home / "indexed").exists():
        shutil.rmtree(home, ignore_errors=True)
        notes.mkdir(parents=True)
        with tarfile.open(TLDR) as archive:
            members = [
                m
                for m in archive.getmembers()
                if m.isfile() and m.name.startswith("pages/") and m.name.endswith(".md")
            ]
            archive.extractall(notes, members=members, filter="data")
        print(f"indexing {len(members):,} English pages in Basic Memory...", flush=True)
        subprocess.run(
            [str(venv / "bin" / "basic-memory"), "reindex", "--full", "--search"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (home / "indexed").touch()
    port = free_port()
    server = subprocess.Popen(
        [
            str(venv / "bin" / "basic-memory"),
            "mcp",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            httpx.post(url, timeout=2)
            break
        except httpx.HTTPError:
            time.sleep(1)
    return server, url


class PeerClient:
    """Basic Memory's search_notes in its text mode, over MCP in one session."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=60)
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        answer = self.http.post(
            url,
            headers=self.headers,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "quire-bench", "version": "1"},
                },
            },
        )
        session = answer.headers.get("mcp-session-id")
        if session:
            self.headers["mcp-session-id"] = session
        self.http.post(
            url,
            headers=self.headers,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        )
        self.ids = iter(range(1, 10**9))

    def search(self, query: str) -> None:
        answer = self.http.post(
            self.url,
            headers=self.headers,
            json={
                "jsonrpc": "2.0",
                "id": next(self.ids),
                "method": "tools/call",
                "params": {
                    "name": "search_notes",
                    "arguments": {"query": query, "search_type": "text", "page_size": 8},
                },
            },
        )
        if answer.status_code != 200 or '"isError":true' in answer.text:
            raise SystemExit(f"peer search failed: {answer.status_code} {answer.text[:300]}")


# --- Quire's client -------------------------------------------------------------------------


class Quire:
    """JSON-RPC over HTTP to /mcp (stateless: one POST per call) and the REST floor."""

    def __init__(self, base: str, agent_token: str, api_token: str) -> None:
        self.base = base
        self.http = httpx.Client(timeout=60)
        self.mcp_headers = {
            "Authorization": f"Bearer {agent_token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.api_headers = {"Authorization": f"Token {api_token}"}
        self.ids = iter(range(1, 10**9))

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = self.http.post(
            self.base + "/mcp",
            headers=self.mcp_headers,
            json={
                "jsonrpc": "2.0",
                "id": next(self.ids),
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            },
        )
        if answer.status_code != 200:
            raise SystemExit(f"{tool}: HTTP {answer.status_code} {answer.text[:300]}")
        result: dict[str, Any] = answer.json()["result"]
        if result.get("isError"):
            raise SystemExit(f"{tool} failed: {result['content'][0]['text'][:300]}")
        return result

    def bare_view(self) -> None:
        answer = self.http.get(self.base + "/api/v1/me/", headers=self.api_headers)
        if answer.status_code != 200:
            raise SystemExit(f"bare view: HTTP {answer.status_code} {answer.text[:200]}")


# --- raw SQL --------------------------------------------------------------------------------


def search_sql(url: str, queries: list[str]) -> dict[str, list[str]]:
    """The SQL that search_pages runs for the bench agent's set, per query."""
    os.environ.update(site_env(url))
    import django

    django.setup()
    from django.db import connection

    from agents import selectors
    from agents.models import Agent

    agent = Agent.objects.get(name="bench-agent")
    scope = selectors.agent_scope(agent)
    statements = {query: captured_search_sql(query, scope) for query in queries}
    connection.close()
    return statements


def captured_search_sql(query: str, scope: Any) -> list[str]:
    """The statements one search_pages call for `scope` sends in a process that has served
    searches before: the search runs once uncaptured first, so that what a process reads
    with its first search only (the wiki's languages, `wiki.language.wiki_languages`: an
    index scan of every page's row, 15 to 20 ms at 116,283 pages, read again by a thread of
    its own after that) is not in the raw leg of every round, as it was for the first query
    of the first set captured. Called as the MCP tool calls it (8 hits, copies folded: a
    deeper ranking and the copies' statement, `wiki.search.folding.copies_of`); before
    2026-12-08 the raw leg left both out, so an every-page call looked about 4 ms dearer than
    its SQL."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from wiki.search import search_pages

    search_pages(query, scope=scope, limit=8, fold_copies=True)
    with CaptureQueriesContext(connection) as captured:
        search_pages(query, scope=scope, limit=8, fold_copies=True)
    return [q["sql"] for q in captured]


def send_search_sql(raw: Any, statements: list[str]) -> None:
    """Send a search's captured statements (`search_sql`) as the search sends them: a
    statement's settings (`SELECT set_config(...)`) and the statement in one pipeline, one
    round trip and one implicit transaction (wiki.search_limits.search_rows); any other
    statement on its own. `raw`: a psycopg connection in autocommit."""
    pending = list(statements)
    while pending:
        sql = pending.pop(0)
        if sql.startswith("SELECT set_config(") and pending:
            with raw.pipeline():
                raw.execute(sql)
                cursor = raw.execute(pending.pop(0))
            cursor.fetchall()
            continue
        cursor = raw.execute(sql)
        if cursor.description is not None:  # BEGIN, SAVEPOINT... return no rows
            cursor.fetchall()


# --- measuring ------------------------------------------------------------------------------


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)

    return {
        "p50_ms": pct(50),
        "p95_ms": pct(95),
        "p99_ms": pct(99),
        "mean_ms": round(statistics.fmean(ordered), 2),
        "n": len(ordered),
    }


def single_client(
    operations: dict[str, list[Callable[[], Any]]], rounds: int
) -> dict[str, list[float]]:
    """Each round calls one variant of every operation, in a shuffled order."""
    rng = random.Random(SEED)
    samples: dict[str, list[float]] = {name: [] for name in operations}
    names = list(operations)
    for name in names:  # warm up every path once
        operations[name][0]()
    for n in range(rounds):
        rng.shuffle(names)
        for name in names:
            variants = operations[name]
            call = variants[n % len(variants)]
            started = time.perf_counter()
            call()
            samples[name].append((time.perf_counter() - started) * 1000)
        if (n + 1) % 25 == 0:
            print(f"  round {n + 1}/{rounds}", flush=True)
    return samples


def concurrent(
    clients: int, seconds: float, make: Callable[[], dict[str, Callable[[], Any]]]
) -> dict[str, Any]:
    """`clients` threads calling one operation at a time, in alternating blocks.

    Every client runs the same operation in a block (so each operation's throughput is its
    own), and the blocks alternate (get_page, bare_view, get_page...) so that load changes
    on the machine fall on both alike. `seconds` is the time per operation.
    """
    blocks = 3
    block_seconds = seconds / blocks
    samples: dict[str, list[float]] = {}
    busy: dict[str, float] = {}
    lock = threading.Lock()
    names = list(make())
    per_client = [make() for _ in range(clients)]
    for _ in range(blocks):
        for name in names:
            start = threading.Barrier(clients + 1)
            stop_at = [0.0]

            def worker(
                operations: dict[str, Callable[[], Any]],
                name: str = name,
                start: threading.Barrier = start,
                stop_at: list[float] = stop_at,
            ) -> None:
                mine: list[float] = []
                start.wait()
                while time.perf_counter() < stop_at[0]:
                    began = time.perf_counter()
                    operations[name]()
                    mine.append((time.perf_counter() - began) * 1000)
                with lock:
                    samples.setdefault(name, []).extend(mine)

            threads = [threading.Thread(target=worker, args=(ops,)) for ops in per_client]
            for thread in threads:
                thread.start()
            stop_at[0] = time.perf_counter() + block_seconds
            began = time.perf_counter()
            start.wait()
            for thread in threads:
                thread.join()
            busy[name] = busy.get(name, 0.0) + time.perf_counter() - began
    return {
        name: {**percentiles(values), "requests_per_s": round(len(values) / busy[name], 1)}
        for name, values in samples.items()
    }


def main() -> int:
    if not TLDR.exists():
        print(f"The tldr corpus is missing at {TLDR}; set QUIRE_CORPUS.", file=sys.stderr)
        return 1
    url = database_url()
    site = build_site(url)
    if redis_url() != "none":
        import redis

        redis.Redis.from_url(redis_url()).flushdb()
    server, base = serve(url)
    peer_server, peer_url = peer_start()
    try:
        return measure(url, site, base, peer_url)
    finally:
        server.terminate()
        server.wait(30)
        if peer_server is not None:
            peer_server.terminate()
            peer_server.wait(30)


def measure(url: str, site: dict[str, Any], base: str, peer_url: str) -> int:
    import psycopg

    quire = Quire(base, site["agent_token"], site["api_token"])
    first = quire.call("browse")["structuredContent"]
    assert first["total"] == site["pages"] - 1 or first["total"] > 30_000, first["total"]
    rng = random.Random(SEED)
    english = [
        page for page in _all_pages(quire, under="pages/common") if page["path"].count("/") == 2
    ]
    sample = rng.sample(english, 60)
    long_pages = [page["pageId"] for page in sample]
    queries = [q for kind in QUERIES.values() for q in kind]
    statements = search_sql(url, queries)
    # Never prepared: psycopg prepares a statement run 5 times, and PostgreSQL then reuses
    # the plan of a statement without parameters, where the served search (its values bound
    # apart, plan_cache_mode=force_custom_plan) is planned every time. Prepared, the raw leg
    # skipped the planning the search does (at 116,283 pages and load 9.8, four searches in
    # 101 single pages took 11.5 ms prepared, 28.9 ms not).
    raw = psycopg.connect(url, autocommit=True, prepare_threshold=None)
    raw.execute("SET jit = off")

    def raw_search(query: str) -> None:
        send_search_sql(raw, statements[query])

    sources = {
        page_id: quire.call("get_page_source", pageId=page_id)["structuredContent"]
        for page_id in long_pages[:20]
    }
    counter = iter(range(10**9))

    def edit(page_id: str) -> None:
        markdown = sources[page_id]["markdown"]
        line = next(line for line in markdown.splitlines() if line.startswith("> "))
        quire.call(
            "edit_page",
            pageId=page_id,
            edits=[{"oldText": line, "newText": f"{line} (checked {next(counter)})"}],
            changeSummary="Benchmark edit.",
        )

    def update(page_id: str) -> None:
        markdown = sources[page_id]["markdown"]
        quire.call(
            "update_page",
            pageId=page_id,
            markdown=markdown + f"\n- Benchmark note {next(counter)}.\n",
            changeSummary="Benchmark update.",
        )

    peer = PeerClient(peer_url) if peer_url else None
    english_queries = [
        q for kind in ("rare", "common", "very common", "question") for q in QUERIES[kind]
    ]
    operations: dict[str, list[Callable[[], Any]]] = {
        "browse": [
            partial(quire.call, "browse"),
            partial(quire.call, "browse", under="pages/linux"),
        ],
        "search_pages": [partial(quire.call, "search_pages", query=q) for q in queries],
        "get_page": [partial(quire.call, "get_page", pageId=p) for p in long_pages],
        "update_page": [partial(update, p) for p in long_pages[:10]],
        "edit_page": [partial(edit, p) for p in long_pages[10:20]],
        "bare_view": [quire.bare_view],
        "raw_sql_search": [partial(raw_search, q) for q in queries],
    }
    if peer is not None:
        operations["peer_search"] = [partial(peer.search, q) for q in english_queries]
    print(f"single client, {ROUNDS} rounds of {len(operations)} operations...", flush=True)
    samples = single_client(operations, ROUNDS)
    by_kind = {
        kind: percentiles(
            [
                samples["search_pages"][n]
                for n in range(len(samples["search_pages"]))
                if queries[n % len(queries)] in QUERIES[kind]
            ]
        )
        for kind in QUERIES
        if any(queries[n % len(queries)] in QUERIES[kind] for n in range(ROUNDS))
    }
    browse_variants = {
        label: percentiles(samples["browse"][index::2])
        for index, label in enumerate(["first page", "subtree pages/linux"])
    }
    levels: dict[str, Any] = {}
    for clients in CONCURRENCY:
        print(f"{clients} concurrent client(s) for {SECONDS:.0f} s...", flush=True)

        def make() -> dict[str, Callable[[], Any]]:
            own = Quire(base, site["agent_token"], site["api_token"])
            pages = list(long_pages)
            random.Random().shuffle(pages)
            cycle = iter(range(10**9))
            return {
                "get_page": lambda: own.call("get_page", pageId=pages[next(cycle) % len(pages)]),
                "bare_view": own.bare_view,
            }

        levels[str(clients)] = concurrent(clients, SECONDS, make)
    with raw.cursor() as cursor:
        cursor.execute("SELECT pg_size_pretty(pg_total_relation_size('wiki_auditevent'))")
        audit_size = cursor.fetchone()[0]  # type: ignore[index]
    answer_sizes = {
        "browse first page (characters)": len(first_text(quire.call("browse"))),
        "get_page (characters, largest of the sample)": max(
            len(first_text(quire.call("get_page", pageId=p))) for p in long_pages[:20]
        ),
    }
    results: dict[str, Any] = {
        "run": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s)",
        "pages": site["pages"],
        "import_pages_per_s": site["import_pages_per_s"],
        "redis": redis_url() != "none",
        **{name: percentiles(values) for name, values in samples.items()},
        "search_pages_by_kind": by_kind,
        "browse_by_variant": browse_variants,
        "concurrency": levels,
        "answer_sizes": answer_sizes,
        "audit_table": audit_size,
        "rounds": ROUNDS,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(results, indent=2) + "\n")
    plot(levels, RESULTS / "latency.png")
    REPORT.write_text(render_report(results) + kept_sections())
    print(f"wrote {RESULTS / 'latest.json'}, {REPORT} and {RESULTS / 'latency.png'}")
    return 0


def first_text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def _all_pages(quire: Quire, *, under: str) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    cursor = None
    while True:
        extra: dict[str, Any] = {"cursor": cursor} if cursor else {}
        answer = quire.call("browse", under=under, **extra)["structuredContent"]
        pages += answer["pages"]
        cursor = answer.get("nextCursor")
        if not cursor:
            return pages


# --- the report -----------------------------------------------------------------------------


def plot(levels: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clients = [int(c) for c in levels]
    figure, (latency, throughput) = plt.subplots(1, 2, figsize=(10, 4))
    for name in ("get_page", "bare_view"):
        latency.plot(
            clients, [levels[str(c)][name]["p50_ms"] for c in clients], "o-", label=f"{name} p50"
        )
        latency.plot(
            clients, [levels[str(c)][name]["p95_ms"] for c in clients], "o--", label=f"{name} p95"
        )
        throughput.plot(
            clients, [levels[str(c)][name]["requests_per_s"] for c in clients], "o-", label=name
        )
    latency.set(xlabel="concurrent clients", ylabel="ms", title="Latency")
    throughput.set(xlabel="concurrent clients", ylabel="requests/s", title="Throughput")
    for axes in (latency, throughput):
        axes.set_xscale("log", base=2)
        axes.set_xticks(clients, [str(c) for c in clients])
        axes.grid(True, alpha=0.3)
        axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


# The report's sections that other benches write (bench/one_line_fix.py, search_quality.py,
# search_scale.py): a run of this bench keeps them as they are, from this heading on.
KEPT_FROM = "## Tokens of a one-line fix"


def kept_sections() -> str:
    old = REPORT.read_text() if REPORT.exists() else ""
    start = old.find(KEPT_FROM)
    return "" if start < 0 else "\n\n" + old[start:]


def render_report(r: dict[str, Any]) -> str:
    ops = [
        "browse",
        "search_pages",
        "get_page",
        "update_page",
        "edit_page",
        "bare_view",
        "raw_sql_search",
        "peer_search",
    ]
    lines = [
        "# Quire benchmark",
        "",
        f"Run {r['run']} by `make bench` (bench/run.py) on {r['machine']}, a machine shared "
        "with other work (figures move with its load; ratios are measured call by call, "
        "interleaved, so load hits all operations alike).",
        "",
        f"Site: {r['pages']:,} live pages (every page of tldr-pages, all languages) on "
        f"PostgreSQL, imported at {r['import_pages_per_s']} pages/s; served by gunicorn "
        "(gthread) over HTTP, "
        + (
            "with Redis for rate limits, caches and the task queue, as docker-compose runs it."
            if r.get("redis")
            else "without Redis (the embedded default: counters in the database)."
        )
        + " The agent's set holds every top-level folder.",
        "",
        "## One client",
        "",
        "| operation | p50 ms | p95 ms | p99 ms | n |",
        "|---|---:|---:|---:|---:|",
    ]
    for op in ops:
        if op in r:
            m = r[op]
            lines.append(f"| {op} | {m['p50_ms']} | {m['p95_ms']} | {m['p99_ms']} | {m['n']} |")
    lines += ["", "| search_pages by query kind | p50 ms | p95 ms |", "|---|---:|---:|"]
    for kind, m in r["search_pages_by_kind"].items():
        lines.append(f"| {kind} | {m['p50_ms']} | {m['p95_ms']} |")
    lines += ["", "| browse | p50 ms | p95 ms |", "|---|---:|---:|"]
    for kind, m in r["browse_by_variant"].items():
        lines.append(f"| {kind} | {m['p50_ms']} | {m['p95_ms']} |")
    g, b, s, q = r["get_page"], r["bare_view"], r["search_pages"], r["raw_sql_search"]
    c32 = r["concurrency"]["32"]
    targets = [
        ("get_page p95 / bare_view p95", ratio(g["p95_ms"], b["p95_ms"]), "≤ 2x"),
        ("search_pages p95 / raw_sql_search p95", ratio(s["p95_ms"], q["p95_ms"]), "≤ 1.5x"),
        ("search_pages p50 / raw_sql_search p50", ratio(s["p50_ms"], q["p50_ms"]), "≤ 3x"),
        (
            "search_pages p50 / peer_search p50",
            ratio(s["p50_ms"], r["peer_search"]["p50_ms"]) if "peer_search" in r else "n/a",
            "< 1x",
        ),
        ("browse p95 (ms)", str(r["browse"]["p95_ms"]), "< 150"),
        (
            "32 clients: get_page / bare_view throughput",
            ratio(c32["get_page"]["requests_per_s"], c32["bare_view"]["requests_per_s"]),
            "≥ 0.5x",
        ),
        ("import (pages/s)", str(r["import_pages_per_s"]), "≥ 150"),
    ]
    lines += ["", "## Ratios and targets", "", "| measure | this run | target |", "|---|---:|---:|"]
    lines += [f"| {a} | {b_} | {c} |" for a, b_, c in targets]
    lines += [
        "",
        "## Concurrency (all clients on get_page, then on bare_view, in alternating blocks)",
        "",
        "| clients | get_page req/s | get_page p50 / p95 ms | bare_view req/s "
        "| bare_view p50 / p95 ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    for clients, level in r["concurrency"].items():
        gp, bv = level["get_page"], level["bare_view"]
        lines.append(
            f"| {clients} | {gp['requests_per_s']} | {gp['p50_ms']} / {gp['p95_ms']} | "
            f"{bv['requests_per_s']} | {bv['p50_ms']} / {bv['p95_ms']} |"
        )
    lines += [
        "",
        "![latency and throughput against concurrency](results/latency.png)",
        "",
        "Answer sizes: "
        + ", ".join(f"{k}: {v:,}" for k, v in r["answer_sizes"].items())
        + f". Audit table after the run: {r['audit_table']}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
