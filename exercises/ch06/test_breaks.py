"""Graded tests for graph breaks as data: graph_break (ch06.4) and the break on an
unsupported call, restart_at (ch06.5).

Every break names a catalogue kind (compared with TorchDynamo's `gb_type` for the
same program), the user's file and line (compared with torch.explain's user stack),
and with `fullgraph=True` it is raised as `minidynamo.exc.Unsupported`, where
torch.compile raises `torch._dynamo.exc.Unsupported`. A break on a call compiles the
graph before it, runs the call natively exactly once, and goes on in a resume
function: the same graphs as torch.compile, the same printed output as eager. A break
at an instruction no resume function can follow (`not`, a jump whose traced
`__bool__` breaks) is not restarted there: the frame falls back to its last statement
boundary, or runs eagerly, as torch.compile's does.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.exc import (
    CATALOGUE,
    UNSUPPORTED_CALL,
    UNSUPPORTED_OPERATOR,
    BreakKind,
    InternalError,
    Unsupported,
    graph_break,
)
from minidynamo.stack_oracle import assert_stack_depths_match_cpython
from minidynamo.testing import assert_same_as_torch

from . import programs, samples
from .programs import explain_both, fullgraph_errors, stdout_of, where

BREAKING = [programs.tensor_if, programs.prints, programs.skipped_builtin]


# -- ch06.4: graph_break ---------------------------------------------------------------------


@pytest.mark.task("ch06.4")
@pytest.mark.parametrize("fn", BREAKING, ids=lambda fn: fn.__name__)
def test_fullgraph_raises_a_catalogued_break_of_torchs_kind(fn):
    ours, theirs = fullgraph_errors(fn, torch.ones(3))
    assert isinstance(theirs, torch._dynamo.exc.Unsupported)
    assert isinstance(ours, Unsupported), ours
    assert ours.kind is CATALOGUE[programs.TORCH_GB_TYPES[theirs.gb_type]]
    assert ours.hint == ours.kind.hint and ours.reason
    assert str(ours).startswith(f"Graph break {ours.kind.id} ({ours.kind.title}): {ours.reason}")


@pytest.mark.task("ch06.4")
@pytest.mark.parametrize("fn", BREAKING, ids=lambda fn: fn.__name__)
def test_explain_reports_the_kind_and_counts_of_torch(fn):
    ours, theirs = explain_both(fn, torch.ones(3))
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert [reason.kind.id for reason in ours.break_reasons] == \
        [CATALOGUE[reason.kind.title].id for reason in ours.break_reasons]
    assert all(isinstance(reason, Unsupported) for reason in ours.break_reasons)


@pytest.mark.task("ch06.4")
def test_a_hint_overrides_the_catalogue_and_an_unknown_kind_is_a_bug():
    with pytest.raises(Unsupported) as caught:
        graph_break(UNSUPPORTED_CALL, "calling launch_missiles()", hint="Do not.")
    assert (caught.value.kind, caught.value.reason, caught.value.hint) == \
        (UNSUPPORTED_CALL, "calling launch_missiles()", "Do not.")
    assert caught.value.user_stack == []
    with pytest.raises(Unsupported) as caught:
        graph_break(UNSUPPORTED_OPERATOR, "x @ 'a'")
    assert (caught.value.kind, caught.value.hint) == (UNSUPPORTED_OPERATOR, UNSUPPORTED_OPERATOR.hint)


@pytest.mark.task("ch06.4")
@pytest.mark.parametrize("kind", [
    "unsupported call",  # a title where the constant belongs
    BreakKind("MD0002", "unsupported call", "a copy", "not the catalogue's"),  # same title, not the constant
    BreakKind("MD9999", "no such kind", "a typo in minidynamo", "none"),
], ids=["title", "impostor", "unknown"])
def test_a_kind_not_in_the_catalogue_is_a_bug(kind):
    with pytest.raises(InternalError):
        graph_break(kind, "a typo in minidynamo")


# -- ch06.5: restart_at ----------------------------------------------------------------------


@pytest.mark.task("ch06.5")
@pytest.mark.parametrize("fn", [programs.prints, programs.item, programs.skipped_builtin,
                                programs.calls_a_helper],
                         ids=lambda fn: fn.__name__)
def test_a_break_on_a_call_splits_the_graph_like_torch(fn):
    x = torch.randn(3)
    assert_same_as_torch(fn, x)
    ours, theirs = explain_both(fn, x)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert [(reason.filename, reason.lineno) for reason in ours.compiled_break_reasons] == \
        [where(reason) for reason in theirs.break_reasons]


@pytest.mark.task("ch06.5")
@pytest.mark.parametrize("fn", [programs.prints, programs.calls_a_helper, programs.print_in_loop],
                         ids=lambda fn: fn.__name__)
def test_the_call_runs_once_natively(fn):
    x = torch.randn(3)
    eager = stdout_of(fn, x)
    minidynamo.reset()
    assert stdout_of(minidynamo.compile(fn), x) == eager
    torch._dynamo.reset()
    assert stdout_of(torch.compile(fn, backend="eager"), x) == eager


@pytest.mark.task("ch06.5")
def test_a_break_in_a_loop_runs_the_frame_eagerly_like_torch():
    x = torch.randn(3)
    comparison = assert_same_as_torch(programs.print_in_loop, x)
    assert comparison.minidynamo.graph_count == comparison.torch.graph_count == 0
    ours, _ = explain_both(programs.print_in_loop, x)
    assert ours.break_reasons and ours.break_reasons[0].lineno == \
        programs.print_in_loop.__code__.co_firstlineno + 3


@pytest.mark.task("ch06.5")
def test_fullgraph_raises_at_the_call_with_the_users_line():
    ours, theirs = fullgraph_errors(programs.prints, torch.ones(3))
    assert isinstance(theirs, torch._dynamo.exc.Unsupported)
    assert isinstance(ours, Unsupported), ours
    torchs = theirs.real_stack[-1]                 # TorchDynamo's user stack, innermost last
    assert (ours.filename, ours.lineno) == (torchs.filename, torchs.lineno)


@pytest.mark.task("ch06.5")
@pytest.mark.parametrize("fn, args", [
    (samples.not_of_a_tensor, ()),
    (samples.jump_on_a_traced_bool, (programs.TensorSwitch(torch.ones(3)),)),
    (samples.jump_on_a_traced_bool, (programs.TensorSwitch(-torch.ones(3)),)),
    (samples.not_before_any_graph, ()),
], ids=["not", "traced_bool_true", "traced_bool_false", "not_first"])
def test_a_break_no_resume_function_can_follow_is_not_restarted_there(fn, args):
    x = torch.randn(3)
    assert_same_as_torch(fn, x, *args)
    ours, theirs = explain_both(fn, x, *args)
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count)
    assert [(reason.filename, reason.lineno) for reason in ours.compiled_break_reasons] == \
        [where(reason) for reason in theirs.break_reasons]


@pytest.mark.task("ch06.5")
@pytest.mark.parametrize("fn, args", [
    (programs.prints, ()), (programs.item, ()), (programs.skipped_builtin, ()),
    (programs.calls_a_helper, ()), (programs.print_in_loop, ()),
    (samples.not_of_a_tensor, ()),
    (samples.jump_on_a_traced_bool, (programs.TensorSwitch(torch.ones(3)),)),
], ids=lambda value: getattr(value, "__name__", ""))
def test_the_stack_is_cpythons_on_every_pass(fn, args):
    """Every pass of the trace (the one that found the break, the one that stops
    before it) steps the same code with CPython's stack depths."""
    steps = assert_stack_depths_match_cpython(fn, torch.randn(3), *args)
    assert any(step.code is fn.__code__ for step in steps)
