"""Which pages are copies of one another: a fingerprint of each page's indexed text, so that
search can show a page copied into several folders (an untranslated page in every language
folder of a handbook) as one hit naming where the others are (wiki.search.fold_copies).

The fingerprint is a 64-bit SimHash of the text's three-word shingles (Charikar 2002; Manku,
Jain and Das Sarma 2007): equal for copies whatever their markup, spacing or case, and within
NEAR_BITS of each other for a copy with a line or two changed. Two pages are copies when their
titles are the same too (`same_page`). A page with no text has EMPTY.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

# The fingerprint of a page with no text (a folder's page, say): such pages are no copies.
EMPTY = 0
# Two fingerprints this many bits apart or fewer are near-identical texts. Measured on the
# tldr pages that share a file name across platforms (pages/*/NAME.md, 421 pairs): 13 pairs of
# identical texts at 0; a link and an example apart, 4; a link, 5; four lines apart, 7; one
# example more, 8; pages that differ more, 11 and beyond (random texts: 32 on average).
NEAR_BITS = 6
# Enough of a long page to tell copies apart, at a bounded cost (about 10 ms).
MAX_WORDS = 20_000
SHINGLE = 3
_WORD = re.compile(r"\w+")
_BITS = 64


def fingerprint(text: str) -> int:
    """The SimHash of `text` as a signed 64-bit integer (a database BIGINT); EMPTY for a
    text without a word, never EMPTY otherwise."""
    words = _WORD.findall(text.lower())[:MAX_WORDS]
    if not words:
        return EMPTY
    width = min(SHINGLE, len(words))
    shingles = {" ".join(words[n : n + width]) for n in range(len(words) - width + 1)}
    digests = b"".join(
        hashlib.blake2b(shingle.encode(), digest_size=8).digest() for shingle in shingles
    )
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8), axis=1)
    votes = bits.sum(axis=0, dtype=np.int64) * 2 > len(shingles)
    value = int.from_bytes(np.packbits(votes).tobytes(), "big")
    signed = value - (1 << _BITS) if value >= 1 << (_BITS - 1) else value
    return signed or 1


def near(first: int | None, second: int | None) -> bool:
    """Whether two fingerprints are of near-identical texts (neither empty nor unknown)."""
    if not first or not second:
        return False
    return ((first ^ second) & ((1 << _BITS) - 1)).bit_count() <= NEAR_BITS


def same_page(first: tuple[str, int | None], second: tuple[str, int | None]) -> bool:
    """Whether two pages, each (title, fingerprint), are copies of one page: the same title
    (case aside) and near-identical texts. The title keeps apart pages that merely say the
    same short thing (tldr's "kite" and "kr", both "an alias of kiterunner")."""
    return first[0].casefold() == second[0].casefold() and near(first[1], second[1])
