"""How a proposal meets what is live: appends on top, stale replaces merged three-way.

The line merge is merge3's (base → live and base → proposal); fields merge value by value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import merge3

from wiki.models import Version, VersionKind, VersionStatus


@dataclass(frozen=True)
class ConflictRegion:
    base: str
    live: str
    proposal: str


@dataclass(frozen=True)
class MergeResult:
    text: str  # the merged text; with conflict markers when `conflicts` is not empty
    conflicts: list[ConflictRegion] = field(default_factory=list)


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


# What a version holds as content: two versions equal in these read the same.
CONTENT_FIELDS = Version.CONTENT_FIELDS


def is_stale(version: Version) -> bool:
    """A replace proposal is stale when what is live is no longer what it was written
    against: a revert back to its base's text (a new number, the same content) is not."""
    if version.kind != VersionKind.REPLACE or version.status != VersionStatus.IN_REVIEW:
        return False
    base, live = version.base_version, version.page.live_version
    if version.base_version_id == version.page.live_version_id:
        return False
    if base is None or live is None:
        return True
    return any(getattr(base, name) != getattr(live, name) for name in CONTENT_FIELDS)


def staleness(version: Version) -> str | None:
    """For a stale proposal, the sentence every screen and the API show: what it was written
    against and what is live now; None when it is not stale."""
    if not is_stale(version):
        return None
    base = version.base_version.number if version.base_version is not None else None
    live = version.page.live_version
    written = f"v{base}" if base is not None else "no live version"
    return f"written against {written}, live is v{live.number if live else 0}"


def appended_body(live_body: str, appended: str) -> str:
    """The page body after an append: the live text, a blank line, the appended blocks."""
    live_body = live_body.rstrip("\n")
    appended = appended.strip("\n")
    return f"{live_body}\n\n{appended}\n" if live_body else f"{appended}\n"


MERGED_FIELDS = ("title", "tags", "parent_id", "instructions")


def merge_proposal(version: Version) -> dict[str, Any]:
    """Three-way merge of a stale replace proposal against what is live now.

    Returns the merged fields, the conflicts (empty when the merge is clean) and the merged
    text with conflict markers where the two sides overlap.
    """
    base = version.base_version
    live = version.page.live_version
    assert live is not None
    result = merge_text(base=base.body if base else "", live=live.body, proposal=version.body)
    conflicts: list[dict[str, Any]] = [
        {"field": "markdown", "base": c.base, "live": c.live, "proposal": c.proposal}
        for c in result.conflicts
    ]
    merged: dict[str, Any] = {"body": result.text}
    for name in MERGED_FIELDS:
        base_value = getattr(base, name) if base else getattr(live, name)
        value, conflicted = merge_value(
            base=base_value, live=getattr(live, name), proposal=getattr(version, name)
        )
        merged[name] = value
        if conflicted:
            conflicts.append(
                {
                    "field": name.removesuffix("_id"),
                    "base": base_value if base else None,
                    "live": getattr(live, name),
                    "proposal": getattr(version, name),
                }
            )
    return {"fields": merged, "conflicts": conflicts, "text_with_markers": result.text}
