"""Tensor programs: minidynamo must capture the graph torch.compile captures.

For every program of ``tests/corpus/tensor_programs.py`` (one graph, no break on
TorchDynamo), a second call on copies of the same arguments must reuse the cache
entry, and ``compare_runs`` must find no difference: same graph count (one),
same placeholders (their names encode the sources), same normalised ops and
arguments, outputs equal to eager's, inputs after the call equal to eager's (side
effects applied exactly once). minidynamo runs in strict mode.

The five programs tagged ``inductor`` also run with ``backend="inductor"`` on both
compilers, whose values must match eager's.
"""

from __future__ import annotations

import dataclasses

import pytest
from corpus import tensor_programs
from corpus.references import calls_of, tensor_reference

from minidynamo.testing import compare_runs, compare_with_torch, run_minidynamo

CASES = tensor_programs.CASES

# A tracer bug may loop forever: fail the one test instead of hanging the run.
pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("case", CASES.cases, ids=lambda case: case.id)
def test_same_graph_as_torch(case):
    reference = tensor_reference(case)
    assert reference.torch.graph_count == 1, "corpus error: torch.compile did not capture one graph"

    # The call is made twice, on fresh copies of the arguments: the second must hit the
    # cache (a guard that fails on inputs like the ones it was made from recompiles on
    # every call), unless torch.compile traces it again too (tag `traced_again`,
    # checked by the sanity test). The first call is compared.
    twice = run_minidynamo(case.fn, calls_of(case) * 2, strict=True)
    expected_graphs = 2 if "traced_again" in case.tags else 1
    assert twice.graph_count == expected_graphs, "the second call traced again"
    candidate = dataclasses.replace(twice, outcomes=twice.outcomes[:1],
                                    inputs_after=twice.inputs_after[:1], graphs=twice.graphs[:1],
                                    example_inputs=twice.example_inputs[:1])

    comparison = compare_runs(reference.eager, reference.torch, candidate, case.id)
    assert comparison.ok, comparison.report()


@pytest.mark.timeout(300)  # inductor compiles C++ on a cold cache
@pytest.mark.parametrize("case", CASES.with_tag("inductor"), ids=lambda case: case.id)
def test_inductor_backend_matches_eager(case):
    comparison = compare_with_torch(case.fn, *case.args, backend="inductor", **case.kwargs)
    assert comparison.ok, comparison.report()
