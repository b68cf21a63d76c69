"""More programs for the chapter 5 graded tests: the corners of recording and rebuilding.

Like `programs.py`, each one is run eagerly and compiled by minidynamo (and, where the
two compilers are meant to agree, by torch.compile) in the same test; nothing here is
an expected answer.
"""

from __future__ import annotations

import torch


# -- running on FakeTensors (ch05.1) -------------------------------------------------------

def data_dependent_method(x):
    y = x * 2
    n = y.nonzero()               # a call_method node: its target is the name "nonzero"
    return n.sum() + 1


def mismatched_shapes(x, y):
    z = x.sin()
    return z @ y                  # (2, 3) @ (2, 3) raises in eager mode too


# -- recording nodes (ch05.2) --------------------------------------------------------------

def write_items(x):
    y = x * 2
    y[0] = 5.0                    # operator.setitem returns None: still a node
    y[1:3] = x[:2].sin()
    return y


# -- compiling the graph (ch05.3) ----------------------------------------------------------

def over_negative_zero(x):
    return x / (-x.shape[0] * 0.0)  # -s0 * 0.0 is 0 to sympy, -0.0 to IEEE: x / -0.0 is -inf


def empty_no_grad(x):
    y = x.sin()
    with torch.no_grad():         # entered and left with no operation inside
        pass
    return y * 2


def only_an_empty_no_grad(x, n):
    with torch.no_grad():         # its two toggles go before the graph is judged empty
        pass
    return n + 1


def grad_off_then_break(x):
    torch.set_grad_enabled(False)  # the graph's only call: it must run to switch the mode
    torch._dynamo.graph_break()
    y = x * 3                     # so this is computed without grad, as in eager
    torch.set_grad_enabled(True)
    return y


def no_grad_metadata(x):
    y = x.cos()
    with torch.no_grad():
        n = x.dim()               # a constant, not a node: the block stays empty
    return y + n


def scale_in_place(x, n):
    x.mul_(2)                     # the graph has an operation and no output
    return n


def break_on_data(x):
    y = x.exp()
    rows = torch.nonzero(y > 1)   # a graph break: two graphs
    return rows.sum() * 2


# -- rebuilding values (ch05.4) ------------------------------------------------------------

def two_new_tuples(x):
    return (x.sin(), 1), (x.cos(), 2)   # three tuples with no identity to share


def move_item(a, b, x):
    y = x * 2                     # x becomes a graph input first
    first = a[0]                  # a lazy item, L['a'][0]; it is x
    b.append(first)
    a[0] = first + y              # realizes first as x's tracker, then replaces a[0]
    return y                      # replayed: a[:] = [...] before b[:] = [..., x]


def move_constant(xs, ys, x):
    k = xs[0]                     # a constant read from L['xs'][0]
    xs[0] = k + 1
    ys.append(k)                  # ys gets the old value, after xs[0] is replaced
    return x * k


def input_list_containing_itself(x, xs):
    xs.append(xs)                 # reloaded from L['xs'], inside itself too
    return x + 1, xs


def list_containing_itself(x):
    fresh = [x + 1]
    fresh.append(fresh)
    return fresh
