"""A marker for "argument not given", distinct from None (which may be a value to set)."""

from __future__ import annotations

import enum
from typing import Final


class Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
