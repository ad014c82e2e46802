"""Text extraction from attachments, so that agents and search can read what a file says.

Text, markdown, CSV, JSON, PDF and DOCX are read; other files are kept with no text. A file
that claims to be one of the readable kinds but cannot be read is refused.
"""

from __future__ import annotations

import io
import json
import logging
import mimetypes
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from core.errors import InvalidArgument

logger = logging.getLogger(__name__)

TEXT_MAX = 1_000_000
TRUNCATION_MARKER = "\n\n[Quire: the extracted text was cut at {limit:,} characters.]\n"

_KIND_BY_EXTENSION = {
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".csv": "csv",
    ".json": "json",
    ".pdf": "pdf",
    ".docx": "docx",
}
_KIND_BY_CONTENT_TYPE = {
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/csv": "csv",
    "application/csv": "csv",
    "application/json": "json",
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
}
_KIND_LABEL = {
    "text": "text",
    "markdown": "markdown",
    "csv": "CSV",
    "json": "JSON",
    "pdf": "PDF",
    "docx": "DOCX",
}


class _Unreadable(Exception):
    """The file is not what its name or type says; the message says why."""


def file_kind(*, name: str, content_type: str) -> str | None:
    """Which reader handles the file: by extension first, then by content type."""
    extension = PurePosixPath(name.lower()).suffix
    if extension in _KIND_BY_EXTENSION:
        return _KIND_BY_EXTENSION[extension]
    # A known extension of another kind (photo.png sent as text/plain) stays unread.
    guessed, _ = mimetypes.guess_type(name)
    base_type = guessed or (content_type or "").split(";", 1)[0].strip().lower()
    return _KIND_BY_CONTENT_TYPE.get(base_type)


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as error:
            raise _Unreadable("it is not valid UTF-16 text") from error
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _Unreadable(
            f"it is not UTF-8 text (byte {error.start} is not valid); save it as UTF-8"
        ) from error


def _read_json(data: bytes) -> str:
    text = _decode(data)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _Unreadable(f"it is not valid JSON ({error.msg} at line {error.lineno})") from error
    return json.dumps(value, indent=2, ensure_ascii=False)


def _read_pdf(data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise _Unreadable("it is encrypted; upload a copy without a password")
        pages = [page.extract_text() or "" for page in reader.pages]
    except _Unreadable:
        raise
    except PyPdfError as error:
        raise _Unreadable(f"the file is damaged or not a PDF ({error})") from error
    # A damaged PDF makes pypdf raise almost anything (KeyError, struct.error, zlib.error,
    # RecursionError...); an upload must be refused with a message, never crash the request.
    except Exception as error:
        logger.info("pypdf could not read an upload", exc_info=True)
        raise _Unreadable(f"the file is damaged or not a PDF ({type(error).__name__})") from error
    return "\n\n".join(text.strip() for text in pages if text.strip())


def _docx_lines(data: bytes) -> Iterator[str]:
    import docx

    document = docx.Document(io.BytesIO(data))
    for paragraph in document.paragraphs:
        yield paragraph.text
    for table in document.tables:
        for row in table.rows:
            cells: list[str] = []
            for cell in row.cells:
                # A merged cell shows up once per grid column it spans; keep it once.
                if not cells or cells[-1] != cell.text:
                    cells.append(cell.text)
            yield " | ".join(cells)


def _read_docx(data: bytes) -> str:
    try:
        lines = list(_docx_lines(data))
    # Like pypdf, python-docx and zipfile raise many kinds of errors on a damaged file.
    except Exception as error:
        logger.info("python-docx could not read an upload", exc_info=True)
        raise _Unreadable(f"the file is damaged or not a DOCX document ({error})") from error
    return "\n".join(line for line in lines if line.strip())


_READERS: dict[str, Callable[[bytes], str]] = {
    "text": _decode,
    "markdown": _decode,
    "csv": _decode,
    "json": _read_json,
    "pdf": _read_pdf,
    "docx": _read_docx,
}


def _cap(text: str) -> str:
    if len(text) <= TEXT_MAX:
        return text
    return text[:TEXT_MAX] + TRUNCATION_MARKER.format(limit=TEXT_MAX)


def extract_text(*, name: str, content_type: str, data: bytes) -> str:
    """The text of an attachment, at most TEXT_MAX characters (a marker says when cut).

    Returns "" for kinds Quire does not read (images, archives...). Raises InvalidArgument
    when the file claims a readable kind but cannot be read as one.
    """
    kind = file_kind(name=name, content_type=content_type)
    if kind is None:
        return ""
    try:
        text = _READERS[kind](data)
    except _Unreadable as error:
        raise InvalidArgument(
            f"{name} could not be read as {_KIND_LABEL[kind]}: {error}. Upload a valid file.",
            field="file",
        ) from error
    return _cap(text.replace("\x00", ""))
