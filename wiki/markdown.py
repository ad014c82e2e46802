"""Markdown to sanitised HTML, with `[[pg_xxxxxxxx]]` page links and `[[file:NAME]]` references.

Everything a browser receives from here has passed nh3 with an explicit allow-list, and no
image in it is fetched from another host: opening a page must not tell anyone outside Quire
who reads or reviews it, and when.
"""

from __future__ import annotations

import hashlib
import re
import threading
import xml.etree.ElementTree as etree
from collections import OrderedDict
from collections.abc import Iterable
from html import escape
from html.parser import HTMLParser
from importlib import metadata
from urllib.parse import urlsplit

import markdown
import nh3
from django.core.cache import cache
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString

from wiki.markdown_bounds import Footnotes, LinearTime
from wiki.models import Page
from wiki.scope import EVERYTHING, Scope

PAGE_REF_RE = re.compile(r"\[\[(pg_[a-z2-7]{8})\]\]")
FILE_REF_RE = re.compile(r"\[\[file:([^\[\]\n]{1,255})\]\]")

_ALLOWED_TAGS = {
    *("h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "div", "span"),
    *("a", "img", "code", "pre", "kbd", "em", "strong", "del", "ins", "sup", "sub", "mark"),
    *("ul", "ol", "li", "dl", "dt", "dd", "details", "summary"),
    *("table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption"),
}
_HEADINGS = {
    "h1": {"id", "dir"},
    "h2": {"id", "dir"},
    "h3": {"id", "dir"},
    "h4": {"id", "dir"},
    "h5": {"id", "dir"},
    "h6": {"id", "dir"},
}
# `dir` (auto, ltr or rtl: `_filter_attribute`) on the blocks of text: the markdown gives them
# `dir="auto"`; never `<bdo>`, which overrides the letters' own direction.
_ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    **_HEADINGS,
    "a": {"href", "title", "class"},
    "img": {"src", "alt", "title", "width", "height"},
    "code": {"class"},
    "span": {"class"},
    "div": {"class"},
    "sup": {"id"},
    "p": {"dir"},
    "blockquote": {"dir"},
    "li": {"id", "class", "dir"},
    "ul": {"class"},
    "ol": {"start"},
    "dt": {"dir"},
    "dd": {"dir"},
    "th": {"align", "colspan", "rowspan", "dir"},
    "td": {"align", "colspan", "rowspan", "dir"},
    "caption": {"dir"},
    "summary": {"dir"},
    "details": {"open"},
}
# Classes that Quire's own markup and the markdown extensions produce; anything else a
# writer puts in raw HTML is dropped so that it cannot dress up as the application's UI.
_ALLOWED_CLASSES = {
    "page-link",
    "broken-link",
    "file-ref",
    "footnote",
    "footnote-ref",
    "footnote-backref",
    "toc",
    "remote-image",
    "task-list",
    "task",
    "task-box",
    "task-done",
}
_URL_SCHEMES = {"http", "https", "mailto"}
# Browsers drop tabs and newlines inside a URL and ignore leading controls and spaces, so a
# scheme is judged with all of them removed ("java\tscript:" is "javascript:").
_URL_NOISE_RE = re.compile(r"[\x00-\x20\x7f-\x9f]+")
_URL_SCHEME_RE = re.compile(r"([a-z][a-z0-9+.-]*):")


def page_references(text: str) -> list[str]:
    """The `pg_` ids that `text` references as `[[pg_xxxxxxxx]]`, in order, each once."""
    return list(dict.fromkeys(PAGE_REF_RE.findall(text or "")))


def file_references(text: str) -> list[str]:
    """The attachment names that `text` references as `[[file:NAME]]`, in order, each once."""
    return list(dict.fromkeys(name.strip() for name in FILE_REF_RE.findall(text or "")))


class _PageRefProcessor(InlineProcessor):
    def __init__(self, titles: dict[str, str]) -> None:
        super().__init__(PAGE_REF_RE.pattern)
        self.titles = titles

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[etree.Element, int, int]:
        public_id = m.group(1)
        title = self.titles.get(public_id)
        if title is None:
            el = etree.Element("span", {"class": "broken-link", "title": "No such page"})
            el.text = AtomicString(public_id)
        else:
            el = etree.Element("a", {"href": f"/p/{public_id}/", "class": "page-link"})
            el.text = AtomicString(title)
        return el, m.start(0), m.end(0)


class _FileRefProcessor(InlineProcessor):
    def __init__(self) -> None:
        super().__init__(FILE_REF_RE.pattern)

    def handleMatch(self, m: re.Match[str], data: str) -> tuple[etree.Element, int, int]:
        el = etree.Element("span", {"class": "file-ref"})
        el.text = AtomicString(m.group(1).strip())
        return el, m.start(0), m.end(0)


class _QuireRefsExtension(Extension):
    def __init__(self, titles: dict[str, str]) -> None:
        super().__init__()
        self.titles = titles

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # Above links (160) and references (170) so `[[...]]` is not read as a link; below
        # backticks (190) so a reference inside code stays literal.
        md.inlinePatterns.register(_PageRefProcessor(self.titles), "quire_page_ref", 175)
        md.inlinePatterns.register(_FileRefProcessor(), "quire_file_ref", 174)
        # After the inline patterns (20), so the item's text is final.
        md.treeprocessors.register(_TaskListProcessor(md), "quire_task_list", 15)
        # Last, so the footnotes' blocks get it too.
        md.treeprocessors.register(_DirectionProcessor(md), "quire_direction", 5)


_TASK_RE = re.compile(r"\[([ xX])\]\s+")


class _TaskListProcessor(Treeprocessor):
    """`- [ ] to do` and `- [x] done` list items as boxes, unticked and ticked.

    Shown as characters, not form fields: a page is read, not filled in, and no `<input>`
    ever gets past the sanitiser.
    """

    def run(self, root: etree.Element) -> None:
        for listing in root.iter("ul"):
            for item in listing.findall("li"):
                # A loose list wraps the item's text in a paragraph.
                holder = item[0] if not (item.text or "").strip() and len(item) else item
                match = _TASK_RE.match(holder.text or "")
                if holder.tag not in ("li", "p") or match is None:
                    continue
                done = match.group(1) != " "
                box = etree.Element("span", {"class": "task-box task-done" if done else "task-box"})
                box.text = "\u2611" if done else "\u2610"
                box.tail = " " + (holder.text or "")[match.end() :]
                holder.text = ""
                holder.insert(0, box)
                item.set("class", "task")
                listing.set("class", "task-list")


# The blocks of text that each take their direction from their own first strong letter
# (`dir="auto"`), so a Hebrew or Arabic paragraph reads right to left beside English ones.
# Not code blocks, which read left to right whatever their comments hold.
_TEXT_BLOCKS = (
    *("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"),
    *("dt", "dd", "th", "td", "caption", "summary"),
)
_DIRECTIONS = {"auto", "ltr", "rtl"}


class _DirectionProcessor(Treeprocessor):
    """`dir="auto"` on every block of text (see _TEXT_BLOCKS)."""

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            if element.tag in _TEXT_BLOCKS and "dir" not in element.attrib:
                element.set("dir", "auto")


def _page_titles(public_ids: list[str], reader: Scope) -> dict[str, str]:
    """Titles of the referenced pages the reader can open: live, not archived, and not hidden
    by their read grants (one query)."""
    if not public_ids:
        return {}
    return dict(
        Page.objects.filter(reader.q(), public_id__in=public_ids).values_list("public_id", "title")
    )


def _filter_attribute(
    tag: str, attr: str, value: str, extra_classes: frozenset[str] = frozenset()
) -> str | None:
    if attr == "class":
        kept = [
            c
            for c in value.split()
            if c in _ALLOWED_CLASSES
            or c in extra_classes
            or (tag == "code" and re.fullmatch(r"language-[\w+#.-]+", c))
        ]
        return " ".join(kept) or None
    if attr == "dir":
        return value.lower() if value.lower() in _DIRECTIONS else None
    if attr in ("href", "src"):
        scheme = _URL_SCHEME_RE.match(_URL_NOISE_RE.sub("", value).lower())
        if scheme is not None and scheme.group(1) not in _URL_SCHEMES:
            return None
    return value


class _ImageFinder(HTMLParser):
    """Where each `<img>` of sanitised HTML starts and ends, with its attributes."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.images: list[tuple[int, int, dict[str, str]]] = []
        # The parser reports (line, column) and counts only "\n" as a line break.
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", html)]
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            line, column = self.getpos()
            start = self._line_starts[line - 1] + column
            text = self.get_starttag_text() or ""
            self.images.append((start, start + len(text), {k: v or "" for k, v in attrs}))

    handle_startendtag = handle_starttag


def _normalised_url(url: str) -> str:
    # As a browser reads it: controls and spaces dropped, backslashes as slashes ("/\\host").
    return _URL_NOISE_RE.sub("", url).replace("\\", "/")


def _is_remote(src: str) -> bool:
    """Whether a browser would fetch `src` from another host: it has a scheme or is `//host`.

    Only a relative reference (`/media/...`, `diagram.png`) stays on Quire's origin.
    """
    url = _normalised_url(src)
    return url.startswith("//") or _URL_SCHEME_RE.match(url.lower()) is not None


def _remote_image_link(attrs: dict[str, str]) -> str:
    src = attrs.get("src", "")
    url = _normalised_url(src)
    try:
        # "https:host/x.png" (no slashes) is still fetched from host by a browser.
        host = urlsplit(url).hostname or url.partition(":")[2].lstrip("/").split("/")[0]
    except ValueError:
        host = ""
    host = host.lower() or "another site"
    alt = attrs.get("alt", "").strip()
    label = f"Image: {alt} (from {host}, not loaded)" if alt else f"Image from {host} (not loaded)"
    return (
        f'<a href="{escape(src)}" class="remote-image" rel="noopener noreferrer nofollow" '
        f'title="Open the image from {escape(host)}">{escape(label)}</a>'
    )


def _unfetched_remote_images(html: str) -> str:
    """Replace every image from another host with a link naming that host."""
    if "<img" not in html:
        return html
    parts: list[str] = []
    position = 0
    for start, end, attrs in _ImageFinder(html).images:
        if _is_remote(attrs.get("src", "")):
            parts += [html[position:start], _remote_image_link(attrs)]
            position = end
    return "".join([*parts, html[position:]])


def sanitise_html(html: str, *, extra_classes: Iterable[str] = ()) -> str:
    """Keep only the allow-listed tags, attributes, classes and URL schemes of `html`; images
    from other hosts become links that name the host.

    `extra_classes` lets Quire's own markup (the review's rendered diff) keep its classes.
    """
    return _unfetched_remote_images(_clean(html, frozenset(extra_classes)))


def _clean(html: str, allowed: frozenset[str] = frozenset()) -> str:
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        clean_content_tags={"script", "style"},
        attributes=_ALLOWED_ATTRIBUTES,
        attribute_filter=lambda tag, attr, value: _filter_attribute(tag, attr, value, allowed),
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
        url_schemes=_URL_SCHEMES,
    )


class _Rendered:
    """Sanitised HTML already rendered, by text and the page titles its references showed,
    most recently used first, up to RENDERED_KEPT_CHARS characters of HTML in all.

    A version's text never changes, so its page is rendered once per worker process, not
    on each view (and once for all of them when long: `_shared`); a reader who may open
    other referenced pages gets the rendering with their titles (the titles are part of
    the key, read in one query as before)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.lock = threading.Lock()
        self.kept: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], str] = OrderedDict()

    def get(self, key: tuple[str, tuple[tuple[str, str], ...]]) -> str | None:
        with self.lock:  # a threaded worker's requests share it
            html = self.kept.get(key)
            if html is not None:
                self.kept.move_to_end(key)
            return html

    def put(self, key: tuple[str, tuple[tuple[str, str], ...]], html: str) -> None:
        if len(html) > self.limit // 4:
            return
        with self.lock:
            if key in self.kept:
                return
            self.kept[key] = html
            self.size += len(html)
            while self.size > self.limit:
                _, dropped = self.kept.popitem(last=False)
                self.size -= len(dropped)


RENDERED_KEPT_CHARS = 32_000_000
_rendered = _Rendered(RENDERED_KEPT_CHARS)

# Texts at least this long are also kept in the shared cache (Redis in production), so each
# is rendered once for all worker processes, not once per process; a shorter text renders in
# less time than asking the cache takes (and, without Redis, costs no query).
SHARED_RENDER_CHARS = 8_000
SHARED_RENDER_SECONDS = 7 * 24 * 3600
# Changes when the same text may render otherwise: bump it with a change to this module.
RENDERER = f"1-{metadata.version('markdown')}-{metadata.version('nh3')}"


def render_markdown(text: str, *, reader: Scope = EVERYTHING) -> str:
    """Render `text` to HTML that is safe to put in a page (sanitised with nh3).

    Page references are resolved to links with the page's title in one query; references
    to pages that do not exist (or that the reader, `person_scope`, cannot open) are marked
    as broken. Every door passes its reader; the default (every page) is for tests. The
    same text with the same titles is rendered once (`_Rendered`).
    """
    if not text:
        return ""
    titles = _page_titles(page_references(text), reader)
    key = (
        hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        tuple(sorted(titles.items())),
    )
    html = _rendered.get(key)
    if html is None:
        html = _shared(text, key, titles)
        _rendered.put(key, html)
    return html


def _shared(text: str, key: tuple[str, tuple[tuple[str, str], ...]], titles: dict[str, str]) -> str:
    """`text` rendered, from the shared cache when it is long (SHARED_RENDER_CHARS)."""
    if len(text) < SHARED_RENDER_CHARS:
        return _convert(text, titles)
    shown = hashlib.sha256(repr(key[1]).encode("utf-8", "surrogatepass")).hexdigest()
    shared_key = f"quire:rendered:{RENDERER}:{key[0]}:{shown}"
    html = cache.get(shared_key)
    if not isinstance(html, str):
        html = _convert(text, titles)
        cache.set(shared_key, html, SHARED_RENDER_SECONDS)
    return html


def _convert(text: str, titles: dict[str, str]) -> str:
    return sanitise_html(converter(titles).convert(text))


def converter(titles: dict[str, str], *, linear: bool = True) -> markdown.Markdown:
    """Python-Markdown with Quire's extensions; `linear=False` leaves Python-Markdown's own
    processors in place of wiki.markdown_bounds' (tests compare the two outputs)."""
    return markdown.Markdown(
        extensions=[
            "tables",
            "fenced_code",
            Footnotes() if linear else "footnotes",
            "toc",
            "sane_lists",
            _QuireRefsExtension(titles),
            *([LinearTime()] if linear else []),
        ],
        extension_configs={"tables": {"use_align_attribute": True}},
        output_format="html",
    )


def without_leading_title(text: str, title: str) -> str:
    """The body without a first `# heading` that repeats the page title.

    Imported and hand-written pages often start with their own title; the page view
    already shows it, so showing it twice only pushes the content down.
    """
    stripped = text.lstrip("\n")
    first, _, rest = stripped.partition("\n")
    heading = first.strip()
    if heading.startswith("# ") and heading[2:].strip().rstrip("#").strip().casefold() == (
        title.strip().casefold()
    ):
        return rest
    return text


_HEADING_TAG_RE = re.compile(r"<(/?)h([1-5])\b")
_ID_ATTRIBUTE_RE = re.compile(r'\sid="[^"]*"')


def render_page_body(text: str, title: str, *, reader: Scope = EVERYTHING) -> str:
    """A page body as the page view shows it: under the page's own `<h1>` title.

    A first heading repeating the title goes, and every heading moves one level down, so a
    page has one `<h1>`. The review page renders through here too, so what a reviewer sees
    is what readers will see.
    """
    html = render_markdown(without_leading_title(text, title), reader=reader)
    return _HEADING_TAG_RE.sub(lambda m: f"<{m.group(1)}h{int(m.group(2)) + 1}", html)


def without_ids(html: str) -> str:
    """Sanitised HTML without its id attributes, for a second rendering on the same screen."""
    return _ID_ATTRIBUTE_RE.sub("", html)
