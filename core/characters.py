"""Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): characters that
render as nothing. Among them zero-width spaces and joiners, bidi controls, the soft hyphen, the
combining grapheme joiner, Hangul fillers, variation selectors (U+FE00.., U+E0100..) and tag
characters. The review screens badge them; the credential check reads past them."""

from __future__ import annotations

import re

DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
DEFAULT_IGNORABLE_CODES = frozenset(
    code for low, high in DEFAULT_IGNORABLE for code in range(low, high + 1)
)
DEFAULT_IGNORABLE_RE = re.compile(
    "[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in DEFAULT_IGNORABLE) + "]"
)
