"""Hybrid against keyword-only search on the question sets (tests/question_sets.py): top-3
rate, mean reciprocal rank, search latency of both in the same run, and embedding throughput.

    DATABASE_URL=postgres://postgres@127.0.0.1:5439/quire_bench_semantic \\
        python bench/search_quality.py [--corpus tldr|handbook|both|site] [--rounds 3]

Builds the site in the given database (its name must contain "bench"; it is dropped and
recreated): imports the corpus, embeds it with `embed_pages` (timed), then asks every
question `--rounds` times through wiki.search.search_pages, hybrid and keyword-only
interleaved, inside an all-pages scope, after `--warmup` untimed rounds of both (a served
wiki searches from warm caches). `--corpus site` imports every tldr page (38,760 pages, all
languages, as bench/site.py builds the HTTP bench's site) and asks the tldr questions there:
the embedding throughput (wall and CPU seconds, load average) and the hybrid/keyword-only
latency at full scale. Writes bench/results/search-quality.json and prints a Markdown table
for bench/REPORT.md. `make bench` runs it after the HTTP bench with
`BENCH_SEMANTIC=1`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tarfile
import tempfile
import time
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))


def _cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", choices=["tldr", "handbook", "both", "site", "translations"], default="both"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed rounds of every question in both modes first: a served wiki searches "
        "from warm caches, a site just built does not (the first timed round read the HNSW "
        "index from disk: hybrid 2.49x keyword-only there, 1.85x and 1.60x in the next runs)",
    )
    parser.add_argument("--reuse", action="store_true", help="keep a site built before")
    parser.add_argument(
        "--within",
        help="ask inside the subtree at this path only (the first copy of a site built with "
        "BENCH_COPIES=3: --within copy1)",
    )
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if "bench" not in url.rsplit("/", 1)[-1]:
        sys.exit("set DATABASE_URL to a database whose name contains 'bench' (it is recreated)")
    from bench.run import ensure_database

    if ensure_database(url) and args.reuse:
        sys.exit("--reuse needs a site built before in this database, which was not there")

    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection

    from tests.question_sets import (
        HANDBOOK_QUESTIONS,
        HANDBOOK_TITLES,
        TLDR_PAGES,
        TLDR_QUESTIONS,
        TLDR_TITLES,
        TLDR_TRANSLATED,
        TRANSLATED_QUESTIONS,
        measure,
    )
    from wiki import semantic
    from wiki.models import Page, PageChunk
    from wiki.scope import EVERYTHING
    from wiki.search import search_pages

    if not args.reuse:
        call_command("flush", interactive=False, verbosity=0)
        call_command("migrate", verbosity=0)
    sets = []
    sources = []
    if args.corpus in ("tldr", "both", "site", "translations"):
        sets += [("tldr", TLDR_QUESTIONS), ("tldr titles", TLDR_TITLES)]
        if args.corpus in ("site", "translations"):
            # Every language's questions (docs/search.md's table): "tldr in es", "tldr in fr"...
            sets += [(f"tldr in {folder}", q) for folder, q in TRANSLATED_QUESTIONS.items()]
    if args.corpus in ("tldr", "both", "site", "translations") and not args.reuse:
        folder = Path(tempfile.mkdtemp(prefix="quire-tldr-"))
        if args.corpus == "site":
            from bench.site import extract

            extract(folder)
        elif args.corpus == "translations":
            # The question sets' pages in every language they are translated into.
            ends = tuple(end for _, end in TLDR_TRANSLATED)
            with tarfile.open(CORPUS / "tldr-pages.tar.gz") as archive:
                members = [
                    m
                    for m in archive.getmembers()
                    if m.name.startswith("pages") and m.name.endswith(ends)
                ]
                archive.extractall(folder, members=members, filter="data")
        else:
            with tarfile.open(CORPUS / "tldr-pages.tar.gz") as archive:
                wanted = set(TLDR_PAGES)
                members = [m for m in archive.getmembers() if m.name in wanted]
                archive.extractall(folder, members=members, filter="data")
        sources.append(folder)
    if args.corpus in ("handbook", "both"):
        sets += [("handbook", HANDBOOK_QUESTIONS), ("handbook titles", HANDBOOK_TITLES)]
        sources.append(CORPUS / "18f-handbook" / "pages")
    scope = EVERYTHING if args.within is None else EVERYTHING.narrowed((args.within,))
    embedded: dict[str, object] = {"pages": 0, "chunks": 0, "seconds": 0.0}
    if not args.reuse:
        author, _ = User.objects.get_or_create(
            username="bench-importer", defaults={"is_superuser": True, "is_staff": True}
        )
        for source in sources:
            # Chunks only: the embedding is timed on its own below.
            with override_model("none"):
                call_command(
                    "import_markdown",
                    str(source),
                    "--publish",
                    "--author",
                    author.username,
                    stdout=StringIO(),
                    stderr=StringIO(),
                )
        print("embedding...", file=sys.stderr, flush=True)
        load_before = os.getloadavg()
        began, cpu = time.monotonic(), _cpu_seconds()
        call_command("embed_pages", "--quiet", stdout=StringIO(), stderr=StringIO())
        embedded = {
            "pages": Page.objects.readable().count(),
            "chunks": PageChunk.objects.exclude(model="").count(),
            "distinct texts": PageChunk.objects.exclude(model="")
            .values("text_hash")
            .distinct()
            .count(),
            "seconds": round(time.monotonic() - began, 1),
            # This process only (the model and Django); the database's CPU is not in it.
            "cpu seconds": round(_cpu_seconds() - cpu, 1),
            "load before": [round(x, 2) for x in load_before],
            "load after": [round(x, 2) for x in os.getloadavg()],
        }
        print(f"embedded: {embedded}", file=sys.stderr, flush=True)
    by_id = dict(Page.objects.values_list("pk", "source_path"))
    for _ in range(args.warmup):
        for _name, questions in sets:
            for query, _expected in questions:
                for semantic_leg in (True, False):
                    search_pages(query, scope=scope, limit=8, semantic=semantic_leg)
    results: dict[str, dict[str, float]] = {}
    timings: dict[str, list[float]] = {"hybrid": [], "keyword-only": []}
    for name, questions in sets:
        answers: dict[str, list[tuple[list[str], tuple[str, ...]]]] = {
            "hybrid": [],
            "keyword-only": [],
        }
        for query, expected in questions:
            for round_ in range(args.rounds):
                for mode in ("hybrid", "keyword-only"):
                    began = time.perf_counter()
                    hits = search_pages(query, scope=scope, limit=8, semantic=mode == "hybrid")
                    timings[mode].append((time.perf_counter() - began) * 1000)
                    if round_ == 0:
                        answers[mode].append(([by_id[h.page_id] or "" for h in hits], expected))
        for mode, pairs in answers.items():
            results[f"{name} / {mode}"] = {k: round(v, 3) for k, v in measure(pairs).items()}
    latency = {
        mode: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(p95(v), 1)}
        for mode, v in timings.items()
    }
    report = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPU(s), load {os.getloadavg()}",
        "database": f"{connection.vendor}, vectors: {semantic.status().get('vectors')}",
        "model": semantic.status()["model"],
        "rounds": {"timed": args.rounds, "warm-up (untimed)": args.warmup},
        "embedded": embedded,
        "quality": results,
        "latency": latency,
    }
    out = ROOT / "bench" / "results" / "search-quality.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(report))


def markdown(report: dict) -> str:
    lines = [
        f"Run {report['when']} on {report['machine']}; {report['database']}; "
        f"model {report['model']}.",
        "",
        "| question set / ranking | top-3 | MRR |",
        "|---|---:|---:|",
    ]
    for name, m in report["quality"].items():
        lines.append(f"| {name} | {m['top3']:.0%} | {m['mrr']:.3f} |")
    lines += ["", "| search_pages (in process) | p50 ms | p95 ms |", "|---|---:|---:|"]
    for mode, m in report["latency"].items():
        lines.append(f"| {mode} | {m['p50_ms']} | {m['p95_ms']} |")
    e = report["embedded"]
    if e["seconds"]:
        lines += [
            "",
            f"Embedding: {e['pages']} pages ({e['chunks']} chunks) in {e['seconds']} s, "
            f"{e['pages'] / e['seconds']:.2f} pages/s, {e['chunks'] / e['seconds']:.2f} chunks/s.",
        ]
        if "cpu seconds" in e:
            lines.append(
                f"CPU: {e['cpu seconds']} s in the embedding process, "
                f"{e['cpu seconds'] / max(1, e['pages']) * 1000:.1f} ms per page; "
                f"{e['distinct texts']} distinct texts; load average {e['load before']} "
                f"before, {e['load after']} after."
            )
    hybrid, keyword = report["latency"]["hybrid"], report["latency"]["keyword-only"]
    lines.append(f"\nhybrid p95 / keyword-only p95: {hybrid['p95_ms'] / keyword['p95_ms']:.2f}x.")
    return "\n".join(lines)


class override_model:
    """Import without embedding: the model is switched off for the import's on-commit run."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __enter__(self) -> None:
        from django.conf import settings

        self.saved = settings.QUIRE_EMBEDDING_MODEL
        settings.QUIRE_EMBEDDING_MODEL = self.value

    def __exit__(self, *exc: object) -> None:
        from django.conf import settings

        settings.QUIRE_EMBEDDING_MODEL = self.saved


if __name__ == "__main__":
    main()
