"""Markdown to sanitised HTML (placeholder interface; see issue 2 item 3)."""

from django.utils.html import escape


def render_markdown(text: str) -> str:
    """Render `text` to HTML that is safe to put in a page (sanitised with nh3)."""
    return f"<pre>{escape(text)}</pre>"
