"""Pure-Python programs: minidynamo must behave exactly like CPython.

For every function of ``tests/corpus/pure_python.py``, minidynamo (strict mode,
``fullgraph=True``, so neither an internal error nor a graph break can hide behind
an eager fallback) must return CPython's result, leave the arguments as CPython
leaves them, and hand no graph to the backend. TorchDynamo's run of the same
function (also graph-free) is asserted too, so a failure here is never the corpus's
fault. "No graph" must not come from not tracing at all: the run's
``trace_bytecode`` log must show the symbolic interpreter stepping through the code.
"""

from __future__ import annotations

import pytest
from corpus import pure_python
from corpus.references import calls_of, pure_reference

from minidynamo.testing import CompileCounter, capture_trace, compare_with_eager, run_minidynamo

# A tracer bug may loop forever: fail the one test instead of hanging the run.
pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("case", pure_python.CASES.cases, ids=lambda case: case.id)
def test_same_as_cpython(case):
    reference = pure_reference(case)
    assert reference.torch.graph_count == 0, "corpus error: torch.compile captured a graph"

    counter = CompileCounter()
    with capture_trace("minidynamo") as trace:
        run = run_minidynamo(case.fn, calls_of(case), fullgraph=True, backend=counter, strict=True)

    differences = compare_with_eager(reference.eager, run)
    assert not differences, "\n".join(str(difference) for difference in differences)
    assert counter.frame_count == 0, f"minidynamo captured {counter.frame_count} graph(s)"
    assert trace, "minidynamo ran the function without tracing it (empty trace_bytecode log)"
