"""`locals()`, `vars()` and `dir()` after a graph break (chapters 3 and 7).

They are traced from the symbolic frame, never run natively: after a break the real
frame also holds minidynamo's temporaries (`___graph_out`, `___temp_0`), and a resume
function's stack arguments (`___stack0`). torch.compile 2.13 lists its own
(`__is_tracing_resume_prologue`, ...); eager decides.
"""

from __future__ import annotations

import torch

from minidynamo.testing import Call, compare_with_eager, run_eager, run_minidynamo


def names_after_a_break(x):
    scale = 2
    print("", end="")  # a graph break: the rest runs in a resume function
    return x * scale, sorted(locals()), dir(), sorted(vars())


def test_locals_after_a_break_are_the_users():
    calls = [Call((torch.ones(2),))]
    eager = run_eager(names_after_a_break, calls)
    mine = run_minidynamo(names_after_a_break, calls)
    assert mine.graph_count == 1 and mine.graph_breaks  # the graph is the resume function's
    assert not compare_with_eager(eager, mine)
    assert mine.outcomes[0].value[1] == ["scale", "x"]
