"""Values Quire's PostgreSQL backend sends in a form of their own (see base.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar


class IntArray(str):
    """An integer array parameter given as its text ("{3,17,42}"), made once by its owner.

    psycopg dumps a Python list of ints element by element, in Python, each time it is sent;
    the scope an agent's kept copy holds is sent with every search and browse. The backend
    sends this text as is, typed as psycopg types the list (the smallest integer type that
    holds every value), so PostgreSQL plans as it did with the list: the type changes the
    plan (for 2,000 single pages, bigint[] read the whole page table where int2[] and int4[]
    read it by index; tests/test_search_plan.py)."""

    element: ClassVar[str]  # the PostgreSQL type of its elements


class SmallintArray(IntArray):
    element = "int2"


class IntegerArray(IntArray):
    element = "int4"


class BigintArray(IntArray):
    element = "int8"


def int_array(values: Iterable[int]) -> IntArray:
    """`values` as an IntArray parameter."""
    values = list(values)
    largest = max((abs(value) for value in values), default=0)
    kind = SmallintArray if largest < 2**15 else IntegerArray if largest < 2**31 else BigintArray
    return kind("{" + ",".join(str(value) for value in values) + "}")
