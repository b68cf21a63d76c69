"""Functions made by another module's code while tracing, and torch's function transforms.

A function made while tracing (MAKE_FUNCTION in an inlined function) that is still live
at a graph break is rebuilt by the transformed code, in the user's frame. It must keep
the globals of the module that made it: rebuilt with the frame's globals, the factory's
`helper` was looked up in the user's module and the wrong one ran (a wrong result, found
by probing; `torch.vmap`'s `wrapped` raised NameError the same way).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

import factories_elsewhere
import minidynamo
from minidynamo.testing import assert_same_value


def helper(x):  # not the helper the factories' functions call
    return x - 1


def made_elsewhere_then_print(x):
    scaled = factories_elsewhere.make_scaled(2)
    print("a break")
    return scaled(x)


def lambda_made_elsewhere_then_break(x):
    function = factories_elsewhere.make_lambda()
    torch._dynamo.graph_break()
    return function(x), function.__module__


@pytest.mark.parametrize("fn", [made_elsewhere_then_print, lambda_made_elsewhere_then_break])
def test_a_function_made_in_another_module_keeps_its_globals_across_a_break(fn):
    x = torch.ones(2)
    expected = fn(x)
    torch_graphs = []
    torch._dynamo.reset()
    theirs = torch.compile(fn, backend=lambda gm, inputs: torch_graphs.append(gm) or gm)(x)
    assert_same_value(expected, theirs)
    assert_same_value(expected, minidynamo.compile(fn)(x))
    assert minidynamo.explain(fn)(x).graph_count == len(torch_graphs) == 1


def vmapped_sum(x):
    return torch.vmap(lambda row: row.sum() * 2)(x)


def vmapped_dot_after_an_op(x):
    return torch.vmap(torch.dot)(x * 2, x) + 1


def gradient_of_a_cube(x):
    return torch.func.grad(lambda v: (v ** 3).sum())(x)


def hessian_of_a_cube(x):
    return torch.func.hessian(lambda v: (v ** 3).sum())(x)


def jacobian_forward(x):
    return torch.func.jacfwd(torch.sin)(x)


@pytest.mark.parametrize("fn", [vmapped_sum, vmapped_dot_after_an_op, gradient_of_a_cube,
                                hessian_of_a_cube, jacobian_forward])
def test_function_transforms_equal_eager(fn):
    """torch.compile records vmap's and grad's levels in its graph; so does minidynamo
    (`variables/functorch.py`): one graph, no break, the same number of nodes, eager's
    values, and the transform state left as it was found."""
    x = torch.randn(2, 3) if fn in (vmapped_sum, vmapped_dot_after_an_op) else torch.randn(3)
    expected = fn(x)
    assert_same_value(expected, minidynamo.compile(fn)(x))
    ours = minidynamo.explain(fn)(x)
    torch._dynamo.reset()
    theirs = torch._dynamo.explain(fn)(x)
    assert ours.break_reasons == [] and ours.graph_count == theirs.graph_count == 1
    assert len(ours.graphs[0].graph.nodes) == len(theirs.graphs[0].graph.nodes)
    assert torch._C._functorch.get_dynamic_layer_stack_depth() == 0
    assert torch._C._functorch.peek_interpreter_stack() is None


def test_a_trace_that_fails_inside_vmap_leaves_no_level_entered():
    """A graph break inside the vmapped function: the call runs natively (as on
    torch.compile: the graph before and the one after), and the level the trace entered
    is left when tracing stops."""
    def body(row):
        print("row")  # a graph break inside the transform
        return row * 2

    def fn(x):
        return torch.vmap(body)(x.sin()) + 1

    x = torch.randn(2, 3)
    assert_same_value(fn(x), minidynamo.compile(fn)(x))
    assert minidynamo.explain(fn)(x).graph_count == 2
    assert torch._C._functorch.get_dynamic_layer_stack_depth() == 0
    assert torch._C._functorch.get_inplace_requires_grad_allowed() is False
