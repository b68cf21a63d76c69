"""Graded tests for tensor_difference (ch09.2): why a tensor does not match its guard.

`affine(x)` is traced for one tensor and called with another. Its cache entry's tensor
guard fails, and the recompile reason is the first difference your `tensor_difference`
finds, which must be torch's reason word for word (`torch._dynamo.utils.guard_failures`):
its C++ TensorGuards compare dispatch keys, dtype, device, requires_grad, rank, sizes and
strides, in that order, and report the first property that differs, at the first index.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from minidynamo import guards

from . import programs
from .programs import Call, check_reasons, t


def inference_tensor(*shape, **kwargs):
    """A tensor made under inference mode: its dispatch keys lack autograd's."""
    with torch.inference_mode():
        return t(*shape, **kwargs)


def pair(first, second):
    return [Call(lambda: (first(),)), Call(lambda: (second(),))]


ONE_DIFFERENCE = {
    "size_at_0": (lambda: t(3), lambda: t(4)),
    "size_at_1": (lambda: t(2, 3), lambda: t(2, 4)),
    "stride_at_0": (lambda: t(2, 3), lambda: t(3, 2).t()),
    "stride_at_1": (lambda: t(2, 4)[:, :2], lambda: t(2, 4)[:, ::2]),
    "large_stride": (lambda: t(300, 2), lambda: t(2, 300).t()),
    "size_at_299": (lambda: torch.ones([1] * 299 + [2]), lambda: torch.ones([1] * 299 + [3])),
    "rank": (lambda: t(4), lambda: t(4, 1)),
    "double": (lambda: t(3), lambda: t(3, dtype=torch.float64)),
    "long": (lambda: t(3), lambda: torch.arange(3)),
    "half": (lambda: t(3), lambda: t(3, dtype=torch.float16)),
    "bool": (lambda: t(3), lambda: t(3) > 1),
    "complex": (lambda: t(3), lambda: t(3).to(torch.complex64)),
    "requires_grad_on": (lambda: t(3), lambda: t(3, requires_grad=True)),
    "requires_grad_off": (lambda: t(3, requires_grad=True), lambda: t(3)),
    "inference_tensor": (lambda: t(3), lambda: inference_tensor(3)),
    "conjugate": (lambda: t(3).to(torch.complex64), lambda: t(3).to(torch.complex64).conj()),
}


@pytest.mark.task("ch09.2")
@pytest.mark.parametrize("first, second", ONE_DIFFERENCE.values(), ids=ONE_DIFFERENCE)
def test_one_difference_is_reported_as_torch_reports_it(first, second):
    [reason] = check_reasons(programs.affine, pair(first, second))
    assert reason.startswith("0/0: tensor 'x' ")


SEVERAL_DIFFERENCES = {
    "dtype_before_size": (lambda: t(3), lambda: t(4, dtype=torch.float64)),
    "keys_before_dtype": (lambda: t(3), lambda: inference_tensor(3, dtype=torch.float64)),
    "requires_grad_before_size": (lambda: t(3), lambda: t(4, requires_grad=True)),
    "rank_before_size": (lambda: t(4), lambda: t(3, 1)),
    "size_before_stride": (lambda: t(2, 3), lambda: t(4, 2).t()),
    "first_size_first": (lambda: t(2, 3), lambda: t(5, 4)),
    "dtype_before_requires_grad": (lambda: t(3), lambda: t(3, dtype=torch.float64, requires_grad=True)),
}


@pytest.mark.task("ch09.2")
@pytest.mark.parametrize("first, second", SEVERAL_DIFFERENCES.values(), ids=SEVERAL_DIFFERENCES)
def test_the_first_difference_in_torchs_order_is_reported(first, second):
    check_reasons(programs.affine, pair(first, second))


@pytest.mark.task("ch09.2")
def test_a_parameters_difference_ends_with_torchs_hint():
    calls = pair(lambda: torch.nn.Parameter(t(3)), lambda: torch.nn.Parameter(t(3).double()))
    [reason] = check_reasons(programs.affine, calls)
    assert "dtype mismatch. expected Float, actual Double. Guard failed on a parameter" in reason


@pytest.mark.task("ch09.2")
def test_a_tensor_on_another_device_of_the_same_type():
    """cuda:0 and cuda:1 have the same dispatch keys; only the device index differs. No
    test machine need have two GPUs, so these facts are written down rather than traced;
    the words are those of torch's TensorGuards (`torch/csrc/dynamo/guards.cpp`)."""
    facts = guards.TensorFacts.of(t(3))

    def on(index):
        return dataclasses.replace(facts, device=torch.device("cuda", index))

    assert guards.tensor_difference(on(0), on(1)) == \
        "Tensor device index mismatch. Expected device index to be 0, actual 1"
    assert guards.tensor_difference(on(1), on(1)) is None
    assert guards.tensor_difference(on(0), dataclasses.replace(on(1), dtype=torch.float64)) == \
        "dtype mismatch. expected Float, actual Double"
    assert guards.tensor_difference(on(0), dataclasses.replace(on(1), requires_grad=True)) == \
        "Tensor device index mismatch. Expected device index to be 0, actual 1"
