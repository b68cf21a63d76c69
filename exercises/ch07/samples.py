"""More programs for the chapter 7 graded tests: argument kinds `programs.py` lacks.

Same conventions as `programs.py`: each takes `log` first and records its side effects
there; a resumed run must give what CPython's undisturbed run gives.
"""

from __future__ import annotations

from .programs import program


def positional_only(log, a, b, /, c=4):
    """Three positional-only parameters: a resume function, whose parameters are the
    stack values and the live locals, must have none (it may take fewer than three)."""
    total = a * b
    log.append(total)
    return total - c


def positional_only_and_keywords(log, a, /, b, *, scale):
    product = a * b
    log.append((product, scale))
    return product * scale


POSITIONAL_ONLY = [
    program(positional_only, 3, 5),
    program(positional_only_and_keywords, 2, 7, scale=3),
]
