"""An `assert` on a tensor (chapter 8), compared with torch.compile.

The condition's data is not known while tracing, so torch.compile does not break on
the assert's jump: it records `torch._assert_async(condition, message)` in the graph
(`config.rewrite_assert_with_torch_assert`) and traces on past the `raise`. A failing
assert then raises when the graph runs, as torch's RuntimeError, where eager Python
raises AssertionError: both compilers differ from eager in the same way, so the
exception is compared with torch.compile's, and eager's is checked to be the other one.

PYTEST_DONT_REWRITE: the programs' asserts must stay Python's own bytecode.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo import config


def no_message(x):
    assert x.sum() > 0
    return x + 1


def with_message(x):
    y = x * 2
    assert (y > 0).all(), "not positive"
    return y


def raised(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return error
    return None


@pytest.mark.parametrize("fn", [no_message, with_message], ids=lambda fn: fn.__name__)
def test_a_failing_tensor_assert_raises_what_torch_compile_raises(fn):
    x = -torch.ones(3)
    torch._dynamo.reset()
    theirs = raised(lambda: torch.compile(fn, backend="eager")(x))
    ours = raised(lambda: minidynamo.compile(fn, backend="eager")(x))
    assert isinstance(theirs, RuntimeError), theirs
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))
    assert isinstance(raised(lambda: fn(x)), AssertionError)  # eager's, unlike both


@pytest.mark.parametrize("fn", [no_message, with_message], ids=lambda fn: fn.__name__)
def test_a_passing_tensor_assert_is_one_graph_with_torchs_node(fn):
    x = torch.ones(3)
    torch._dynamo.reset()
    theirs = torch._dynamo.explain(fn)(x)
    ours = minidynamo.explain(fn)(x)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, 0) == (1, 0)
    asserts = [[node.args[1] for node in gm.graph.nodes if node.target is torch._assert_async]
               for gm in (ours.graphs[0], theirs.graphs[0])]
    assert asserts[0] == asserts[1] and len(asserts[0]) == 1
    torch.testing.assert_close(minidynamo.compile(fn, backend="eager")(x), fn(x))


def test_without_the_rewrite_the_assert_breaks_as_in_torch():
    x = torch.ones(3)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(rewrite_assert_with_torch_assert=False):
        theirs = torch._dynamo.explain(with_message)(x)
    with config.patch(rewrite_assert_with_torch_assert=False):
        ours = minidynamo.explain(with_message)(x)
    assert (ours.graph_count, ours.graph_break_count) == \
        (theirs.graph_count, theirs.graph_break_count)
    assert ours.break_reasons[0].kind.title == "data-dependent branch"
