"""Settings of minidynamo, as plain module attributes (chapter 0; used by every chapter).

Read them as `config.strict`; change them for a block with `config.patch(...)`:

    with config.patch(strict=True):
        minidynamo.compile(fn)(x)

Compare with TorchDynamo: `torch/_dynamo/config.py` (a much larger set, with the
same `patch` idea).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

# Raise internal errors instead of falling back to eager. Graded tests use it so
# that a stub cannot pass by falling back.
strict: bool = False

# When the backend fails to compile a graph, run the frame eagerly (with a warning)
# instead of raising BackendCompilerFailed; torch._dynamo.config.suppress_errors.
suppress_errors: bool = False

# Print a line for every compiled frame and every graph break.
verbose: bool = False

# How many inlined calls may be nested (recursion is unrolled up to this depth).
inline_depth_limit: int = 24

# How many instructions one translator may run before tracing gives up with a
# graph break (an unbounded `while True` would otherwise unroll forever).
max_instructions_per_frame: int = 100_000

# `assert tensor_condition, "message"` becomes a graph node, torch._assert_async
# (chapter 8), instead of a data-dependent branch; torch's option of the same name.
rewrite_assert_with_torch_assert: bool = True

# How many cache entries one code object may have per backend (chapter 9); one more
# miss runs the frame eagerly, with a warning naming the last failing guard.
recompile_limit: int = 8

# Raise FailOnRecompileLimitHit instead of running eagerly when the limit is hit.
fail_on_recompile_limit_hit: bool = False


@contextlib.contextmanager
def patch(**changes: Any) -> Iterator[None]:
    """Set some settings for the duration of a `with` block, then restore them."""
    module = sys.modules[__name__]
    unknown = [name for name in changes if not hasattr(module, name)]
    if unknown:
        raise AttributeError(f"unknown minidynamo config option(s): {unknown}")
    saved = {name: getattr(module, name) for name in changes}
    for name, value in changes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
