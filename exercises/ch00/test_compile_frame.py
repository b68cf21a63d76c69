"""Graded tests for ch00.3, `compile_frame`: the wrapper a natively called function runs as.

Without PEP 523, minidynamo sees a frame only if the call goes through its wrapper.
After a graph break, the resume function and a callee that runs natively (a function
or a bound method) must each be compiled as a frame of its own, so the graphs are
torch.compile's, one for one. Called directly, the wrapper compiles with its backend
and `fullgraph`, keeps the function's name, and leaves alone what is not a user's
Python function.
"""

from __future__ import annotations

import gc
import textwrap
import types
import weakref

import pytest
import torch

import minidynamo
from minidynamo import cache, convert_frame
from minidynamo.testing import RecordingBackend, assert_same_as_torch, graph_signature, strict_mode

from . import samples


@pytest.mark.task("ch00.3")
@pytest.mark.parametrize("program", [samples.breaks, samples.calls_helper, samples.calls_method,
                                     samples.calls_module],
                         ids=lambda program: program.__name__)
def test_frames_run_natively_are_compiled_like_torch(program):
    x, = samples.tensors((4,))
    comparison = assert_same_as_torch(program, x)
    assert comparison.torch.graph_count > 1     # the natively run frames made graphs


def torch_graphs(fn, *args, dynamic=None):
    torch._dynamo.reset()
    recorder = RecordingBackend()
    torch.compile(fn, backend=recorder, dynamic=dynamic)(*args)
    return [graph_signature(gm) for gm in recorder.graphs]


def minidynamo_graphs(function, *args, fullgraph=False, dynamic=None):
    """Call `compile_frame(function)` in strict mode; its value and its graphs."""
    minidynamo.reset()
    recorder = RecordingBackend()
    with strict_mode():
        compiled = convert_frame.compile_frame(function, backend=recorder, fullgraph=fullgraph,
                                               dynamic=dynamic)
        value = compiled(*args)
    return compiled, value, [graph_signature(gm) for gm in recorder.graphs]


@pytest.mark.task("ch00.3")
def test_the_wrapper_compiles_with_its_dynamic_option():
    """`dynamic=True` (chapter 9) reaches the frame: its sizes are symbols from the start,
    for a function and for a bound method alike."""
    x, y = samples.tensors((3,), (3,))
    _, value, graphs = minidynamo_graphs(samples.helper, x, dynamic=True)
    torch.testing.assert_close(value, samples.helper(x))
    assert graphs == torch_graphs(samples.helper, x, dynamic=True) != \
        torch_graphs(samples.helper, x)
    bound = samples.Scaler(y).scale  # a tensor factor: a graph input too
    _, value, graphs = minidynamo_graphs(bound, x, dynamic=True)
    torch.testing.assert_close(value, samples.Scaler(y).scale(x))
    assert graphs == torch_graphs(bound, x, dynamic=True) != torch_graphs(bound, x)


@pytest.mark.task("ch00.3")
def test_the_wrapper_compiles_with_its_backend():
    x, y = samples.tensors((3,), (3,))
    compiled, value, graphs = minidynamo_graphs(samples.one_graph, x, y)
    torch.testing.assert_close(value, samples.one_graph(x, y))
    assert graphs == torch_graphs(samples.one_graph, x, y)
    assert compiled.__wrapped__ is samples.one_graph
    assert (compiled.__name__, compiled.__doc__) == ("one_graph", samples.one_graph.__doc__)


@pytest.mark.task("ch00.3")
def test_a_bound_method_stays_bound_and_is_compiled():
    x, = samples.tensors((3,))
    compiled, value, graphs = minidynamo_graphs(samples.SCALER.scale, x)
    assert isinstance(compiled, types.MethodType) and compiled.__self__ is samples.SCALER
    assert compiled.__func__.__wrapped__ is samples.Scaler.scale
    torch.testing.assert_close(value, samples.SCALER.scale(x))
    assert graphs == torch_graphs(samples.SCALER.scale, x)


class Owner:
    """What a frame is compiled for (a user's function or module): weakly referenced."""


@pytest.mark.task("ch00.3")
@pytest.mark.parametrize("program", [samples.one_graph, samples.SCALER.scale],
                         ids=["function", "method"])
def test_the_entries_go_when_their_owner_goes(program):
    """`owner` reaches the frame: its entry is released when what it was compiled for
    dies (a resume function's entries go with the user's function), not before."""
    minidynamo.reset()
    owner, recorder = Owner(), RecordingBackend()  # (the backend lives on)
    compiled = convert_frame.compile_frame(program, backend=recorder, fullgraph=False,
                                           owner=weakref.ref(owner))
    args = samples.tensors((3,), (3,)) if program is samples.one_graph else samples.tensors((3,))
    compiled(*args)
    compiled(*args)
    entries = [entry for frames in cache.caches.values() for entry in frames.entries]
    assert len(entries) == len(recorder.graphs) >= 1  # (the method breaks: and its resume)
    del owner, entries
    gc.collect()
    assert [frames.entries for frames in cache.caches.values() if frames.entries] == []


@pytest.mark.task("ch00.3")
@pytest.mark.parametrize("program", [samples.breaks, samples.SCALER.scale],
                         ids=["function", "method"])
def test_fullgraph_is_passed_on(program):
    x, = samples.tensors((3,))
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(program, backend="eager", fullgraph=True)(x)
    with pytest.raises(minidynamo.Unsupported):
        minidynamo_graphs(program, x, fullgraph=True)
    _, value, graphs = minidynamo_graphs(program, x, fullgraph=False)
    torch.testing.assert_close(value, program(x))
    assert graphs == torch_graphs(program, x)


@pytest.mark.task("ch00.3")
@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_a_module_has_its_forward_compiled_with_the_wrappers_options(dynamic, capsys):
    """nn.Module.__call__ is torch's code; without hooks it runs `forward`, the frame
    that PEP 523 gives TorchDynamo: the wrapper compiles that forward."""
    x, = samples.tensors((3,))
    _, value, graphs = minidynamo_graphs(samples.PRINTING, x, dynamic=dynamic)
    torch.testing.assert_close(value, samples.PRINTING(x))
    assert graphs == torch_graphs(samples.PRINTING, x, dynamic=dynamic) and len(graphs) == 2
    with pytest.raises(minidynamo.Unsupported):
        minidynamo_graphs(samples.PRINTING, x, fullgraph=True)


@pytest.mark.task("ch00.3")
def test_a_module_with_a_hook_is_called_as_it_is():
    calls = []
    module = samples.Printing()
    module.register_forward_hook(lambda mod, args, out: calls.append(len(args)) or out * 10)
    x, = samples.tensors((3,))
    compiled = convert_frame.compile_frame(module, backend=RecordingBackend(), fullgraph=False)
    torch.testing.assert_close(compiled(x), module(x))
    assert calls == [1, 1]  # once for each call: the hook ran, and ran once


NOT_COMPILED = {
    "builtin": len,                                    # no bytecode
    "torch_c_function": torch.sin,
    "torch_python_function": torch.nn.functional.relu,  # torch's code: a skipped module
    "stdlib_function": textwrap.dedent,                # the standard library: skipped
    "minidynamo_function": convert_frame.frame_locals,  # minidynamo's own code: skipped
    "class": samples.Scaler,
    "object": samples.SCALER,
}


@pytest.mark.task("ch00.3")
@pytest.mark.parametrize("function", NOT_COMPILED.values(), ids=NOT_COMPILED.keys())
def test_what_is_not_a_users_function_is_returned_as_it_is(function):
    assert not isinstance(function, types.FunctionType) or convert_frame.is_skipped_frame(function)
    compiled = convert_frame.compile_frame(function, backend=RecordingBackend(), fullgraph=False)
    assert compiled is function


@pytest.mark.task("ch00.3")
def test_a_method_of_skipped_code_is_left_alone():
    method = torch.nn.Linear(2, 2).forward
    wrapped = convert_frame.compile_frame(method, backend=RecordingBackend(), fullgraph=False)
    assert wrapped == method and wrapped.__func__ is method.__func__
