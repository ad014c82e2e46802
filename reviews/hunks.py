"""A proposal's changed blocks (hunks), each kept or refused on its own, and the text that
keeping some of them makes."""

from __future__ import annotations

import difflib
from collections.abc import Set
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Hunk:
    """One changed block: the lines of `before` it replaces (none: an insertion) and the
    lines it proposes (none: a removal). `number` counts from 1 in the diff's order."""

    number: int
    line: int  # where it starts in `before`, from 1
    replaced: str
    proposed: str

    @property
    def kind(self) -> str:
        if not self.replaced:
            return "added"
        if not self.proposed:
            return "removed"
        return "changed"


Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


def _opcodes(before: str, after: str) -> tuple[list[str], list[str], list[Opcode]]:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return old, new, matcher.get_opcodes()


def hunks(before: str, after: str) -> list[Hunk]:
    """The changed blocks that turn `before` into `after`, in order."""
    old, new, opcodes = _opcodes(before, after)
    found: list[Hunk] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "equal":
            found.append(Hunk(len(found) + 1, i1 + 1, "".join(old[i1:i2]), "".join(new[j1:j2])))
    return found


def kept_text(before: str, after: str, refused: Set[int]) -> str:
    """`after`, with each refused hunk (by number) left as `before` had it."""
    old, new, opcodes = _opcodes(before, after)
    parts: list[str] = []
    number = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            parts.extend(old[i1:i2])
            continue
        number += 1
        parts.extend(old[i1:i2] if number in refused else new[j1:j2])
    return "".join(parts)
