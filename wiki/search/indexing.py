"""The keyword index: one `SearchDocument` row per live page, kept in line as pages change;
each change also queues the page's chunks to be embedded (wiki.semantic)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import Prefetch
from kombu.exceptions import OperationalError as BrokerError

from wiki.copies import fingerprint
from wiki.indexed_text import document_fields
from wiki.language import count_languages, note_languages, page_language
from wiki.models import Attachment, Page, SearchDocument, Version
from wiki.tasks import embed_pages

FTS_TABLE = "wiki_searchdocument_fts"


def index_page(page: Page) -> None:
    """Bring the index row of `page` in line with its live version (or drop it).

    Called inside the service transactions; costs 2 or 3 queries (the attachments' text,
    then an UPDATE, or an INSERT when the page was not indexed yet).
    """
    version = None if page.archived else page.live_version
    if version is None:
        remove_page(page)
        return
    attachments = Attachment.objects.filter(page_id=page.pk).values_list("name", "extracted_text")
    document = _document(page, version, attachments)
    updated = SearchDocument.objects.filter(page_id=page.pk).update(
        title=document.title,
        tags=document.tags,
        body=document.body,
        language=document.language,
        fingerprint=document.fingerprint,
    )
    if not updated:
        document.save(force_insert=True)
    note_languages([document.language or ""])
    queue_embedding([page.pk])


def index_new_pages(pages: Iterable[Page]) -> None:
    """Index pages that went live as they were created, in one INSERT.

    New pages have no index row and no attachments yet, so nothing needs to be read first.
    """
    documents = []
    for page in pages:
        assert page.live_version is not None and not page.archived
        documents.append(_document(page, page.live_version))
    SearchDocument.objects.bulk_create(documents)
    note_languages(document.language or "" for document in documents)
    queue_embedding([document.page_id for document in documents])


def queue_embedding(page_ids: list[int]) -> None:
    """Chunk and embed these pages once the transaction commits (a Celery task; in process
    without Redis), so that no write waits for the model."""
    if page_ids:
        transaction.on_commit(lambda: _send_to_embed(page_ids))


def _send_to_embed(page_ids: list[int]) -> None:
    try:
        embed_pages.delay(page_ids)
    except BrokerError as exc:
        # The write has committed; a broker outage must not turn it into an error. The pages
        # keep their keyword index; `manage.py embed_pages` embeds what was missed.
        logging.getLogger(__name__).warning(
            "The task broker is unavailable (%s); %d page(s) wait to be embedded: run "
            "'python manage.py embed_pages' once it is back.",
            exc,
            len(page_ids),
        )


def _document(
    page: Page, version: Version, attachments: Iterable[tuple[str, str]] = ()
) -> SearchDocument:
    """The index row of `page` showing `version` (unsaved)."""
    title, tags, body = document_fields(
        title=version.title, tags=version.tags, body=version.body, attachments=attachments
    )
    language = page_language(version.title, version.body, page.path)
    return SearchDocument(
        page_id=page.pk,
        title=title,
        tags=tags,
        body=body,
        language=language,
        fingerprint=fingerprint(body),
    )


def remove_page(page: Page) -> None:
    """Drop `page` from the index (archived, or no live version)."""
    remove_pages([page.pk])


def remove_pages(page_ids: Iterable[int]) -> None:
    """Drop these pages (by primary key) from the index, in one query."""
    SearchDocument.objects.filter(page_id__in=list(page_ids)).delete()


@transaction.atomic
def reindex_all() -> int:
    """Rebuild the whole index from the live versions; returns the number of pages indexed."""
    SearchDocument.objects.all().delete()
    pages = (
        Page.objects.readable()
        .select_related("live_version")
        .prefetch_related(
            Prefetch(
                "attachments", queryset=Attachment.objects.only("page_id", "name", "extracted_text")
            )
        )
        .order_by("pk")
    )
    batch: list[SearchDocument] = []
    count = 0
    for page in pages.iterator(chunk_size=200):
        version = page.live_version
        assert version is not None
        title, tags, body = document_fields(
            title=version.title,
            tags=version.tags,
            body=version.body,
            attachments=[(a.name, a.extracted_text) for a in page.attachments.all()],
        )
        language = page_language(version.title, version.body, page.path)
        batch.append(
            SearchDocument(
                page_id=page.pk,
                title=title,
                tags=tags,
                body=body,
                language=language,
                fingerprint=fingerprint(body),
            )
        )
        if len(batch) >= 200:
            count += _insert_documents(batch)
            batch = []
    count += _insert_documents(batch)
    count_languages()
    if connection.vendor == "sqlite":
        # Repairs the FTS table even if it had drifted from its content table.
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")  # noqa: S608
    return count


def _insert_documents(documents: list[SearchDocument]) -> int:
    # A page approved meanwhile has indexed itself with newer text: keep that row.
    SearchDocument.objects.bulk_create(documents, ignore_conflicts=True)
    return len(documents)
