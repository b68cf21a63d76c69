"""Where a resume code came from, mapped back to the original (chapter 7).

A resume function is compiled like any other frame, so it may break again. Its
prologue rebuilds exactly the original stack and it keeps the original
handlers, so at each of its original instructions the frame looks as it would
in the original code: same stack depth, same blocks, same live variables.
Resuming it there is resuming the original at the matching offset. Mapping
back keeps one resume function per break point however many times the paths
break and meet again, and keeps names short (`minidynamo_resume_in_f_at_14`,
never `minidynamo_resume_in_minidynamo_resume_in_f_at_12_at_14`).

Code objects compare by value (two functions with equal bytecode in different
files are equal), so everything here is keyed by code object *identity*.

Compare with TorchDynamo: `ContinueExecutionCache.generated_code_metadata` and
`generate_based_on_original_code_object` in `torch/_dynamo/resume_execution.py`.
"""

from __future__ import annotations

import weakref
from types import CodeType
from typing import Any, Callable


class ResumeError(ValueError):
    """A resume function cannot be made for this code at this point."""


class CodeKeyedDict:
    """A dict keyed by code objects by identity, forgetting a code when it dies."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, Any]] = {}

    def _forget(self, key: int) -> Callable[[weakref.ref], None]:
        return lambda _dead: self._items.pop(key, None)

    def get(self, code: CodeType, default: Any = None) -> Any:
        item = self._items.get(id(code))
        return default if item is None or item[0]() is not code else item[1]

    def __setitem__(self, code: CodeType, value: Any) -> None:
        self._items[id(code)] = (weakref.ref(code, self._forget(id(code))), value)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()


class ResumeOrigin:
    """The original code of a resume code, and resume offset -> original offset.

    The original is held weakly: the cache holds each resume code strongly
    under its original, so a strong reference back would keep both alive
    forever. A resume code whose original has died is treated as an original.
    """

    def __init__(self, code: CodeType, offsets: dict[int, int]):
        self._code = weakref.ref(code)
        self.offsets = offsets

    @property
    def code(self) -> CodeType | None:
        return self._code()


_ORIGINS = CodeKeyedDict()


def record_origin(resume_code: CodeType, origin: ResumeOrigin) -> None:
    """Remember where `resume_code` came from."""
    _ORIGINS[resume_code] = origin


def resume_origin(code: CodeType) -> ResumeOrigin | None:
    """Where a resume code made here came from; None for any other code."""
    return _ORIGINS.get(code)


def original_location(code: CodeType, offset: int) -> tuple[CodeType, int]:
    """Map an offset in a resume code to the same instruction of the original code.

    Any other code object (or a function, whose code is used) maps to itself.
    """
    code = getattr(code, "__code__", code)
    origin = resume_origin(code)
    if origin is None or origin.code is None:
        return code, offset
    if offset not in origin.offsets:
        raise ResumeError(f"offset {offset} of {code.co_name} is in its prologue; a "
                          "resume function can only be resumed in the original code")
    return origin.code, origin.offsets[offset]


def original_code(code: CodeType) -> CodeType:
    """The code a resume function continues (repeatedly, for a resume of a resume)."""
    while (origin := resume_origin(code)) is not None and origin.code is not None:
        code = origin.code
    return code
