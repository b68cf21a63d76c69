"""Graded tests for BEFORE_WITH (ch08.6) and WITH_EXCEPT_START (ch08.5): `with` blocks
on any context manager.

BEFORE_WITH looks up the manager's `__exit__`, traces its `__enter__` and pushes both
(grad-mode managers stay graph state, as in chapter 7); the normal exit is a CALL of
that `__exit__`, and an exception leaving the block reaches WITH_EXCEPT_START, which
calls it with the exception: a true result suppresses it. User classes and
`contextlib.contextmanager` generators are traced inline: one graph, as torch.compile.
"""

from __future__ import annotations

import pytest
import torch

from . import programs
from .programs import check, x3

ENTERING = [
    programs.with_user_manager,
    programs.with_two_managers,
    programs.with_contextmanager,
    programs.with_return_inside,
    programs.with_enter_raises,
]

LEAVING_WITH_AN_EXCEPTION = [
    programs.with_manager_sees_exception,
    programs.with_suppressing_manager,
    programs.with_not_suppressing_other,
    programs.with_contextmanager_exception,
    programs.with_contextmanager_swallowing,
]


@pytest.mark.task("ch08.6")
@pytest.mark.parametrize("fn", ENTERING + LEAVING_WITH_AN_EXCEPTION, ids=lambda fn: fn.__name__)
def test_user_and_contextlib_managers_give_one_graph(fn):
    check(fn, x3(), graphs=1)


@pytest.mark.task("ch08.6")
def test_grad_mode_blocks_stay_graph_state():
    x = x3().requires_grad_()
    comparison = check(programs.with_no_grad_still_graph_state, x, graphs=1)
    assert comparison.minidynamo.outcomes[0].value[1] is False


@pytest.mark.task("ch08.6")
def test_with_on_a_non_manager_is_a_type_error():
    """CPython raises TypeError at BEFORE_WITH; torch.compile 2.13 runs this frame eagerly."""
    comparison = programs.check_beyond_torch(programs.with_non_manager, x3())
    assert torch.equal(comparison.minidynamo.outcomes[0].value, x3() + 1)


@pytest.mark.task("ch08.6")
def test_a_manager_missing_enter_or_exit_is_a_type_error():
    """CPython names which half is missing; torch.compile 2.13 runs this frame eagerly."""
    comparison = programs.compare_with_torch(programs.with_half_a_manager, x3())
    assert not programs.compare_with_eager(comparison.eager, comparison.minidynamo)
    assert comparison.minidynamo.graph_count >= 1


@pytest.mark.task("ch08.5")
@pytest.mark.parametrize("fn", LEAVING_WITH_AN_EXCEPTION, ids=lambda fn: fn.__name__)
def test_exit_is_called_with_the_exception(fn):
    check(fn, x3(), graphs=1)
