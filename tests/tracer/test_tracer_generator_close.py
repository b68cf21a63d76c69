"""A generator left unfinished is closed where its last reference goes, as CPython
closes it: its `finally` blocks and `with` exits run there, before the code that
follows (`for x in gen(): break`, `next(gen())`, a `return` from inside the loop, a
generator only a local held when the frame returns). One still held (by a local, a
list, another generator) is not closed. torch.compile 2.13 never closes them: the
`finally` never runs and a `with torch.no_grad()` inside leaks out of the call.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.testing import CompileCounter
from tracer_helpers import as_values, call_restoring_grad_mode, same_outcome

LOG = []


def logged(x, name="gen"):
    try:
        yield x + 1
        yield x + 2
    finally:
        LOG.append(f"{name} finally")


def without_grad(x):
    with torch.no_grad():
        yield x * 2
        yield x * 3


def break_out_of_the_loop(x):
    for value in logged(x):
        break
    LOG.append("after loop")
    return value * 2


def return_from_the_loop(x):
    for value in logged(x):
        return value * 2
    return x


def next_of_a_temporary(x):
    value = next(logged(x))
    LOG.append("after next")
    return value


def held_by_a_local_until_the_return(x):
    generator = logged(x)
    value = next(generator)
    LOG.append("still held")
    return value * 3


def rebinding_the_local(x):
    generator = logged(x, "first")
    first = next(generator)
    generator = logged(x, "second")
    LOG.append("rebound")
    return first + next(generator)


def kept_in_a_list(x):
    keep = [logged(x)]
    value = next(keep[0])
    LOG.append("in a list")
    keep.clear()
    LOG.append("cleared")
    return value


def zip_stops_early(x):
    pairs = list(zip(logged(x), [1]))
    LOG.append("zipped")
    return pairs[0][0] * pairs[0][1]


def zip_drives_two_generators_in_a_loop(x):
    total = x
    for first, second in zip(logged(x, "one"), logged(x, "two")):
        total = total + first * second  # both parked while the body runs: not dropped
    LOG.append("looped")
    return total


def helper_drops_it(x):
    for value in logged(x, "helper's"):
        break
    LOG.append("helper goes on")
    return value


def dropped_inside_a_helper(x):
    value = helper_drops_it(x)
    LOG.append("back")
    return value


def closed_by_hand(x):
    generator = logged(x)
    value = next(generator)
    generator.close()
    LOG.append("closed")
    return value


def consumed_to_the_end(x):
    total = x
    for value in logged(x):
        total = total + value
    LOG.append("done")
    return total


def grad_mode_inside_a_dropped_generator(x):
    value = next(without_grad(x))
    return value + 1, torch.is_grad_enabled()


CASES = [break_out_of_the_loop, return_from_the_loop, next_of_a_temporary,
         held_by_a_local_until_the_return, rebinding_the_local, kept_in_a_list,
         zip_stops_early, zip_drives_two_generators_in_a_loop, dropped_inside_a_helper,
         closed_by_hand, consumed_to_the_end,
         grad_mode_inside_a_dropped_generator]


def outcome(fn):
    LOG.clear()
    result, grad_after = call_restoring_grad_mode(fn, torch.ones(2, requires_grad=True))
    return as_values(result), list(LOG), grad_after


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: fn.__name__)
def test_a_dropped_generator_is_closed_where_cpython_closes_it(fn):
    expected = outcome(fn)
    counter = CompileCounter()
    got = outcome(minidynamo.compile(fn, backend=counter))
    assert same_outcome(got, expected), (got, expected)
    assert counter.frame_count >= 1  # traced, not run eagerly
