"""Is the corpus right? Checked on TorchDynamo and CPython only (no minidynamo).

* every pure-Python case traces on TorchDynamo with ``fullgraph=True``, captures no
  graph, reports no graph break, and gives CPython's result and side effects;
* every tensor case is one graph with no graph break (``torch._dynamo.explain``)
  and torch.compile's values and side effects equal eager's.

These pass before minidynamo can compile anything, and keep the corpus from
drifting into programs that are not fair tests.

"No graph break" is checked as ``explain(...).break_reasons == []``: torch 2.13
computes ``graph_break_count`` as ``graph_count - 1``, which is -1 for a function
that captures no graph, so the count alone says nothing for the pure corpus.
"""

from __future__ import annotations

import pytest
from corpus import pure_python, tensor_programs
from corpus.references import calls_of, pure_reference, tensor_reference

from minidynamo.testing import compare_with_eager, run_torch

PURE = pure_python.CASES
TENSOR = tensor_programs.CASES


def test_corpus_sizes():
    assert len(PURE) >= 150
    assert len(TENSOR) >= 150
    assert len(TENSOR.with_tag("inductor")) == 5


def test_case_ids_are_unique():
    for corpus in (PURE, TENSOR):
        ids = [case.id for case in corpus]
        assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", PURE.cases, ids=lambda case: case.id)
def test_pure_case_captures_nothing_on_torch(case):
    reference = pure_reference(case)
    assert reference.eager.outcomes[0].error is None, "the corpus function itself raised"
    assert reference.break_reasons == []
    assert reference.explain_graph_count == 0
    assert reference.torch.error is None
    assert reference.torch.graph_count == 0
    assert compare_with_eager(reference.eager, reference.torch) == []


@pytest.mark.parametrize("case", TENSOR.cases, ids=lambda case: case.id)
def test_tensor_case_is_one_graph_on_torch(case):
    reference = tensor_reference(case)
    assert reference.eager.outcomes[0].error is None, "the corpus program itself raised"
    assert reference.break_reasons == []
    assert reference.explain_graph_count == 1
    assert reference.torch.graph_count == 1
    assert compare_with_eager(reference.eager, reference.torch) == []


@pytest.mark.parametrize("case", TENSOR.with_tag("traced_again"), ids=lambda case: case.id)
def test_traced_again_on_torch_too(case):
    """A case tagged `traced_again` is traced again by torch.compile on a second call
    with copies of its arguments (so minidynamo may do the same)."""
    reference = run_torch(case.fn, calls_of(case) * 2)
    assert reference.graph_count == 2
