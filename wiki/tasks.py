"""Wiki tasks: each takes ids and calls one function."""

from celery import shared_task

from wiki import semantic


@shared_task(acks_late=True)
def embed_pages(page_ids: list[int]) -> int:
    """Chunk and embed the live version of these pages (wiki.semantic.embed_pages)."""
    return semantic.embed_pages(page_ids)
