"""Seconds to render a paragraph of repeated `[` with Python-Markdown's own link processors
(before) and with wiki.markdown_bounds' (after), for 1,000 to 16,000 brackets; then one
paragraph of 50,000 to 200,000 characters made of a repeated link, image, escape, entity,
tag or emphasis (each match copied the paragraph: INLINE_MARKS). Run with
`DEBUG=1 .venv/bin/python bench/markdown_linear.py` (`--shapes`: the paragraphs only);
bench/REPORT.md keeps a run.
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
SHAPES = {
    "[a](b)": "[a](b)",
    "![a](b) ": "![a](b) ",
    "\\* ": "\\* ",
    "&amp; ": "&amp; ",
    "<b>": "<b>",
    "_a_ ": "_a_ ",
}
SHAPE_SIZES = (50_000, 100_000, 200_000)


def seconds(text: str, *, linear: bool) -> float:
    start = time.perf_counter()
    sanitise_html(converter({}, linear=linear).convert(text))
    return time.perf_counter() - start


def main() -> None:
    if "--shapes" not in sys.argv:
        brackets()
    shapes()


def brackets() -> None:
    print("| `[` repeated | before (s) | after (s) |")
    print("|---:|---:|---:|")
    for size in SIZES:
        text = "[" * size
        before, after = seconds(text, linear=False), seconds(text, linear=True)
        print(f"| {size:,} | {before:.3f} | {after:.3f} |", flush=True)


def shapes() -> None:
    print("\n| one paragraph of | characters | before (s) | after (s) |")
    print("|---|---:|---:|---:|")
    for name, unit in SHAPES.items():
        for size in SHAPE_SIZES:
            text = unit * (size // len(unit))
            before, after = seconds(text, linear=False), seconds(text, linear=True)
            print(f"| `{name}` | {size:,} | {before:.3f} | {after:.3f} |", flush=True)


if __name__ == "__main__":
    main()
