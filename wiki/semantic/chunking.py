"""Pages cut into chunks along their headings, and the text of each chunk that is embedded."""

from __future__ import annotations

from dataclasses import dataclass

from wiki import outline
from wiki.plain_text import plain_text

# A section longer than this is cut at paragraphs into several chunks.
CHUNK_CHARS = 1200


# What the model reads of a chunk (its title and heading come first): the cost of embedding
# grows with it, and the start of a section says what it is about.
EMBED_CHARS = 600


MAX_CHUNKS = 48


@dataclass(frozen=True)
class Chunk:
    position: int
    heading: str | None  # the heading above the chunk's text; None before the first one
    text: str  # plain text (wiki.search.plain_text), what excerpts are cut from


def sections(markdown: str) -> list[tuple[str | None, str]]:
    """(heading, markdown under it) in order, along the headings get_page's outline shows
    (wiki.outline: ATX and setext, not in code); the text before the first one has None."""
    found = outline.headings(markdown)
    before = markdown[: found[0].start] if found else markdown
    parts: list[tuple[str | None, str]] = [(None, before)]
    for n, heading in enumerate(found):
        end = found[n + 1].start if n + 1 < len(found) else len(markdown)
        # The heading's own line, and a setext heading's underline, are not its text.
        lines = 1 if markdown.startswith("#", heading.start) else 2
        body = markdown[heading.start : end].split("\n", lines)
        parts.append((heading.text, body[lines] if len(body) > lines else ""))
    return parts


def page_chunks(title: str, body: str) -> list[Chunk]:
    """The chunks of a page: one per section with text, long sections cut at paragraphs."""

    chunks: list[Chunk] = []
    for heading, markdown in sections(body):
        text = plain_text(markdown)
        # As the outline shows it, so that a hit's section can be passed to get_page.
        for piece in _pieces(text):
            chunks.append(Chunk(len(chunks), heading, piece))
        if not text and heading:
            # A heading with nothing under it before the next one still names a topic.
            chunks.append(Chunk(len(chunks), heading, ""))
    if not chunks:
        chunks.append(Chunk(0, None, ""))
    return chunks[:MAX_CHUNKS]


def _pieces(text: str) -> list[str]:
    if not text:
        return []
    pieces: list[str] = []
    current = ""
    for paragraph in text.split("\n\n"):
        if current and len(current) + len(paragraph) > CHUNK_CHARS:
            pieces.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
        while len(current) > CHUNK_CHARS:
            cut = current.rfind(" ", 0, CHUNK_CHARS)
            cut = cut if cut > CHUNK_CHARS // 2 else CHUNK_CHARS
            pieces.append(current[:cut])
            current = current[cut:].lstrip()
    if current:
        pieces.append(current)
    return pieces


def embedding_text(title: str, chunk: Chunk) -> str:
    """What the model reads for a chunk: the page title, the heading, the start of the text."""

    parts = [title]
    heading = plain_text(chunk.heading) if chunk.heading else None
    if heading and heading != title:
        parts.append(heading)
    if chunk.text:
        parts.append(chunk.text[:EMBED_CHARS])
    return ". ".join(parts)
