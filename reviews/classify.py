"""What kind of change a proposal is, from its diff alone: classed once, when it is submitted,
so the queue can show, filter and sort by it and a workflow can keep some kinds out of
batches (reviews.batch)."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

from reviews.merge import appended_body
from wiki.models import Version, VersionKind

# The classes, in the order the labels are shown, with their short labels and what each means.
CLASSES: dict[str, tuple[str, str]] = {
    "new_page": ("new page", "A page that does not exist yet."),
    "move": ("move", "The page moves under another parent."),
    "additions": ("additions only", "Text added; nothing changed or removed."),
    "wording": ("wording", "Small in-line changes: a few words in a block."),
    "rewrite": ("rewrite", "Blocks rewritten beyond a few words."),
    "removal": ("removal", "Text removed."),
    "numbers": (
        "numbers, dates, links",
        "A number, date, amount or link that was there is changed or gone.",
    ),
    "structure": (
        "headings",
        "Headings renamed, removed, reordered or inserted between sections, or the title.",
    ),
}

# The kinds as REST choices: the schema names their enum once (settings' ENUM_NAME_OVERRIDES).
CLASS_CHOICES = list(CLASSES)
# The classes a reviewer should read on their own page; the others are low-risk.
RISKY = frozenset({"new_page", "move", "rewrite", "removal", "numbers", "structure"})
SIZES = (("small", 6), ("medium", 40))  # changed lines up to each bound; more: "large"

NUMBER = re.compile(r"[$€£¥]?\d(?:[\d,.:/-]*\d)?%?")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)|<(https?://[^>\s]+)>|(https?://[^\s)>\]]+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)[\s#]*$")
WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# A changed block is "wording" when at most this many words change, or this share of it.
WORDING_WORDS = 5
WORDING_SHARE = 0.15
# Net words lost in changed blocks from which a change counts as a removal too.
REMOVAL_WORDS = 5


@dataclass(frozen=True)
class Classified:
    classes: list[str]
    lines: int  # lines changed (added plus removed; a new page: its lines)

    @property
    def size(self) -> str:
        return size_of(self.lines)


def size_of(lines: int) -> str:
    for name, bound in SIZES:
        if lines <= bound:
            return name
    return "large"


def _facts(text: str) -> Counter[str]:
    """The numbers, dates, amounts and link targets of `text`."""
    found: Counter[str] = Counter(match.rstrip(".,") for match in NUMBER.findall(text))
    for groups in LINK.findall(text):
        found.update(target for target in groups if target)
    return found


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, text) of each heading line."""
    found = []
    for index, line in enumerate(lines):
        match = HEADING.match(line)
        if match:
            found.append((index, len(match.group(1)), match.group(2).strip()))
    return found


def _structure_changed(old: list[str], new: list[str]) -> bool:
    """Headings renamed, removed, re-levelled or reordered, or a new one placed among the
    old sections (a new section at the end is an addition)."""
    before = [(level, text) for _, level, text in _headings(old)]
    after = _headings(new)
    known = set(before)
    if [(level, text) for _, level, text in after if (level, text) in known] != before:
        return True
    last_old = max((index for index, level, text in after if (level, text) in known), default=-1)
    return any(index < last_old for index, level, text in after if (level, text) not in known)


def _block_changes(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """Words changed, words lost and words in all of a changed block (old and new lines)."""
    old_words = WORD.findall("\n".join(old))
    new_words = WORD.findall("\n".join(new))
    matcher = difflib.SequenceMatcher(None, old_words, new_words, autojunk=False)
    changed = lost = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed += max(i2 - i1, j2 - j1)
            lost += (i2 - i1) - (j2 - j1)
    return changed, lost, max(len(old_words), len(new_words))


def classify_text(
    before: str | None, after: str, *, moved: bool = False, renamed: bool = False
) -> Classified:
    """The classes of a change of `before` (None: a new page) into `after`."""
    new = after.splitlines()
    if before is None:
        return Classified(["new_page"], len(new))
    old = before.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found: set[str] = set()
    lines = lost = 0
    tags = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        tags.add(tag)
        lines += (i2 - i1) + (j2 - j1)
        if tag == "delete":
            found.add("removal")
        elif tag == "replace":
            changed, lost_here, words = _block_changes(old[i1:i2], new[j1:j2])
            lost += lost_here
            small = changed <= WORDING_WORDS or changed <= WORDING_SHARE * words
            found.add("wording" if small else "rewrite")
    if tags == {"insert"}:
        found.add("additions")
    if lost >= REMOVAL_WORDS:
        found.add("removal")
    if _facts(before) - _facts(after):
        found.add("numbers")
    if renamed or _structure_changed(old, new):
        found.add("structure")
    if moved:
        found.add("move")
    return Classified([name for name in CLASSES if name in found], lines)


def classify_proposal(version: Version, before: Version | None) -> Classified:
    """The classes of `version` (unsaved is fine) against `before`, the version it was
    written against (None: a new page)."""
    if before is None:
        return classify_text(None, version.body)
    if version.kind == VersionKind.APPEND:
        return classify_text(before.body, appended_body(before.body, version.proposed_body))
    return classify_text(
        before.body,
        version.body,
        moved=version.parent_id != before.parent_id,
        renamed=version.title != before.title,
    )


def classify_into(version: Version, before: Version | None) -> None:
    """Store the classes of `version` (not saved yet) on it."""
    classified = classify_proposal(version, before)
    version.change_classes = " ".join(classified.classes)
    version.change_lines = classified.lines


@dataclass(frozen=True)
class ChangeLabel:
    name: str
    label: str
    meaning: str
    risky: bool


def change_labels(version: Version, *, besides: tuple[str, ...] = ()) -> list[ChangeLabel]:
    """The labels a screen shows for `version`'s kind of change, then its size."""
    shown = [
        ChangeLabel(name, *CLASSES[name], risky=name in RISKY)
        for name in version.change_classes.split()
        if name in CLASSES and name not in besides
    ]
    if version.change_lines is not None:
        size = size_of(version.change_lines)
        lines = f"{version.change_lines} changed line{'' if version.change_lines == 1 else 's'}"
        shown.append(ChangeLabel(f"size-{size}", size, lines, risky=False))
    return shown


def is_low_risk(version: Version) -> bool:
    """Classed, and of no kind a reviewer should read on its own page."""
    return version.change_lines is not None and not set(version.change_classes.split()) & RISKY


def kept_out_of_batches(version: Version, never_in_batch: list[str]) -> list[str]:
    """The kinds of `version`'s change that its workflow (`never_in_batch`) never approves
    in a batch."""
    return [name for name in version.change_classes.split() if name in never_in_batch]


def labels(classes: str | list[str]) -> list[str]:
    """The short labels of stored classes ("numbers wording" or a list)."""
    names = classes.split() if isinstance(classes, str) else classes
    return [CLASSES[name][0] for name in names if name in CLASSES]
