"""Mutations that programs written to probe minidynamo found replayed wrong, each run three
times (first call, cache hit, hit) against eager Python on fresh inputs, comparing the
return value and the state the call leaves behind:

- a tensor attribute written (`xs[0].foo = 1`) before the place the tensor was read
  from is rebound or emptied (`xs[0] = x`, `xs.clear()`, `o.t = x`, a global): the
  replay read the place again after the frame's other writes, and tagged the new tensor
  (or raised IndexError); the tensors written to are read before any write now;
- `globals()['K'] = 1` (a module's globals written through their dict) then a graph
  break: the dict was replayed whole, deleting the names minidynamo had installed there
  (NameError on this and every later call); such a write breaks the graph now;
- `nn.Parameter(...)` made in the frame came out of the graph as a plain tensor (a
  module built in the frame had no parameters); `m.w = nn.Parameter(...)` was not seen
  by `m.parameters()`: both break the graph now;
- an existing object's `__dict__` and its attributes out of step within a frame
  (`del vars(o)['a']` then `getattr(o, 'a', 10)`; `d = o.__dict__; o.b = 5; d['b']`).
"""

from __future__ import annotations

import torch
from torch import nn

import minidynamo

FLAG = 0


class Box:
    def __init__(self, t=None):
        self.a = 1
        self.t = t


def tag_then_rebind_slot(xs, x):
    xs[0].foo = 1
    xs[0] = x
    return x + 1


def tag_then_clear(xs, x):
    t = xs[0]
    t.foo = 2
    xs.clear()
    return x + 1


def tag_then_pop_key(d, x):
    d["a"].foo = 3
    d.pop("a")
    return x + 1


def tag_then_rebind_attribute(o, x):
    o.t.foo = 4
    o.t = x
    return x + 1


def tag_then_break(xs, x):
    xs[0].foo = 5
    xs[0] = x
    torch._dynamo.graph_break()
    return x + 1


def global_written_through_globals(x):
    globals()["WRITTEN"] = 1
    print("a graph break")
    return x + 1


def counter_through_globals(x):
    g = globals()
    g["FLAG"] = g["FLAG"] + 1
    return x + FLAG


def new_parameter(x):
    p = nn.Parameter(torch.ones(1))
    return x + 1, isinstance(p, nn.Parameter)


def module_made_here(x):
    lin = nn.Linear(1, 1)
    return x + 1, len(list(lin.parameters())), isinstance(lin.weight, nn.Parameter)


def parameter_on_a_module(m, x):
    m.w = nn.Parameter(torch.ones(1))
    return x * m.w, len(list(m.parameters()))


def deleted_through_vars(o, x):
    del vars(o)["a"]
    return x + getattr(o, "a", 10)


def dict_read_then_attribute_set(o, x):
    d = o.__dict__
    o.b = 5
    return x + d.get("b", -1) + len(d)


def written_through_getattr_dict(o, x):
    getattr(o, "__dict__")["a"] = 7
    return x * o.a


def tensor_vars_updated(x):
    vars(x).update(bar=3)
    return x + getattr(x, "bar", 10)


def state(value):
    """What a call left behind, comparable between runs."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.tolist(), getattr(value, "foo", None), getattr(value, "bar", None))
    if isinstance(value, (list, tuple)):
        return [state(item) for item in value]
    if isinstance(value, dict):
        return {key: state(item) for key, item in value.items()}
    if isinstance(value, nn.Module):
        return ("module", sorted(name for name, _ in value.named_parameters()))
    if isinstance(value, Box):
        return ("box", {key: state(item) for key, item in vars(value).items()})
    return value


def run_three_times(fn, make_args, compiled):
    results = []
    for _ in range(3):
        args = make_args()
        out = compiled(*args)
        results.append((state(out), state(args)))
    return results


def check(fn, make_args):
    minidynamo.reset()
    expected = run_three_times(fn, make_args, fn)
    got = run_three_times(fn, make_args, minidynamo.compile(fn, backend="eager"))
    assert got == expected


def test_a_tagged_tensor_keeps_its_tag_when_its_place_is_rebound():
    check(tag_then_rebind_slot, lambda: ([torch.zeros(1)], torch.ones(1)))
    check(tag_then_rebind_attribute, lambda: (Box(torch.zeros(1)), torch.ones(1)))
    check(tag_then_break, lambda: ([torch.zeros(1)], torch.ones(1)))


def test_a_tagged_tensor_keeps_its_tag_when_its_place_is_emptied():
    kept = []

    def make():
        t = torch.zeros(1)
        kept.append(t)
        return [t], torch.ones(1)

    check(tag_then_clear, make)
    assert all(getattr(t, "foo", None) == 2 for t in kept)
    check(tag_then_pop_key, lambda: ({"a": torch.zeros(1)}, torch.ones(1)))


def test_a_write_through_globals_then_a_break_keeps_the_installed_names():
    minidynamo.reset()
    compiled = minidynamo.compile(global_written_through_globals, backend="eager")
    for _ in range(3):
        globals().pop("WRITTEN", None)
        assert torch.equal(compiled(torch.ones(1)), torch.ones(1) + 1)
        assert globals()["WRITTEN"] == 1


def test_a_counter_written_through_globals_is_read_back():
    global FLAG
    FLAG = 0
    eager = [counter_through_globals(torch.zeros(1)).item() for _ in range(3)]
    FLAG = 0
    minidynamo.reset()
    compiled = minidynamo.compile(counter_through_globals, backend="eager")
    assert [compiled(torch.zeros(1)).item() for _ in range(3)] == eager == [1.0, 2.0, 3.0]


def test_parameters_made_in_the_frame_are_parameters():
    check(new_parameter, lambda: (torch.ones(1),))
    check(module_made_here, lambda: (torch.ones(1),))
    check(parameter_on_a_module, lambda: (nn.Module(), torch.ones(1)))


def test_an_objects_dict_and_its_attributes_agree():
    check(deleted_through_vars, lambda: (Box(), torch.zeros(1)))
    check(dict_read_then_attribute_set, lambda: (Box(), torch.zeros(1)))
    check(written_through_getattr_dict, lambda: (Box(), torch.ones(1)))
    check(tensor_vars_updated, lambda: (torch.zeros(1),))
