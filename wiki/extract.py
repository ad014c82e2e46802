"""Text extraction from attachments (placeholder; see issue 2 item 5)."""


def extract_text(*, name: str, content_type: str, data: bytes) -> str:
    return ""
