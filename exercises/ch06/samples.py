"""More programs for the chapter 6 graded tests: truth values that are not constants,
conditions on frame inputs, and breaks at instructions a frame cannot be split at.

`programs.py` holds the programs the chapter shows; these reach the rules it does
not: an empty container that is no constant, an object that is true because it has
neither `__bool__` nor `__len__`, `bool()` and `not` of a value the frame has not
looked at yet (a lazy input), `bool()` of a user object, and a break at `not` or at
a jump, where no resume function can follow. As in `programs.py`, each program is
compiled by minidynamo and by torch.compile and run eagerly in the test; nothing
here is an expected answer.
"""

from __future__ import annotations

import collections

# -- ch06.1: truth values that are not constants ---------------------------------------


def ordered_truth(x, options):
    """An OrderedDict or a defaultdict is no constant (a plain dict of constants is):
    its length answers, empty or not."""
    if options:
        x = x * 2
    if not options:
        x = x - 1
    return x


def containers_built_here(x):
    ordered = collections.OrderedDict()
    groups = collections.defaultdict(list)
    if ordered:                     # empty: false
        x = x + 1
    if groups:
        x = x * 3
    ordered["scale"] = x
    groups["a"].append(x)
    if ordered and groups:          # one item each: true
        x = x - 2
    return x


def bool_of_input_list(x, xs):
    """`bool(xs)` and `not xs` on an input: the frame's tracker of `xs` is still lazy."""
    truth = bool(xs)
    negated = not xs
    return x * truth + negated


def plain_objects_are_true(x, xs):
    """Objects whose type defines neither __bool__ nor __len__ are true, empty or not."""
    if iter(xs):                    # an iterator
        x = x + 1
    if (item for item in xs):       # a generator
        x = x * 2
    if lambda item: item:           # a function made here (no constant)
        x = x - 3
    scale = enumerate(xs) and 4     # JUMP_IF_FALSE_OR_POP: true, so popped
    pairs = zip(xs, xs) or [None]   # JUMP_IF_TRUE_OR_POP: true, so kept
    if not map(abs, xs):
        x = x / 2
    return x * scale + len(list(pairs))


def bool_of_input_tensor(x, t):
    """`bool(t)` of a one-element input tensor, which nothing has looked at before."""
    y = x * 2
    truth = bool(t)
    return y * truth


def bool_of_input_item(x, ts):
    """`bool(ts[0])`: the item of an input list is lazy too."""
    y = x * 2
    truth = bool(ts[0])
    return y * truth


def bool_of_object(x, obj):
    """`bool(obj)` calls the user's __bool__ / __len__ natively; chapter 6 traces
    them only for a jump (condition_value), so here truth_value meets the object."""
    y = x * 2
    truth = bool(obj)
    return y + truth


# -- ch06.2: conditions on frame inputs ----------------------------------------------------


def if_input_tensor(x, t):
    """`if t:` on an input tensor that nothing has looked at before the jump."""
    y = x * 2
    if t:
        return y + 1
    return y - 1


# -- ch06.5: breaks at instructions a frame cannot be split at ------------------------------


def not_of_a_tensor(x):
    """UNARY_NOT on a tensor: no resume function can follow it, so the frame goes back
    to the last statement boundary."""
    y = x.sin()
    z = y.cos()
    negated = not (z.sum() > 0)
    return z + negated


def jump_on_a_traced_bool(x, obj):
    """The jump's traced __bool__ breaks (it needs tensor data): the break is found at
    the jump, which cannot be split off either."""
    y = x.sin()
    z = y.cos()
    if obj:
        return z + 1
    return z - 1


def not_before_any_graph(x):
    """UNARY_NOT on a tensor before the graph has two operations: no statement
    boundary to fall back to, so the whole frame runs eagerly."""
    negated = not (x.sum() > 0)
    return x + negated
