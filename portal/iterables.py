"""Small helpers over iterables that several layers use (the kernel: no app imports)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

T = TypeVar("T")


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of ``size`` items (the last may be shorter) drawn from ``items`` as they come (``itertools.batched``
    from Python 3.12, which this project does not require)."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk
