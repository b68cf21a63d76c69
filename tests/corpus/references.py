"""The real thing, computed once per test session: eager and torch.compile runs of
every corpus case.

Both the corpus sanity tests (is the corpus right?) and the conformance tests (is
minidynamo right?) need eager's and TorchDynamo's results for the same case;
computing them once halves the time of a full run. Nothing here is written down by
hand: every reference comes from running CPython / PyTorch in this process.
"""

from __future__ import annotations

import copy
import dataclasses
import functools

import torch

from minidynamo.testing import Call, RunResult, run_eager, run_torch

from . import Case


@dataclasses.dataclass
class Reference:
    """Eager's run, torch.compile's run, and what ``torch._dynamo.explain`` says."""

    eager: RunResult
    torch: RunResult
    explain_graph_count: int
    break_reasons: list[str]


def calls_of(case: Case) -> list[Call]:
    return [Call(case.args, case.kwargs)]


@functools.cache
def pure_reference(case: Case) -> Reference:
    """CPython's run and TorchDynamo's (``fullgraph=True``: a break would raise)."""
    return _reference(case, fullgraph=True)


@functools.cache
def tensor_reference(case: Case) -> Reference:
    """Eager PyTorch's run and TorchDynamo's (no fullgraph, so the sanity test can
    report a break as a graph count instead of an exception)."""
    return _reference(case, fullgraph=False)


def _reference(case: Case, *, fullgraph: bool) -> Reference:
    eager = run_eager(case.fn, calls_of(case))
    reference = run_torch(case.fn, calls_of(case), fullgraph=fullgraph)
    graph_count, reasons = _explain(case)
    return Reference(eager, reference, graph_count, reasons)


def _explain(case: Case) -> tuple[int, list[str]]:
    """``torch._dynamo.explain`` on fresh copies: graph count and break reasons."""
    torch._dynamo.reset()
    fn = copy.deepcopy(case.fn) if isinstance(case.fn, torch.nn.Module) else case.fn
    args, kwargs = copy.deepcopy((case.args, case.kwargs))
    explanation = torch._dynamo.explain(fn)(*args, **kwargs)
    reasons = [str(getattr(reason, "reason", reason)) for reason in explanation.break_reasons]
    return explanation.graph_count, reasons
