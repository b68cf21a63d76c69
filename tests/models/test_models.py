"""The model suite against torch.compile: real architectures, tiny and offline.

For every model of `zoo.CASES` (transformers models built from configs, torch.nn
models), in eval mode under `torch.no_grad()`, two calls with the same shapes and new
values are run three ways: eagerly, under torch.compile and under minidynamo (strict
mode: an internal error fails the test). minidynamo must return what eager returns,
capture as many graphs as torch.compile, with the same ATen operators in each graph
(both graphs re-traced with `make_fx`), break where torch.compile breaks, and reuse
its cache entry on the second call (no graph is captured twice).
"""

from __future__ import annotations

import collections
import functools
import warnings
from pathlib import Path

import pytest
import torch
from torch._dynamo.utils import counters
from torch.fx.experimental.proxy_tensor import make_fx

from minidynamo.testing import Call, compare_with_eager, run_eager, run_minidynamo, run_torch

from .zoo import CASES, ModelCase

BY_NAME = {case.name: case for case in CASES}


def cases(check_known_gaps: bool = True) -> list:
    """Every model; a known gap is a strict xfail of the tests it fails."""
    return [pytest.param(case.name, marks=pytest.mark.xfail(reason=case.known_gap, strict=True))
            if case.known_gap and check_known_gaps else case.name for case in CASES]


@functools.cache
def runs(name: str) -> dict:
    """Eager's, torch.compile's and minidynamo's runs of one model (computed once)."""
    case: ModelCase = BY_NAME[name]
    model = case.build()
    calls = [Call((), case.inputs(1)), Call((), case.inputs(2))]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = run_eager(model, calls)
        counters.clear()
        reference = run_torch(model, calls)
        torch_breaks = sum(counters["graph_break"].values())
        first_call = run_minidynamo(model, calls[:1])
        candidate = run_minidynamo(model, calls)
    return {"eager": eager, "torch": reference, "minidynamo": candidate,
            "first_call": first_call, "torch_breaks": torch_breaks}


def aten_ops(gm: torch.fx.GraphModule, example_inputs: list) -> list[str]:
    """The ATen operators the graph runs, in order: `make_fx` re-traces it on zeros of
    the example inputs' shapes (the operators do not depend on the values)."""
    inputs = [torch.zeros(x.shape, dtype=x.dtype) if isinstance(x, torch.Tensor) else x
              for x in example_inputs]
    with torch.no_grad():
        traced = make_fx(gm, tracing_mode="fake")(*inputs)
    return [str(node.target) for node in traced.graph.nodes if node.op == "call_function"]


@pytest.mark.parametrize("name", cases(check_known_gaps=False))
def test_outputs_equal_eager(name):
    result = runs(name)
    assert result["minidynamo"].error is None, result["minidynamo"].error
    differences = compare_with_eager(result["eager"], result["minidynamo"])
    assert not differences, differences[0]


@pytest.mark.parametrize("name", cases())
def test_graph_count_equals_torch_compile(name):
    result = runs(name)
    assert result["minidynamo"].graph_count == result["torch"].graph_count


@pytest.mark.parametrize("name", cases(check_known_gaps=False))
def test_same_aten_ops_in_every_graph(name):
    result = runs(name)
    ours, theirs = result["minidynamo"], result["torch"]
    for index, (mine, reference) in enumerate(zip(ours.graphs, theirs.graphs)):
        expected = aten_ops(reference, theirs.example_inputs[index])
        actual = aten_ops(mine, ours.example_inputs[index])
        assert actual == expected, (
            f"graph {index}: only torch.compile's has "
            f"{collections.Counter(expected) - collections.Counter(actual)}, only ours has "
            f"{collections.Counter(actual) - collections.Counter(expected)}")


@pytest.mark.parametrize("name", cases())
def test_breaks_where_torch_compile_breaks(name):
    result = runs(name)
    assert len(result["minidynamo"].graph_breaks) == result["torch_breaks"], \
        result["minidynamo"].graph_breaks


@pytest.mark.parametrize("name", cases(check_known_gaps=False))
def test_second_call_with_new_values_reuses_the_cache(name):
    result = runs(name)
    assert result["minidynamo"].graph_count == result["first_call"].graph_count


def fx_op_count(gm: torch.fx.GraphModule) -> int:
    return sum(1 for node in gm.graph.nodes if node.op.startswith("call"))


def test_the_docs_page_shows_these_graphs_and_ops():
    """chapters/model-suite.md (written by benchmarks/bench_models.py --markdown) shows
    the graph and FX operation counts that this suite measures."""
    page = (Path(__file__).resolve().parents[2] / "chapters" / "model-suite.md").read_text()
    rows = {cells[0]: cells for cells in (
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in page.splitlines() if line.startswith("| ") and "---" not in line)}
    shown = [name for name in BY_NAME if not BY_NAME[name].known_gap]
    assert sorted(name for name in rows if name in BY_NAME) == sorted(shown)
    for name in shown:
        result = runs(name)
        first_call_graphs = result["first_call"].graphs
        theirs = result["torch"].graphs[:len(first_call_graphs)]
        assert rows[name][1] == f"{len(theirs)} / {len(first_call_graphs)}", name
        assert rows[name][2] == (f"{sum(map(fx_op_count, theirs))} / "
                                 f"{sum(map(fx_op_count, first_call_graphs))}"), name
