"""Graded tests for GuardSet.tensor_match (ch09.1): the guard of a tensor input.

A graph is valid for every tensor with the properties it was traced for: its type, its
dispatch keys, dtype, device, requires_grad, sizes and strides (a dynamic size, one that
is a symbol in the graph, is left to the shape guards). Each
case changes exactly one of them between calls, or none: torch.compile
(`dynamic=False`) traces again exactly when one changed, and so must minidynamo with
your guard, which must also leave the values alone (a new tensor with other values is a
cache hit). When the guard fails, its reason is torch's, word for word.
"""

from __future__ import annotations

import pytest
import torch
from torch._C._dynamo.guards import TensorGuards

from minidynamo.guards import CHECK_GLOBALS, GuardSet
from minidynamo.sources import KEY_NAMES, LocalSource

from . import programs
from .programs import Call, check_reasons, check_recompiles, same_then, t


def inference_tensor(*shape):
    """A tensor made under inference mode: its dispatch keys lack autograd's."""
    with torch.inference_mode():
        return t(*shape)


def complex_tensor(*shape):
    return t(*shape).to(torch.complex64)


ONE_PROPERTY_CHANGED = {
    "size": (lambda: (t(3),), lambda: (t(4),)),
    "second_size": (lambda: (t(2, 3),), lambda: (t(2, 4),)),
    "rank": (lambda: (t(4),), lambda: (t(4, 1),)),
    "dtype": (lambda: (t(3),), lambda: (t(3, dtype=torch.float64),)),
    "integer_dtype": (lambda: (torch.arange(3),), lambda: (torch.arange(3, dtype=torch.int32),)),
    "stride": (lambda: (t(2, 3),), lambda: (t(3, 2).t(),)),
    "second_stride": (lambda: (t(2, 4)[:, :2],), lambda: (t(2, 4)[:, ::2],)),
    "large_stride": (lambda: (t(300, 2),), lambda: (t(2, 300).t(),)),
    "requires_grad": (lambda: (t(3),), lambda: (t(3, requires_grad=True),)),
    "parameter": (lambda: (t(3),), lambda: (torch.nn.Parameter(t(3)),)),
    "inference_tensor": (lambda: (t(3),), lambda: (inference_tensor(3),)),
    "conjugate": (lambda: (complex_tensor(3),), lambda: (complex_tensor(3).conj(),)),
}


@pytest.mark.task("ch09.1")
@pytest.mark.parametrize("first, changed", ONE_PROPERTY_CHANGED.values(), ids=ONE_PROPERTY_CHANGED)
def test_a_changed_tensor_property_recompiles_like_torch(first, changed):
    assert check_recompiles(programs.affine, same_then(first, changed)) == [1, 0, 1, 0, 0]


@pytest.mark.task("ch09.1")
def test_values_are_not_guarded():
    calls = [Call(lambda: (t(3),)), Call(lambda: (t(3) * 5,)), Call(lambda: (-t(3),))]
    assert check_recompiles(programs.affine, calls) == [1, 0, 0]


@pytest.mark.task("ch09.1")
def test_a_modules_parameters_are_guarded_as_tensors():
    net = programs.Net()

    def calls(change):
        return [Call(lambda: (t(2, 4), net)), Call(lambda: (t(2, 4), net)),
                Call(lambda: (t(2, 4), net), change), Call(lambda: (t(2, 4), net), change),
                Call(lambda: (t(2, 4), net))]

    assert check_recompiles(programs.run_net, calls(
        lambda: programs.requires_grad_off(net.fc.weight))) == [1, 0, 1, 0, 0]
    assert check_recompiles(programs.run_net, same_then(lambda: (t(2, 4), net),
                                                        lambda: (t(3, 4), net))) == [1, 0, 1, 0, 0]


@pytest.mark.task("ch09.1")
def test_a_failed_tensor_guard_gives_torchs_reason():
    calls = [Call(lambda: (t(3),)), Call(lambda: (t(4),)),
             Call(lambda: (t(4, dtype=torch.float64),)), Call(lambda: (torch.nn.Parameter(t(4)),))]
    reasons = check_reasons(programs.affine, calls)
    assert reasons[0] == "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4"


@pytest.mark.task("ch09.1")
def test_a_parameters_reason_names_its_source():
    net = programs.Net()
    calls = [Call(lambda: (t(2, 4), net)),
             Call(lambda: (t(2, 4), net), lambda: programs.requires_grad_off(net.fc.weight))]
    [reason] = check_reasons(programs.run_net, calls)
    assert reason.startswith("0/0: tensor 'net._modules['fc']._parameters['weight']' requires_grad")


@pytest.mark.task("ch09.1")
def test_a_dynamic_size_is_left_to_the_shape_guards():
    """After dimension 0 changed, automatic dynamic shapes make it a symbol: the next
    entry's tensor guard compares the rank and dimension 1 only (torch's `size=[None, 4]`),
    so any first size of 2 or more hits, and a changed second size fails with torch's
    reason, index 1."""
    calls = [Call(lambda: (t(3, 4),)), Call(lambda: (t(5, 4),)), Call(lambda: (t(9, 4),)),
             Call(lambda: (t(9, 5),))]
    reasons = check_reasons(programs.affine, calls, dynamic=None)
    assert reasons[:2] == ["0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5",
                           "0/1: tensor 'x' size mismatch at index 1. expected 4, actual 5"]
    assert programs.minidynamo_run(programs.affine, calls, dynamic=None)[0] == [1, 1, 0, 1]


SAME_PROPERTIES = {
    "values": (lambda: t(3), lambda: -t(3)),
    "matrix": (lambda: t(2, 3), lambda: t(2, 3) * 2),
    "parameter": (lambda: torch.nn.Parameter(t(3)), lambda: torch.nn.Parameter(t(3) + 1)),
    "view": (lambda: t(2, 4)[:, :2], lambda: t(2, 4)[:, 2:]),
}
PARAMETER_THEN_TENSOR = {"parameter_then_tensor": (lambda: torch.nn.Parameter(t(3)), lambda: t(3))}


@pytest.mark.task("ch09.1")
@pytest.mark.parametrize("first, then", [*SAME_PROPERTIES.values(), *PARAMETER_THEN_TENSOR.values(),
                                         *((lambda f=f: f()[0], lambda c=c: c()[0])
                                           for f, c in ONE_PROPERTY_CHANGED.values())],
                         ids=[*SAME_PROPERTIES, *PARAMETER_THEN_TENSOR, *ONE_PROPERTY_CHANGED])
def test_the_guards_line_holds_exactly_where_torchs_tensor_check_holds(first, then):
    """The check function runs torch's C++ TensorGuards for a tensor; your line of Python
    is the guard's readable form, which finds the failing guard and its reason. Evaluated
    on its own, it must hold for the tensor it was made from and agree with TensorGuards
    on another one."""
    x = first()
    guards = GuardSet()
    guards.add("TENSOR_MATCH", LocalSource("x"), x)
    [guard] = [guard for guard in guards if guard.kind == "TENSOR_MATCH"]
    holds = eval(f"lambda L: {guard.code}", {**CHECK_GLOBALS, **KEY_NAMES, **guard.refs})
    assert holds({"x": x}) is True, f"{guard.code} is False for the tensor it was made from"
    y = then()
    expected = TensorGuards(x, dynamic_dims_sizes=[list(x.size())],
                            dynamic_dims_strides=[list(x.stride())]).check(y)
    assert holds({"x": y}) is expected
