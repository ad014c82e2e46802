"""Three-way merge of a stale replace proposal: base → live and base → proposal (merge3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import merge3


@dataclass(frozen=True)
class ConflictRegion:
    base: str
    live: str
    proposal: str


@dataclass(frozen=True)
class MergeResult:
    text: str  # the merged text; with conflict markers when `conflicts` is not empty
    conflicts: list[ConflictRegion] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _lines(text: str) -> list[str]:
    # merge3 compares whole lines; a final newline keeps the last line comparable.
    if text and not text.endswith("\n"):
        text += "\n"
    return text.splitlines(keepends=True)


def merge_text(*, base: str, live: str, proposal: str) -> MergeResult:
    base_lines, live_lines, proposal_lines = _lines(base), _lines(live), _lines(proposal)
    m = merge3.Merge3(base_lines, live_lines, proposal_lines)
    conflicts: list[ConflictRegion] = []
    for region in m.merge_regions():
        if region[0] == "conflict":
            _, z1, z2, a1, a2, b1, b2 = region
            conflicts.append(
                ConflictRegion(
                    base="".join(base_lines[z1:z2]),
                    live="".join(live_lines[a1:a2]),
                    proposal="".join(proposal_lines[b1:b2]),
                )
            )
    text = "".join(
        m.merge_lines(
            name_a="live", name_b="proposal", start_marker="<<<<<<<", end_marker=">>>>>>>"
        )
    )
    if not (live.endswith("\n") or proposal.endswith("\n")):
        text = text.rstrip("\n")
    return MergeResult(text=text, conflicts=conflicts)


def merge_value(*, base: Any, live: Any, proposal: Any) -> tuple[Any, bool]:
    """Field-level three-way merge (title, tags, parent): returns (value, conflicted)."""
    if proposal == base or proposal == live:
        return live, False
    if live == base:
        return proposal, False
    return proposal, True
