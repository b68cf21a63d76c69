"""The cache of resume codes, and functions to call them (chapter 7).

The same break point must give the same code object, so that the frame
converter's per-code cache and guards work for resume functions too, and a
graph-break site that runs a thousand times makes one resume function, not a
thousand. `ResumeCache` keys them by the original code object (by identity)
and the `ResumePoint`; a resume code given in place of the original is first
mapped back to it (`origins`). `resume_function` then builds the callable.

Compare with TorchDynamo: `ContinueExecutionCache.lookup` (an
`ExactWeakKeyDictionary` keyed by code), and the `__resume_at_<offset>_<n>`
global names that `create_resume` installs resume functions under.
"""

from __future__ import annotations

import itertools
from types import CellType, CodeType, FunctionType
from typing import NamedTuple, Sequence

from minidynamo.resume.blocks import WithBlock
from minidynamo.resume.generate import ResumePoint, generate_resume_code
from minidynamo.resume.origins import (
    CodeKeyedDict,
    ResumeError,
    ResumeOrigin,
    original_location,
    record_origin,
)

GLOBAL_PREFIX = "__resume_at"      # the caller installs resume functions under these


def _make(code: CodeType | FunctionType, resume_offset: int, stack_depth: int,
          live_locals: Sequence[str], null_slots: Sequence[int],
          with_blocks: Sequence[WithBlock | int]) -> tuple[CodeType, ResumePoint]:
    """The original code and the normalised point a resume code is made from."""
    code, resume_offset = original_location(code, resume_offset)
    return code, ResumePoint.make(resume_offset, stack_depth, live_locals,
                                  null_slots=null_slots, with_blocks=with_blocks)


def _generate(code: CodeType, point: ResumePoint) -> CodeType:
    """Generate the resume code and remember which original it continues."""
    resume_code, offsets = generate_resume_code(code, point)
    record_origin(resume_code, ResumeOrigin(code, offsets))
    return resume_code


def make_resume_code(code: CodeType | FunctionType, resume_offset: int, stack_depth: int,
                     live_locals: Sequence[str], *, null_slots: Sequence[int] = (),
                     with_blocks: Sequence[WithBlock | int] = ()) -> CodeType:
    """A new code object that continues `code` at `resume_offset`, uncached.

    Its arguments are `___stack0 ...` (the non-NULL stack slots, bottom first)
    and then `live_locals`, in the given order; its closure is the frame's cells
    (co_cellvars order) followed by the original closure (see `resume_function`).
    A function is accepted for `code`, and so is a resume code made here: then
    the result continues the original code at the matching offset.
    """
    return _generate(*_make(code, resume_offset, stack_depth, live_locals,
                            null_slots, with_blocks))


class ResumeEntry(NamedTuple):
    """A cached resume code and the global name to install its function under."""

    code: CodeType
    name: str


_GLOBAL_NAME_NUMBERS = itertools.count()   # never reused, even after clear()


class ResumeCache:
    """The same break point always gets the same resume code object.

    Keyed by the original code (by identity) and the `ResumePoint`. Each entry
    also gets a global name `__resume_at_<offset>_<n>` under which the caller
    installs the resume function in the frame's globals.
    """

    def __init__(self) -> None:
        self._by_code = CodeKeyedDict()

    def lookup(self, code: CodeType | FunctionType, resume_offset: int, stack_depth: int,
               live_locals: Sequence[str], *, null_slots: Sequence[int] = (),
               with_blocks: Sequence[WithBlock | int] = ()) -> ResumeEntry:
        """The resume code for this point (made by `make_resume_code` the first time)."""
        code, point = _make(code, resume_offset, stack_depth, live_locals,
                            null_slots, with_blocks)
        entries = self._by_code.get(code)
        if entries is None:
            entries = {}
            self._by_code[code] = entries
        if point not in entries:
            name = f"{GLOBAL_PREFIX}_{point.offset}_{next(_GLOBAL_NAME_NUMBERS)}"
            entries[point] = ResumeEntry(_generate(code, point), name)
        return entries[point]

    def __len__(self) -> int:
        """How many original code objects have resume codes here."""
        return len(self._by_code)

    def clear(self) -> None:
        """Forget every resume code (`minidynamo.reset()` should call this)."""
        self._by_code.clear()


resume_cache = ResumeCache()


def resume_function(fn: FunctionType, resume_code: CodeType, *,
                    cells: Sequence[CellType] = ()) -> FunctionType:
    """A function running `resume_code` with `fn`'s globals and closure.

    `cells` are the frame's cells for `fn.__code__.co_cellvars`, in that order
    (generated code loads them with LOAD_CLOSURE); the closure is `cells`
    followed by `fn.__closure__`. When `fn` is itself a resume function,
    `cells` is empty: its closure already holds them.
    """
    closure = tuple(cells) + (fn.__closure__ or ())
    if len(closure) != len(resume_code.co_freevars):
        raise ResumeError(
            f"{resume_code.co_name} needs {len(resume_code.co_freevars)} cells "
            f"{resume_code.co_freevars}, got {len(closure)}: pass the frame's cells "
            "for co_cellvars, followed by the function's own closure")
    return FunctionType(resume_code, fn.__globals__, resume_code.co_name, None,
                        closure or None)
