"""A common mistake: cache resume codes by (code, offset), as if a break point were
only a place in the bytecode. The same offset reached with a different stack layout
or different bound locals (one path assigns `y`, the other does not) gets the first
frame's code, whose arguments do not match."""

from __future__ import annotations


class ResumeCache:
    def lookup(self, code: CodeType | FunctionType, resume_offset: int, stack_depth: int,
               live_locals: Sequence[str], *, null_slots: Sequence[int] = (),
               with_blocks: Sequence[WithBlock | int] = ()) -> ResumeEntry:
        code, point = _make(code, resume_offset, stack_depth, live_locals,
                            null_slots, with_blocks)
        entries = self._by_code.get(code)
        if entries is None:
            entries = {}
            self._by_code[code] = entries
        if point.offset not in entries:
            name = f"{GLOBAL_PREFIX}_{point.offset}_{next(_GLOBAL_NAME_NUMBERS)}"
            entries[point.offset] = ResumeEntry(_generate(code, point), name)
        return entries[point.offset]
