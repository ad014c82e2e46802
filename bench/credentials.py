"""Benchmark and false-positive count of the credential check over the whole corpus.

Every markdown file of tldr (all languages) and of the 18F handbook goes through
`refuse_credentials`, as each imported or proposed page does. Prints the files refused (each
one is a false positive: the corpus holds no credential) and the time taken, and the time of
one 200,000-character page (the largest Quire accepts). Run with
`DEBUG=1 .venv/bin/python bench/credentials.py`.
"""

from __future__ import annotations

import os
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def corpus() -> list[tuple[str, str]]:
    files = []
    with tarfile.open(CORPUS / "tldr-pages.tar.gz") as archive:
        for member in archive:
            handle = archive.extractfile(member) if member.name.endswith(".md") else None
            if handle is not None:
                files.append((member.name, handle.read().decode("utf-8", "replace")))
    for path in sorted((CORPUS / "18f-handbook").rglob("*.md")):
        files.append((str(path.relative_to(CORPUS)), path.read_text("utf-8", "replace")))
    return files


def main() -> None:
    import django

    django.setup()
    from core.errors import InvalidArgument
    from wiki.credentials import refuse_credentials

    files = corpus()
    refused = []
    started = time.perf_counter()
    for name, text in files:
        try:
            refuse_credentials(text)
        except InvalidArgument as error:
            refused.append((name, error.detail["credentials"]))
    elapsed = time.perf_counter() - started
    characters = sum(len(text) for _, text in files)
    print(f"{len(files)} files, {characters:,} characters: {len(refused)} refused, {elapsed:.1f} s")
    for name, found in refused:
        print(f"  refused {name}: {found}")

    page = "\n".join(text for _, text in files)[:200_000]
    best = min(timed(refuse_credentials, page) for _ in range(5))
    print(f"one 200,000-character page: {best * 1000:.1f} ms (best of 5)")


def timed(check: Callable[[str], None], text: str) -> float:
    started = time.perf_counter()
    check(text)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
