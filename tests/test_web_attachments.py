"""Attachments in the browser: upload with limits, download as a file, remove; editors only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from wiki import services
from wiki.models import Attachment, Page

ClientAs = Callable[[User], Client]


@pytest.fixture(autouse=True)
def _media(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path


def upload_url(page: Page) -> str:
    return reverse("wiki:attachment_upload", kwargs={"public_id": page.public_id})


def stored_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_it_uploads_a_file_and_lists_it_on_the_page(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs, tmp_path: Path
) -> None:
    page = make_page("Policies")
    upload = SimpleUploadedFile("rules.txt", b"Rule one: be kind.\n", content_type="text/plain")
    response = client_as(editor).post(upload_url(page), {"file": upload}, follow=True)
    attachment = Attachment.objects.get(page=page)
    assert attachment.name == "rules.txt"
    assert "be kind" in attachment.extracted_text
    html = response.content.decode()
    assert "Attached rules.txt." in html
    assert reverse("wiki:attachment", args=[page.public_id, attachment.pk]) in html


def test_it_downloads_a_file_as_an_attachment_with_its_stored_type(
    make_page: Callable[..., Page], editor: User, reader: User, client_as: ClientAs
) -> None:
    page = make_page("Policies")
    attachment = services.attachment_add(
        actor=editor,
        page=page,
        upload=SimpleUploadedFile("data.csv", b"a,b\n1,2\n", content_type="text/csv"),
    )
    response = client_as(reader).get(
        reverse("wiki:attachment", args=[page.public_id, attachment.pk])
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv"
    assert response["Content-Disposition"].startswith("attachment;")
    assert 'filename="data.csv"' in response["Content-Disposition"]
    assert response.streaming and response.getvalue() == b"a,b\n1,2\n"


def test_it_never_serves_an_uploaded_html_file_inline(
    make_page: Callable[..., Page], editor: User, reader: User, client_as: ClientAs
) -> None:
    page = make_page("Policies")
    attachment = services.attachment_add(
        actor=editor,
        page=page,
        upload=SimpleUploadedFile("x.html", b"<script>alert(1)</script>", content_type="text/html"),
    )
    response = client_as(reader).get(
        reverse("wiki:attachment", args=[page.public_id, attachment.pk])
    )
    assert response["Content-Disposition"].startswith("attachment;")
    assert "sandbox" in response["Content-Security-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff"


def test_it_requires_login_to_download(make_page: Callable[..., Page], editor: User) -> None:
    page = make_page("Policies")
    attachment = services.attachment_add(
        actor=editor,
        page=page,
        upload=SimpleUploadedFile("a.txt", b"hello", content_type="text/plain"),
    )
    response = Client().get(reverse("wiki:attachment", args=[page.public_id, attachment.pk]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_it_refuses_an_oversized_file_with_a_message_and_stores_nothing(
    make_page: Callable[..., Page],
    editor: User,
    client_as: ClientAs,
    settings: Any,
    tmp_path: Path,
) -> None:
    settings.QUIRE_ATTACHMENT_MAX_BYTES = 1024
    page = make_page("Policies")
    upload = SimpleUploadedFile("big.txt", b"x" * 1025, content_type="text/plain")
    response = client_as(editor).post(upload_url(page), {"file": upload})
    assert response.status_code == 200
    html = response.content.decode()
    assert "big.txt is 1,025 bytes; attachments can be at most 1,024 bytes." in html
    assert 'class="field-error"' in html
    assert Attachment.objects.count() == 0
    assert stored_files(tmp_path) == []


def test_it_refuses_an_unreadable_file_with_a_message_and_stores_nothing(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs, tmp_path: Path
) -> None:
    page = make_page("Policies")
    upload = SimpleUploadedFile(
        "x.pdf", b"\x00\x01 this is not a pdf", content_type="application/pdf"
    )
    response = client_as(editor).post(upload_url(page), {"file": upload})
    assert response.status_code == 200
    html = response.content.decode()
    assert "x.pdf could not be read as" in html
    assert 'class="field-error"' in html
    assert Attachment.objects.count() == 0
    assert stored_files(tmp_path) == []


def test_it_asks_for_a_file_when_none_is_sent(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Policies")
    response = client_as(editor).post(upload_url(page), {})
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()


def test_it_refuses_uploads_by_a_reader(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    page = make_page("Policies")
    upload = SimpleUploadedFile("rules.txt", b"text", content_type="text/plain")
    response = client_as(reader).post(upload_url(page), {"file": upload})
    assert response.status_code == 403
    assert b"only members of Editors can publish here" in response.content
    assert Attachment.objects.count() == 0
    assert (
        "Upload a file"
        not in client_as(reader).get(reverse("wiki:page", args=[page.public_id])).content.decode()
    )


def test_it_removes_a_file_for_an_editor_but_not_for_a_reader(
    make_page: Callable[..., Page], editor: User, reader: User, client_as: ClientAs
) -> None:
    page = make_page("Policies")
    attachment = services.attachment_add(
        actor=editor,
        page=page,
        upload=SimpleUploadedFile("a.txt", b"hello", content_type="text/plain"),
    )
    url = reverse("wiki:attachment_remove", args=[page.public_id, attachment.pk])
    assert client_as(reader).post(url).status_code == 403
    assert Attachment.objects.filter(pk=attachment.pk).exists()
    assert client_as(editor).post(url).status_code == 302
    assert not Attachment.objects.filter(pk=attachment.pk).exists()


def test_it_refuses_uploads_to_an_archived_page(
    make_page: Callable[..., Page], editor: User, client_as: ClientAs
) -> None:
    page = make_page("Policies")
    services.page_archive(actor=editor, page=page)
    upload = SimpleUploadedFile("rules.txt", b"text", content_type="text/plain")
    response = client_as(editor).post(upload_url(page), {"file": upload}, follow=True)
    assert "Files can only be attached to a live page" in response.content.decode()
    assert Attachment.objects.count() == 0
