"""A common mistake: propagate uses backward but forget that a write kills them.

`live_in = reads | live_out` instead of `reads | (live_out - writes)`: a variable
read anywhere later is reported live even where it is about to be overwritten.
Resuming still gives the right answer (the resume function just receives values it
never reads), so only a comparison with the definition of liveness catches it: the
resume function keeps dead tensors alive and its guards (chapter 9) would check
values the code never uses."""

from __future__ import annotations


def live_variables(instructions: list[Instruction], start: Instruction) -> set[str]:
    indexes = instruction_indexes(instructions)
    following = [successors(instructions, index, indexes)
                 for index in range(len(instructions))]
    live_in: list[set[str]] = [set() for _ in instructions]
    changed = True
    while changed:
        changed = False
        for index in reversed(range(len(instructions))):
            live_out = set().union(*(live_in[successor] for successor in following[index]))
            reads, _writes = reads_and_writes(instructions[index])
            updated = reads | live_out
            if updated != live_in[index]:
                live_in[index] = updated
                changed = True
    return live_in[indexes[id(start)]]
