"""Profile the fixed cost of one MCP tool call through the whole Django stack (pyinstrument).

    DATABASE_URL=... python bench/profile_call.py [--tool get_page] [--calls 300] [--bare]

Uses an agent of its own ("profile-agent") with the page set of the database's first agent
that has pages ("bench-agent" when present; PROFILE_AGENT names another, e.g.
"scale-subtree", whose copy is "profile-scale-subtree"). PROFILE_QUERY sets search_pages's
query (default "list files"). Prints pyinstrument's text report, the mean per
call, the median of `--calls` calls timed one by one without the profiler, and the SQL
queries of one call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default="get_page")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument(
        "--bare", action="store_true", help="time GET /api/v1/me/ instead (bench's bare_view)"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "profile-only")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("QUIRE_AGENT_RATE_LIMIT", "100000000")
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from pyinstrument import Profiler

    from agents import services
    from agents.models import Agent, PageSetEntry
    from agents.selectors import page_set_rows
    from core.actors import SystemActor

    source = (
        Agent.objects.filter(name=os.environ.get("PROFILE_AGENT", "bench-agent")).first()
        or Agent.objects.filter(pk__in=PageSetEntry.objects.values("agent")).first()
    )
    assert source is not None, "no agent with pages in this database"
    # Its own agent with the same set: rotating the bench agent's token would break
    # `BENCH_REUSE=1 make bench`, which keeps that token.
    actor = SystemActor("profile")
    name = "profile-agent" if source.name == "bench-agent" else f"profile-{source.name}"
    agent = Agent.objects.filter(name=name).first()
    if agent is None:
        agent, _ = services.agent_create(actor=actor, name=name)
        for entry in PageSetEntry.objects.filter(agent=source).select_related("page"):
            services.page_set_add(
                actor=actor, agent=agent, page=entry.page, use_when=list(entry.use_when)
            )
    token = services.agent_token_rotate(actor=actor, agent=agent)
    page_ids = [row.public_id for row in page_set_rows(agent)[:50]]
    arguments = {
        "get_page": lambda n: {"pageId": page_ids[n % len(page_ids)]},
        "browse": lambda n: {},
        "search_pages": lambda n: {"query": os.environ.get("PROFILE_QUERY", "list files")},
    }[args.tool]
    client = Client(
        HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_ACCEPT="application/json, text/event-stream"
    )

    def call_tool(n: int) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": args.tool, "arguments": arguments(n)},
        }
        response = client.post("/mcp", json.dumps(body), content_type="application/json")
        assert response.status_code == 200 and b'"isError":true' not in response.content

    def call_bare(n: int) -> None:
        response = bare.get("/api/v1/me/")
        assert response.status_code == 200

    call = call_tool
    if args.bare:
        from django.contrib.auth.models import User

        from reviews.api_tokens import api_token_create

        user = User.objects.filter(is_superuser=True).first()
        assert user is not None, "no superuser in this database"
        key = api_token_create(actor=SystemActor("profile"), user=user)
        bare = Client(HTTP_AUTHORIZATION=f"Token {key}")
        call = call_bare

    for n in range(20):
        call(n)
    profiler = Profiler(interval=0.0005)
    started = time.perf_counter()
    with profiler:
        for n in range(args.calls):
            call(n)
    elapsed = time.perf_counter() - started
    print(
        profiler.output_text(
            unicode=False, color=False, show_all=bool(os.environ.get("PROFILE_ALL"))
        )
    )
    timings: list[float] = []
    # This process's CPU time: steadier than the wall clock on a busy machine, but blind to
    # the time PostgreSQL spends (planning included).
    cpu_timings: list[float] = []
    for n in range(args.calls):
        started, cpu_started = time.perf_counter(), time.process_time()
        call(n)
        timings.append(1000 * (time.perf_counter() - started))
        cpu_timings.append(1000 * (time.process_time() - cpu_started))
    with CaptureQueriesContext(connection) as queries:
        call(0)
    if args.bare:
        args.tool = "GET /api/v1/me/ (bare view)"
    print(f"{args.tool}: {1000 * elapsed / args.calls:.2f} ms per call")
    print(f"median of {args.calls} calls: {statistics.median(timings):.2f} ms")
    print(f"median CPU time of this process: {statistics.median(cpu_timings):.2f} ms")
    print(f"SQL queries per call: {len(queries)}")
    for query in queries.captured_queries:
        print("  ", query["sql"][:160])


if __name__ == "__main__":
    main()
