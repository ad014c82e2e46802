"""Seconds to render a paragraph of repeated `[` with Python-Markdown's own link processors
(before) and with wiki.markdown_bounds' (after), for 1,000 to 16,000 brackets. Run with
`DEBUG=1 .venv/bin/python bench/markdown_linear.py`; bench/REPORT.md keeps a run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from wiki.markdown import converter, sanitise_html  # noqa: E402

SIZES = (1_000, 2_000, 4_000, 8_000, 16_000)


def seconds(text: str, *, linear: bool) -> float:
    start = time.perf_counter()
    sanitise_html(converter({}, linear=linear).convert(text))
    return time.perf_counter() - start


def main() -> None:
    print("| `[` repeated | before (s) | after (s) |")
    print("|---:|---:|---:|")
    for size in SIZES:
        text = "[" * size
        before, after = seconds(text, linear=False), seconds(text, linear=True)
        print(f"| {size:,} | {before:.3f} | {after:.3f} |", flush=True)


if __name__ == "__main__":
    main()
