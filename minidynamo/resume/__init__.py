"""Resume functions: the rest of a frame, after a graph break (chapter 7).

When the tracer meets an instruction I that it cannot put in the graph (a graph
break), the code it generates for the frame

1. runs the graph captured so far,
2. runs I itself, natively, and
3. calls a *resume function* with everything the rest of the frame needs, and
   returns what that returns.

This package builds step 3's function from the original code object: the same
instructions, exception table and line numbers, minus what can no longer run,
behind a short prologue that rebuilds the frame's state and jumps to the
resume offset (the instruction after I):

    def minidynamo_resume_in_f_at_12(___stack0, ___stack1, x, y):
        RESUME 0
        PUSH_NULL                  # stack slot 0 held NULL
        LOAD_FAST ___stack0        # slots 1 and 2: the stacked values, bottom first
        LOAD_FAST ___stack1
        JUMP_FORWARD -> the resume offset
        ... the original instructions that can still run ...

How the caller describes the frame at the break, and what the prologue does:

* the value stack: `stack_depth` slots; the non-NULL ones are the arguments
  `___stack0 ...`, bottom first. A slot holding NULL (3.11 pushes one below a
  callable that is not a method) cannot be passed as a value, so the caller
  names it in `null_slots` and the prologue pushes it with PUSH_NULL;
* the live locals: arguments too, under their own names, so they arrive in their
  own slots with no instruction at all;
* cells and free variables are *shared*, not copied: the resume code's
  co_freevars are the original co_cellvars followed by its co_freevars, and the
  function is called with the frame's own cells as closure. A closure created
  before the break then still sees `x = 2` made after it;
* `with` blocks around the resume point: at the break the stack holds each
  block's bound `__exit__` (pushed by BEFORE_WITH). Pass it as an ordinary value
  and nothing is re-entered. Or put the context manager itself in that slot and
  name it in `with_blocks`: the prologue re-enters it with BEFORE_WITH (a second
  `__enter__`, the new `__exit__` back in the slot), and the original exception
  table entry of the block calls `__exit__` on the way out, as before;
* an `except` or `finally` body around the resume point: the frame keeps the
  exception handled *before* it on the stack (PUSH_EXC_INFO saved it there) and
  the one being handled in the thread (`sys.exc_info()`), which a new frame does
  not inherit. The caller passes the one being handled in that slot instead
  (`exception_slots_at` lists the slots); the prologue makes it current again
  with PUSH_EXC_INFO, which saves the caller's own in the slot.

The same break point always gives the same code object (`ResumeCache`), and a
resume function that breaks again resumes *the original* code, so paths that
meet again share one resume function.

Inside the package, lowest first: `origins` (which original code a resume code
continues) -> `blocks` (the blocks around an instruction, read off the
exception table; live locals) -> `generate` (checks, prologue, assembly) ->
`registry` (the cache, `resume_function`).

Compare with TorchDynamo: `ContinueExecutionCache.generate` and `ReenterWith` in
`torch/_dynamo/resume_execution.py` (Dynamo builds a fresh `with` handler in the
prologue and redirects the original entries to it; we reuse the original one),
`create_call_resume_at` and `create_resume` in `symbolic_convert.py` (what the
tracer hands over at a break).
"""

from minidynamo.resume.blocks import (
    WithBlock,
    exception_slots_at,
    live_locals_at,
    with_blocks_at,
)
from minidynamo.resume.generate import (
    HIDDEN_STATE_BEFORE,
    RESUME_PREFIX,
    STACK_PREFIX,
    ResumePoint,
)
from minidynamo.resume.origins import (
    ResumeError,
    ResumeOrigin,
    original_location,
    resume_origin,
)
from minidynamo.resume.registry import (
    GLOBAL_PREFIX,
    ResumeCache,
    ResumeEntry,
    make_resume_code,
    resume_cache,
    resume_function,
)

__all__ = [
    "GLOBAL_PREFIX",
    "HIDDEN_STATE_BEFORE",
    "RESUME_PREFIX",
    "STACK_PREFIX",
    "ResumeCache",
    "ResumeEntry",
    "ResumeError",
    "ResumeOrigin",
    "ResumePoint",
    "WithBlock",
    "exception_slots_at",
    "live_locals_at",
    "make_resume_code",
    "original_location",
    "resume_cache",
    "resume_function",
    "resume_origin",
    "with_blocks_at",
]
