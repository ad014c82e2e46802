"""The rendered diff: the page as it will look, with added and removed blocks marked.

Both sides are rendered (and sanitised) by the same code as the page view. The top-level
blocks (paragraphs, headings, lists, tables...) are matched with difflib; a block changed
in place gets word marks from lxml's htmldiff, a block added or removed is marked whole.
The result passes the page sanitiser again, with only Quire's own marking classes added, and
then gets the badges of invisible and look-alike characters.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe
from lxml import html as lxml_html
from lxml.html.diff import htmldiff

from reviews.diff import show_html
from wiki.markdown import sanitise_html, without_ids

# Two blocks this similar (by their text) are one block changed, not one removed and one added.
SAME_BLOCK = 0.5
MARK_CLASSES = {"rv-block-added", "rv-block-removed", "rv-block-changed"}


@dataclass(frozen=True)
class RenderedDiff:
    html: SafeString
    added: int
    removed: int
    changed: int

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _blocks(html: str) -> list[str]:
    if not html.strip():
        return []
    out: list[str] = []
    for fragment in lxml_html.fragments_fromstring(html):
        if isinstance(fragment, str):
            if fragment.strip():
                out.append(f"<p>{fragment}</p>")
            continue
        out.append(lxml_html.tostring(fragment, encoding="unicode", with_tail=False))
    return out


def _text(block: str) -> str:
    return lxml_html.fragment_fromstring(block, create_parent="div").text_content()


# Elements whose children are only certain elements (a list holds list items). htmldiff marks
# the white space between those children, and sometimes a list item's last words, as an <ins>
# or <del> of the list itself, which screen readers meet as a stray item (axe-core's "list"
# rule): the words go back into the item beside them, and marks of white space alone go.
_ITEM_OF = {"ul": "li", "ol": "li", "dl": "dd", "tr": "td"}
_STRICT_PARENTS = {*_ITEM_OF, "table", "thead", "tbody", "tfoot"}


def _word_marks(old: str, new: str) -> str:
    marked = lxml_html.fragment_fromstring(htmldiff(old, new), create_parent="div")
    for mark in list(marked.iter("ins", "del")):
        parent = mark.getparent()
        if parent is None or parent.tag not in _STRICT_PARENTS:
            continue
        if not mark.text_content().strip():
            mark.drop_tree()
            continue
        item = mark.getprevious()
        if item is not None and item.tag in (_ITEM_OF.get(parent.tag), "th"):
            mark.tail = None
            item.append(mark)  # the words at the end of the item before them
        else:
            nxt = mark.getnext()
            if nxt is not None and nxt.tag in (_ITEM_OF.get(parent.tag), "th"):
                mark.tail = None
                nxt.insert(0, mark)
    return (marked.text or "") + "".join(
        lxml_html.tostring(child, encoding="unicode") for child in marked
    )


def _wrap(kind: str, block: str) -> str:
    return f'<div class="rv-block-{kind}">{block}</div>'


def rendered_diff(old_html: str, new_html: str) -> RenderedDiff:
    """Mark `new_html` (both sides already sanitised HTML) with what changed from `old_html`."""
    old_blocks, new_blocks = _blocks(old_html), _blocks(new_html)
    matcher = difflib.SequenceMatcher(None, old_blocks, new_blocks, autojunk=False)
    parts: list[str] = []
    added = removed = changed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.extend(new_blocks[j1:j2])
            continue
        olds, news = old_blocks[i1:i2], new_blocks[j1:j2]
        while olds or news:
            if olds and news:
                ratio = difflib.SequenceMatcher(None, _text(olds[0]), _text(news[0])).ratio()
                if ratio >= SAME_BLOCK:
                    parts.append(_wrap("changed", _word_marks(olds.pop(0), news.pop(0))))
                    changed += 1
                    continue
            if olds and (not news or len(olds) >= len(news)):
                parts.append(_wrap("removed", olds.pop(0)))
                removed += 1
            else:
                parts.append(_wrap("added", news.pop(0)))
                added += 1
    return RenderedDiff(
        # The rendered result shows the same headings on the same screen: no second set of ids.
        # Invisible and look-alike characters are badged here as in the markdown diff.
        html=mark_safe(
            show_html(without_ids(sanitise_html("\n".join(parts), extra_classes=MARK_CLASSES)))
        ),
        added=added,
        removed=removed,
        changed=changed,
    )
