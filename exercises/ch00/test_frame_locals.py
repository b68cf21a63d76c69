"""Graded tests for ch00.1, `frame_locals`: a call's arguments bound to the frame's locals.

The expected locals are CPython's own: a tracing hook reads `frame.f_locals` at the
frame's "call" event, before its first instruction runs, for the same call. A wrong
call must raise TypeError as the call itself does, and a compiled program with every
kind of parameter must run as under torch.compile.
"""

from __future__ import annotations

import sys

import pytest
import torch

from minidynamo import convert_frame
from minidynamo.testing import Call, assert_same_as_torch

from . import samples

CALLS = [
    (samples.positional, (1, 2), {}),                          # c from __defaults__
    (samples.positional, (1,), {"b": 5}),                      # a keyword argument
    (samples.positional, (), {"c": 9, "a": 1, "b": 2}),       # keywords only, any order
    (samples.keyword_only, (1,), {"shift": 3}),                # scale from __kwdefaults__
    (samples.keyword_only, (1,), {"scale": 0.5, "shift": 3}),
    (samples.star_args, (1,), {}),                             # rest == (), options == {}
    (samples.star_args, (1, 2, 3), {"flag": True, "x": 4, "y": 5}),
    (samples.positional_only, (1,), {}),
    (samples.positional_only, (1, 2, 3), {"d": 0}),
    (samples.captured, (1,), {}),                              # parameters held in cells
    (samples.wrapper, (1, 2), {"c": 0}),                       # the wrapper's own frame
]


def call_id(case):
    fn, args, kwargs = case
    return f"{fn.__name__}{args}{kwargs}"


def entry_locals(fn, args, kwargs):
    """CPython's locals for `fn(*args, **kwargs)`, read as its frame starts."""
    seen = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is fn.__code__ and not seen:
            seen.append(dict(frame.f_locals))

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args, **kwargs)
    finally:
        sys.settrace(previous)
    return seen[0]


@pytest.mark.task("ch00.1")
@pytest.mark.parametrize("case", CALLS, ids=call_id)
def test_the_locals_are_cpythons(case):
    fn, args, kwargs = case
    expected = entry_locals(fn, args, kwargs)
    got = convert_frame.frame_locals(fn, args, dict(kwargs))
    assert type(got) is dict
    assert got == expected, f"{call_id(case)}: CPython's frame starts with {expected}"


@pytest.mark.task("ch00.1")
def test_the_values_are_the_arguments_themselves():
    first, second = samples.tensors((2,), (2,))
    expected = entry_locals(samples.star_args, (first, second), {"key": second})
    got = convert_frame.frame_locals(samples.star_args, (first, second), {"key": second})
    assert got["a"] is expected["a"] is first
    assert got["rest"][0] is expected["rest"][0] is second
    assert got["options"]["key"] is expected["options"]["key"] is second


BAD_CALLS = [
    (samples.positional, (), {}),                              # a and b missing
    (samples.positional, (1, 2, 3, 4), {}),                    # one too many
    (samples.positional, (1,), {"a": 2}),                      # a given twice
    (samples.positional, (1, 2), {"z": 0}),                    # no such parameter
    (samples.keyword_only, (1,), {}),                          # shift has no default
    (samples.keyword_only, (1, 2), {}),                        # shift is keyword-only
    (samples.positional_only, (), {"a": 1}),                   # a is positional-only
]


@pytest.mark.task("ch00.1")
@pytest.mark.parametrize("case", BAD_CALLS, ids=call_id)
def test_a_call_python_rejects_raises_type_error(case):
    fn, args, kwargs = case
    with pytest.raises(TypeError):
        fn(*args, **kwargs)
    with pytest.raises(TypeError):
        convert_frame.frame_locals(fn, args, dict(kwargs))


BLEND_CALLS = [
    Call((0,), {"bias": 1.0}),                                    # defaults everywhere
    Call((0, 1), {"bias": 0.0, "weight": 2.0}),
    Call((0, 1, 2, 0), {"bias": 2.0, "scale": 3.0}),             # *more and **extra
]


@pytest.mark.task("ch00.1")
@pytest.mark.parametrize("call", BLEND_CALLS, ids=lambda call: f"{call.args}{call.kwargs}")
def test_a_compiled_program_sees_every_kind_of_argument(call):
    """One call per compile (a second call would recompile: chapter 9)."""
    inputs = samples.tensors((3,), (3,), (3,))
    args = [inputs[index] for index in call.args]
    assert_same_as_torch(samples.blend, *args, **call.kwargs)


@pytest.mark.task("ch00.1")
def test_a_compiled_closure_with_keyword_defaults():
    affine = samples.make_affine(torch.tensor(2.0))
    x, = samples.tensors((4,))
    assert_same_as_torch(affine, x)
    assert_same_as_torch(affine, x, bias=-1.0, clamp=0.5)
