"""Tiny operations with the shapes exercises take: functions, methods, tables."""

from __future__ import annotations

import operator

from .util import clamp

SCALE = 10


def _double(x: int) -> int:
    return 2 * x


def add(a: int, b: int) -> int:
    """Return a + b."""
    return operator.add(a, b)


def scaled_double(x: int,
                  *, limit: int = 100) -> int:  # a signature over two lines
    """SCALE times double `x`, clamped to `limit`."""
    return clamp(SCALE * _double(x), limit)


class Counter:
    """Counts up."""

    def __init__(self) -> None:
        self.count = 0

    def bump(self, by: int = 1) -> int:
        """Add `by` to the count and return the new count."""
        self.count += by
        return self.count

    @staticmethod
    def zero() -> int:
        """The count a fresh counter starts at."""
        return 0


HANDLERS = {"add": add}  # a table that holds a task function


def apply(name: str, a: int, b: int) -> int:
    """Call an operation through the table (not an exercise)."""
    return HANDLERS[name](a, b)
