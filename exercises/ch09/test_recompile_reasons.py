"""Graded tests for CheckFunction.failure_reason (ch09.4): why an entry was not reused.

At every recompile minidynamo asks each entry of the frame, newest first, why its check
failed, and records `compile_id: reason` (`FrameCache.failures`, the recompiles log);
torch.compile records the same in `torch._dynamo.utils.guard_failures`. Your
`failure_reason` walks the entry's guards, those that failed before first, and returns
the first failing one's reason. Each sequence is run by both compilers and every reason,
at every recompile, must be torch's, word for word and in the same order.
"""

from __future__ import annotations

import pytest
import torch

from . import programs
from .programs import Call, check_reasons, t


def two_tensors(x, y):
    return x + y


SEQUENCES = {
    # the tensor and then `n` fail in turn: the entry names the guard that failed before
    "failed_before_first": (programs.scaled, [
        Call(lambda: (torch.ones(3), 2)), Call(lambda: (torch.ones(4), 2)),
        Call(lambda: (torch.ones(4), 3)), Call(lambda: (torch.ones(4).double(), 3)),
        Call(lambda: (torch.ones(4, 2)[:, 0], 3)), Call(lambda: (torch.ones(4).requires_grad_(), 3)),
        Call(lambda: (torch.ones(4, 1), 3))]),
    "int_then_tensor": (programs.scaled, [
        Call(lambda: (t(2), 2)), Call(lambda: (t(2), 3)), Call(lambda: (t(3), 3)),
        Call(lambda: (t(3), 2.0))]),
    "first_of_two_failing": (two_tensors, [
        Call(lambda: (t(3), t(3))), Call(lambda: (t(4), t(4))), Call(lambda: (t(5), t(5)))]),
    # `xs[2] == 2` failed before; with a shorter list it cannot even be evaluated, and the
    # reason is the length check that fails, as torch's guard tree checks the list first
    "shorter_list": (programs.over_list, [
        Call(lambda: ([t(2), 1, 2],)), Call(lambda: ([t(2), 1, 5],)), Call(lambda: ([t(2), 1],)),
        Call(lambda: ([t(2), 3],))]),
    "none_then_value": (programs.branch_on_none, [
        Call(lambda: (t(3),)), Call(lambda: (t(3), 2.0)), Call(lambda: (t(3), 3.0))]),
    "grad_mode": (programs.needs_grad, [
        Call(lambda: (t(3, requires_grad=True),)),
        Call(lambda: (t(3, requires_grad=True),), torch.no_grad),
        Call(lambda: (t(4, requires_grad=True),), torch.no_grad)]),
}


@pytest.mark.task("ch09.4")
@pytest.mark.parametrize("fn, sequence", SEQUENCES.values(), ids=SEQUENCES)
def test_every_entrys_reason_at_every_recompile_is_torchs(fn, sequence):
    reasons = check_reasons(fn, sequence)
    assert all(reason.split(": ", 1)[1] for reason in reasons)


@pytest.mark.task("ch09.4")
def test_the_reason_of_a_guard_that_cannot_be_evaluated():
    """No guard fails cleanly: the one that raised is the reason, with its error."""
    pattern, _ = programs.minidynamo_run(programs.scaled, [Call(lambda: (t(3), 2))])
    assert pattern == [1]
    check = programs.entry_of(programs.scaled).check
    assert check.failure_reason({"x": t(3), "n": 2}, programs.__dict__) is None
    reason = check.failure_reason({"x": t(3)}, programs.__dict__)
    assert reason == "type(n) is int and n == 2 (KeyError: 'n')"


@pytest.mark.task("ch09.4")
def test_a_guard_that_raised_counts_as_failed():
    """A guard that could not be evaluated has failed, as a torch guard manager whose
    accessor raises counts a failure: it is then tried as early as a guard that failed as
    often as it did (a tie goes to the guard added first), and no earlier."""
    programs.minidynamo_run(programs.scaled, [Call(lambda: (t(3), 2))])
    entry = programs.entry_of(programs.scaled)   # guards: GLOBAL_STATE, x, n
    G = programs.__dict__
    tensor_reason = "tensor 'x' size mismatch at index 0. expected 3, actual 4"

    def reason(check, L):
        return programs.first_line(check.failure_reason(L, G))

    check = type(entry.check)(entry.check.guards)   # a new check: no failures yet
    assert reason(check, {"x": t(3)}).endswith("(KeyError: 'n')")   # n raised
    assert reason(check, {"x": t(4), "n": 2}) == tensor_reason      # x failed
    assert reason(check, {"x": t(4), "n": 3}) == tensor_reason      # once each: x first

    check = type(entry.check)(entry.check.guards)
    assert reason(check, {"n": 2}).endswith("(KeyError: 'x')")      # x raised
    assert reason(check, {"x": t(3), "n": 3}) == "n == 2"           # n failed
    assert reason(check, {"x": t(4), "n": 3}) == tensor_reason      # once each: x first
