"""Exceptions, with-blocks and generators (chapter 8): minidynamo against torch.compile
and eager PyTorch on the exception corpus (`tests/corpus/exceptions.py`).

For every program: `compare_runs` finds no difference (graph count, ops per graph,
outputs, inputs after the call); an exception that reaches the caller has eager's type
*and* message; and `explain` agrees with torch's on the graph and break counts.
TorchDynamo runs each program once: `torch._dynamo.explain` counts the graphs that one
call after `reset()` hands its backend (and reports `graph_count - 1` breaks), which is
the graph count of the `torch.compile` run the values are compared with.
Cases tagged ``known_gap`` are expected to differ (strict xfail): see the corpus.
"""

from __future__ import annotations

import functools

import pytest
from corpus import exceptions
from corpus.references import calls_of

import minidynamo
from minidynamo.testing import (
    RunResult,
    compare_runs,
    compare_with_eager,
    run_eager,
    run_minidynamo,
    run_torch,
)

CASES = exceptions.CASES

pytestmark = pytest.mark.timeout(60)


def marks(case):
    if "known_gap" in case.tags:
        return [pytest.mark.xfail(reason="a known gap: see the corpus docstring", strict=True)]
    return []


PARAMS = [pytest.param(case, id=case.id, marks=marks(case)) for case in CASES]


@functools.cache
def reference(case) -> tuple[RunResult, RunResult]:
    """Eager's run and torch.compile's (an exception is an outcome: no explain here);
    torch.compile's graph count is also what `torch._dynamo.explain` would count."""
    return run_eager(case.fn, calls_of(case)), run_torch(case.fn, calls_of(case))


def raises(case) -> bool:
    return reference(case)[0].outcomes[0].error is not None


def test_the_corpus_is_large_enough():
    assert len(CASES.cases) >= 100


@pytest.mark.parametrize("case", PARAMS)
def test_same_graphs_values_and_exceptions_as_torch(case):
    eager, compiled = reference(case)
    candidate = run_minidynamo(case.fn, calls_of(case), strict=True)
    if "beyond_torch" in case.tags:  # torch runs it eagerly: compare with eager only
        assert compiled.graph_count == 0 and candidate.graph_count > 0
        assert not compare_with_eager(eager, candidate)
    elif "torch_wrong" in case.tags:  # torch's answer differs from eager's: eager decides
        assert compare_with_eager(eager, compiled), "torch.compile 2.13 is right here now"
        assert not compare_with_eager(eager, candidate)
    else:
        comparison = compare_runs(eager, compiled, candidate, case.id)
        assert comparison.ok, comparison.report()
    for expected, actual in zip(eager.outcomes, candidate.outcomes):
        if expected.error is not None:
            assert (type(actual.error), str(actual.error)) == (type(expected.error), str(expected.error))


@pytest.mark.parametrize("case", [param for param in PARAMS if not raises(param.values[0])
                                  and not {"beyond_torch", "torch_wrong"} & param.values[0].tags])
def test_explain_counts_match_torch(case):
    theirs = reference(case)[1].graph_count   # explain's graph_count; its breaks: one fewer
    minidynamo.reset()
    with minidynamo.config.patch(strict=True):
        mine = minidynamo.explain(case.fn)(*case.args, **case.kwargs)
    assert (mine.graph_count, mine.graph_break_count) == (theirs, theirs - 1)
