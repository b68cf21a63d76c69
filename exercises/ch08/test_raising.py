"""Graded tests for exception_matches (ch08.2), RAISE_VARARGS (ch08.3) and
PUSH_EXC_INFO (ch08.4): matching `except` clauses, raising, and the exception being
handled.

Each program raises and catches inside the compiled function: torch.compile captures
it in one graph, and so must minidynamo, with eager's values (the exception's `args`,
`__cause__`, `__context__` and `__suppress_context__` included) and CPython's stack
depth at every instruction.
"""

from __future__ import annotations

import pytest

from . import programs
from .programs import check, x3


@pytest.mark.task("ch08.2")
@pytest.mark.parametrize("fn", [
    programs.except_tuple,
    programs.except_base_class,
    programs.except_wrong_type_goes_outward,
    programs.except_order_first_match,
    programs.except_user_subclass_not_matching_sibling,
    programs.except_as_cleanup,
], ids=lambda fn: fn.__name__)
def test_except_clauses_match_like_python(fn):
    check(fn, x3(), graphs=1)


@pytest.mark.task("ch08.2")
def test_matching_a_class_that_is_not_an_exception_is_a_type_error():
    """CPython raises TypeError at the match; torch.compile 2.13 runs this frame eagerly."""
    programs.check_beyond_torch(programs.except_non_exception_class, x3())


@pytest.mark.task("ch08.3")
@pytest.mark.parametrize("fn", [
    programs.raise_instance,
    programs.raise_class,
    programs.bare_reraise,
    programs.raise_from_cause,
    programs.raise_from_class_cause,
    programs.raise_from_none,
    programs.raise_sets_context,
    programs.raise_non_exception,
    programs.loop_of_raises,
    programs.bare_raise_reraises_the_innermost,
    programs.hasattr_through_a_reraising_property,
], ids=lambda fn: fn.__name__)
def test_raise_forms_are_caught_with_their_chaining(fn):
    check(fn, x3(), graphs=1)


@pytest.mark.task("ch08.3")
def test_a_bare_raise_with_nothing_handled_is_a_runtime_error():
    check(programs.bare_raise_without_exception, x3())


@pytest.mark.task("ch08.3")
def test_a_raise_that_leaves_the_frame_reaches_the_caller_as_eager():
    comparison = check(programs.uncaught_raise, x3(), graphs=0)
    assert str(comparison.minidynamo.outcomes[0].error) == "('left the frame', 3)"


@pytest.mark.task("ch08.4")
@pytest.mark.parametrize("fn", [
    programs.reraise_outer_after_inner_handled,
    programs.context_is_the_handled_exception,
    programs.bare_raise_in_helper,
    programs.handled_twice_in_a_row,
    programs.bare_reraise,
    programs.raise_sets_context,
    programs.nested_try_inner_handler,
    programs.bare_raise_reraises_the_innermost,
], ids=lambda fn: fn.__name__)
def test_the_handled_exception_is_saved_and_restored(fn):
    check(fn, x3(), graphs=1)
