"""Attachment text extraction, and the attachment service refusing what it cannot store."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import InvalidArgument
from wiki import services
from wiki.extract import TEXT_MAX, extract_text
from wiki.models import Attachment, Page


def _pdf_with_text(*lines: str) -> bytes:
    """A minimal valid PDF (one page, Helvetica) showing `lines`, built by hand."""
    shows = b" ".join(b"(%s) Tj 0 -16 Td" % line.encode("latin-1") for line in lines)
    stream = b"BT /F1 12 Tf 72 720 Td " + shows + b" ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref_at,
    )
    return bytes(out)


def _docx_with(paragraphs: list[str], table: list[list[str]]) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for r, row in enumerate(table):
        for c, text in enumerate(row):
            grid.cell(r, c).text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _extract(name: str, data: bytes, content_type: str = "application/octet-stream") -> str:
    return extract_text(name=name, content_type=content_type, data=data)


# --- readers ------------------------------------------------------------------------------


def test_it_reads_utf8_text_markdown_and_csv() -> None:
    assert _extract("notes.txt", "Grüße from the team\n".encode()) == "Grüße from the team\n"
    assert _extract("guide.md", b"# Guide\n\nStep one.\n") == "# Guide\n\nStep one.\n"
    assert _extract("prices.csv", b"item,price\nmug,4.50\n") == "item,price\nmug,4.50\n"


def test_it_reads_text_with_a_byte_order_mark() -> None:
    assert _extract("bom.txt", "\ufeffhello".encode()) == "hello"
    assert _extract("wide.txt", "héllo wörld".encode("utf-16")) == "héllo wörld"


def test_it_refuses_text_that_is_not_utf8() -> None:
    with pytest.raises(InvalidArgument) as caught:
        _extract("latin.txt", "café".encode("latin-1"))
    assert caught.value.field == "file"
    assert caught.value.message.startswith("latin.txt could not be read as text: ")
    assert caught.value.message.endswith("Upload a valid file.")


def test_it_pretty_prints_json_and_refuses_broken_json() -> None:
    text = _extract("data.json", b'{"refund_days": 30, "regions": ["eu", "us"]}')
    assert json.loads(text) == {"refund_days": 30, "regions": ["eu", "us"]}
    assert '\n  "refund_days": 30' in text
    with pytest.raises(InvalidArgument, match=r"data\.json could not be read as JSON"):
        _extract("data.json", b'{"refund_days": 30,')


def test_it_reads_the_text_of_a_pdf() -> None:
    text = _extract("policy.pdf", _pdf_with_text("Refunds within 30 days.", "Ask finance."))
    assert "Refunds within 30 days." in text
    assert "Ask finance." in text


@pytest.mark.parametrize(
    "data",
    [
        b"hello, I am not a PDF",
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R\ntruncated",
        b"",
    ],
)
def test_it_refuses_a_pdf_it_cannot_read(data: bytes) -> None:
    with pytest.raises(InvalidArgument) as caught:
        _extract("policy.pdf", data)
    assert caught.value.message.startswith("policy.pdf could not be read as PDF: ")
    assert caught.value.message.endswith("Upload a valid file.")


def test_it_reads_paragraphs_and_table_cells_of_a_docx() -> None:
    data = _docx_with(
        ["Travel policy", "Book trains when you can."],
        [["City", "Per diem"], ["Chicago", "79"]],
    )
    text = _extract("travel.docx", data)
    assert "Travel policy\nBook trains when you can." in text
    assert "City | Per diem\nChicago | 79" in text


def test_it_refuses_a_docx_it_cannot_read() -> None:
    not_a_document = io.BytesIO()
    with zipfile.ZipFile(not_a_document, "w") as archive:
        archive.writestr("hello.txt", "a zip, but no Word document inside")
    for data in (b"PK\x03\x04 broken zip", not_a_document.getvalue()):
        with pytest.raises(InvalidArgument, match=r"travel\.docx could not be read as DOCX"):
            _extract("travel.docx", data)


def test_it_keeps_files_it_does_not_read_with_no_text() -> None:
    assert _extract("photo.png", b"\x89PNG\r\n\x1a\n....", "image/png") == ""
    assert _extract("bundle.zip", b"PK\x03\x04....", "application/zip") == ""


def test_it_decides_the_kind_by_extension_then_content_type() -> None:
    # The extension wins over a wrong content type...
    assert _extract("notes.txt", b"plain words", "application/pdf") == "plain words"
    # ...and the content type decides when there is no known extension.
    assert "Hello PDF" in _extract("scan", _pdf_with_text("Hello PDF"), "application/pdf")
    assert _extract("README", b"read me", "text/plain; charset=utf-8") == "read me"
    # A known extension of a kind Quire does not read is not read, whatever the type says.
    assert _extract("photo.png", b"\x89PNG\r\n\x1a\n", "text/plain") == ""


def test_it_caps_long_text_and_says_so() -> None:
    text = _extract("big.txt", b"a" * (TEXT_MAX + 10))
    assert text.startswith("a" * TEXT_MAX)
    assert len(text) < TEXT_MAX + 200
    assert text.endswith("[Quire: the extracted text was cut at 1,000,000 characters.]\n")
    assert _extract("fits.txt", b"a" * TEXT_MAX) == "a" * TEXT_MAX


# --- through the attachment service --------------------------------------------------------


@pytest.fixture
def media_root(settings: Any, tmp_path: Path) -> Path:
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = root
    return root


def _stored_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


def test_it_stores_an_attachment_with_its_text(
    editor: User, make_page: Callable[..., Page], media_root: Path
) -> None:
    page = make_page("Refunds")
    upload = SimpleUploadedFile(
        "policy.pdf", _pdf_with_text("Refunds within 30 days."), "application/pdf"
    )
    attachment = services.attachment_add(actor=editor, page=page, upload=upload)
    assert "Refunds within 30 days." in attachment.extracted_text
    assert [path.name for path in _stored_files(media_root)] == ["policy.pdf"]


def test_it_refuses_an_oversized_file_and_stores_nothing(
    editor: User, make_page: Callable[..., Page], media_root: Path, settings: Any
) -> None:
    settings.QUIRE_ATTACHMENT_MAX_BYTES = 1024
    page = make_page("Refunds")
    upload = SimpleUploadedFile("big.txt", b"x" * 1025, "text/plain")
    with pytest.raises(InvalidArgument, match=r"at most 1,024 bytes") as caught:
        services.attachment_add(actor=editor, page=page, upload=upload)
    assert caught.value.field == "file"
    assert not Attachment.objects.exists()
    assert _stored_files(media_root) == []


def test_it_refuses_an_unreadable_pdf_and_stores_nothing(
    editor: User, make_page: Callable[..., Page], media_root: Path
) -> None:
    page = make_page("Refunds")
    upload = SimpleUploadedFile("policy.pdf", b"%PDF-1.7 garbage", "application/pdf")
    with pytest.raises(InvalidArgument, match=r"policy\.pdf could not be read as PDF"):
        services.attachment_add(actor=editor, page=page, upload=upload)
    assert not Attachment.objects.exists()
    assert _stored_files(media_root) == []


def test_it_refuses_a_second_file_of_the_same_name_and_stores_nothing(
    editor: User, make_page: Callable[..., Page], media_root: Path
) -> None:
    page = make_page("Refunds")
    services.attachment_add(
        actor=editor, page=page, upload=SimpleUploadedFile("a.txt", b"one", "text/plain")
    )
    before = _stored_files(media_root)
    with pytest.raises(InvalidArgument, match=r"already has a file named a\.txt"):
        services.attachment_add(
            actor=editor, page=page, upload=SimpleUploadedFile("a.txt", b"two", "text/plain")
        )
    assert _stored_files(media_root) == before
    assert Attachment.objects.count() == 1
