"""Build the benchmark site: a PostgreSQL database holding every page of the tldr corpus.

Run by bench/run.py (and bench/search_scale.py) in a subprocess with DATABASE_URL set to the
benchmark database, which it has just dropped and created. Prints one JSON line: the import
figures, the agent's and the API user's tokens, and the sample of page ids the run uses.

BENCH_COPIES=N (default 1) imports the corpus N times, each copy under a top-level folder of
its own (copy1/pages/..., copy2/pages/...): the 116,280-page site of the scale bench is 3.
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
TLDR = CORPUS / "tldr-pages.tar.gz"


def extract(into: Path) -> int:
    """Every markdown page of every language; returns how many files."""
    copies = int(os.environ.get("BENCH_COPIES", "1"))
    if copies > 1:
        return sum(extract_once(into / f"copy{n}") for n in range(1, copies + 1))
    return extract_once(into)


def extract_once(into: Path) -> int:
    with tarfile.open(TLDR) as archive:
        members = [
            m
            for m in archive.getmembers()
            if m.isfile() and m.name.startswith("pages") and m.name.endswith(".md")
        ]
        # In archive order: seeking backwards in a gzip stream decompresses it from the start.
        archive.extractall(into, members=members, filter="data")
    return len(members)


def build() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from agents import services as agent_services
    from reviews.api_tokens import api_token_create
    from wiki.models import Page

    call_command("migrate", verbosity=0)
    admin, _ = User.objects.get_or_create(username="bench-admin")
    admin.is_superuser = admin.is_staff = True
    admin.set_unusable_password()
    admin.save()
    with tempfile.TemporaryDirectory(prefix="tldr-") as tmp:
        files = extract(Path(tmp))
        print(f"importing {files:,} markdown files...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        call_command("import_markdown", tmp, "--publish", "--author", admin.username, verbosity=0)
        seconds = time.perf_counter() - started
    pages = Page.objects.filter(live_version__isnull=False).count()
    agent, agent_token = agent_services.agent_create(
        actor=admin, name="bench-agent", owner=admin, can_edit_pages=True
    )
    for page in Page.objects.filter(parent__isnull=True, live_version__isnull=False).order_by(
        "path"
    ):
        agent_services.page_set_add(
            actor=admin,
            agent=agent,
            page=page,
            use_when=[f"Command-line help in {page.title}."],
            always_include=page.path == "pages",
        )
    api_token = api_token_create(actor=admin, user=admin)
    return {
        "files": files,
        "pages": pages,
        "import_seconds": round(seconds, 1),
        "import_pages_per_s": round(pages / seconds, 1),
        "agent_token": agent_token,
        "api_token": api_token,
    }


if __name__ == "__main__":
    print(json.dumps(build()))
