"""Graph breaks (chapters 6-7): minidynamo against torch.compile on the break corpus.

For every program of ``tests/corpus/graph_breaks.py``:

* ``compare_runs`` finds no difference: same graph count (partial graphs and
  resume functions included), placeholders, ops per graph and their arguments;
  outputs equal to eager's; inputs after the call equal to eager's (side effects
  applied exactly once);
* ``explain`` agrees with ``torch._dynamo.explain``: graph count, break count, one
  reason per partial graph, of the same kind (a branch or a call), at the same
  user lines; every break reason names the user's file and line.

TorchDynamo runs each program once: what its ``explain`` reports is read off that
``torch.compile`` run exactly as ``explain`` computes it (``torch_explain``).

Cases tagged ``known_gap`` may differ (see the corpus docstring); never silently.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest
from corpus import graph_breaks
from corpus.references import calls_of

import minidynamo
from minidynamo.testing import (
    RunResult,
    compare_runs,
    compare_with_torch,
    run_eager,
    run_minidynamo,
    run_torch,
)

CASES = graph_breaks.CASES
CORPUS_FILE = graph_breaks.__file__

pytestmark = pytest.mark.timeout(60)


def marks(case):
    if "known_gap" in case.tags:
        return [pytest.mark.xfail(reason="a known gap: see the corpus docstring", strict=True)]
    return []


PARAMS = [pytest.param(case, id=case.id, marks=marks(case)) for case in CASES]


@functools.cache
def reference(case) -> tuple[RunResult, RunResult]:
    """Eager's run and torch.compile's (not ``corpus.references.tensor_reference``, which
    runs TorchDynamo a second time for its ``explain``)."""
    return run_eager(case.fn, calls_of(case)), run_torch(case.fn, calls_of(case))


def torch_explain(case) -> SimpleNamespace:
    """``torch._dynamo.explain``'s counts and reasons, from the reference run's graphs as
    explain (torch 2.13, ``_explain_graph_detail``) gets them: one call after ``reset()``,
    every graph its backend is given, the compile reason of each that a break ended."""
    graphs = reference(case)[1].graphs
    reasons = [gm.compile_subgraph_reason for gm in graphs if gm.compile_subgraph_reason.graph_break]
    return SimpleNamespace(graph_count=len(graphs), graph_break_count=len(graphs) - 1,
                           break_reasons=reasons)


def break_family(reason: str) -> str:
    """A branch on a tensor, a call that cannot be traced, or a fall back to the last
    statement boundary: the kinds both compilers report."""
    if "step_unsupported" in reason or "statement boundary" in reason:
        return "statement boundary"  # no resume function: the original bytecode goes on
    branch = ("generic_jump", "data-dependent branch", "Data-dependent branching")
    return "branch" if any(word in reason for word in branch) else "call"


@pytest.mark.parametrize("case", PARAMS)
def test_same_graphs_values_and_side_effects_as_torch(case):
    eager, compiled = reference(case)
    candidate = run_minidynamo(case.fn, calls_of(case), strict=True)
    comparison = compare_runs(eager, compiled, candidate, case.id)
    assert comparison.ok, comparison.report()


@pytest.mark.parametrize("case", PARAMS)
def test_explain_matches_torch(case):
    theirs = torch_explain(case)
    minidynamo.reset()
    with minidynamo.config.patch(strict=True):
        mine = minidynamo.explain(case.fn)(*case.args, **case.kwargs)
    assert (mine.graph_count, mine.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert len(mine.compiled_break_reasons) == len(theirs.break_reasons)
    for my_reason, their_reason in zip(mine.compiled_break_reasons, theirs.break_reasons):
        assert break_family(my_reason.reason) == break_family(their_reason.reason)
        my_lines = [frame.lineno for frame in reversed(my_reason.user_stack)]
        assert my_lines == [frame.lineno for frame in their_reason.user_stack]
    for reason in mine.break_reasons:
        assert reason.user_stack and reason.filename == CORPUS_FILE and reason.lineno


@pytest.mark.parametrize("case", [pytest.param(case, id=case.id) for case in CASES])
def test_show_code_decompiles_every_generated_code_object(case):
    """Transformed frames, resume functions, generated with-blocks and statement-boundary
    jumps into the original bytecode all stay readable as Python source (depyf)."""
    minidynamo.reset()
    explained = minidynamo.explain(case.fn)(*case.args, **case.kwargs)
    for code in explained.code_objects:
        assert f"def {code.co_name}(" in minidynamo.show_code(code)


@pytest.mark.timeout(300)  # inductor compiles C++ on a cold cache
@pytest.mark.parametrize("case", CASES.with_tag("inductor"), ids=lambda case: case.id)
def test_inductor_backend_matches_torch_across_breaks(case):
    """Partial graphs with grad-mode nodes, and a partial graph before a statement
    boundary, compile with inductor on both compilers and give eager's values."""
    comparison = compare_with_torch(case.fn, *case.args, backend="inductor", **case.kwargs)
    assert comparison.ok, comparison.report()
