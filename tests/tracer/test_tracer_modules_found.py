"""nn.Module and autograd behaviour that programs written to probe minidynamo found
wrong, each compared with eager PyTorch on the same calls:

- `hasattr(self, 'extra')` false, then `register_buffer('extra', ...)` (or a parameter
  or a submodule of that name) between calls: the entry was reused (nn.Module's
  `__getattr__` looks in `_parameters`, `_buffers`, `_modules`: guarded now);
- a property setter (or a descriptor's `__set__`) of a module run in `forward`, a
  module's own `__getattribute__`, a buffer reassigned then read through `_buffers`:
  reads in the same frame were wrong (they break the graph now);
- `minidynamo.compile(m)` ran the class's `forward` when one is set on the instance;
- `y.retain_grad()` in the frame did nothing; `x.is_leaf` of an input was not guarded
  (a leaf, then a computed tensor of the same shape, got the leaf's answer);
- a module class's own `__setattr__` was bypassed (stored directly, replayed once);
- a lazy module's first call was an internal error (run eagerly).
"""

from __future__ import annotations

import torch
from torch import nn

import minidynamo


def both(make_and_call):
    """What `make_and_call(compile)` returns in eager and under minidynamo."""
    minidynamo.reset()
    torch.manual_seed(0)
    eager = make_and_call(lambda module: module)
    minidynamo.reset()
    torch.manual_seed(0)
    ours = make_and_call(lambda module: minidynamo.compile(module, backend="eager"))
    return eager, ours


class MaybeExtra(nn.Module):
    def forward(self, x):
        return x + self.extra if hasattr(self, "extra") else x * 3


class MaybeGate(nn.Module):
    def forward(self, x):
        gate = getattr(self, "gate", None)
        return x * 2 if gate is None else gate(x)


def test_a_name_registered_on_a_module_between_calls_is_seen():
    def buffer_added(compile):
        m = MaybeExtra()
        compiled = compile(m)
        first = compiled(torch.ones(1)).item()
        m.register_buffer("extra", torch.ones(1))
        return first, compiled(torch.ones(1)).item()

    def submodule_added(compile):
        m = MaybeGate()
        compiled = compile(m)
        first = compiled(torch.ones(1)).item()
        m.gate = nn.Identity()
        return first, compiled(torch.ones(1)).item()

    for body in (buffer_added, submodule_added):
        eager, ours = both(body)
        assert ours == eager


class Doubling(nn.Module):
    def __init__(self):
        super().__init__()
        self._s = 1.0

    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, value):
        self._s = value * 2

    def forward(self, x):
        self.s = 3.0
        return x * self.s, x * self._s


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 1.0
        self.__dict__["reads"] = 0

    def __getattribute__(self, name):
        if name == "k":
            object.__getattribute__(self, "__dict__")["reads"] += 1
            return object.__getattribute__(self, "k") * 10
        return super().__getattribute__(name)

    def forward(self, x):
        return x * self.k


class Accumulating(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.zeros(1))

    def forward(self, x):
        self.b = self.b + x
        return self._buffers["b"] * 1, next(self.buffers()) * 1, self.b * 1


def test_reads_after_a_setter_a_getattribute_or_a_buffer_write_see_them():
    def setter(compile):
        m = Doubling()
        compiled = compile(m)
        return [[t.item() for t in compiled(torch.ones(1))] for _ in range(2)], m._s

    def getattribute(compile):
        m = Counting()
        compiled = compile(m)
        return [compiled(torch.ones(1)).item() for _ in range(2)], m.__dict__["reads"]

    def buffer(compile):
        m = Accumulating()
        compiled = compile(m)
        return [[t.item() for t in compiled(torch.ones(1))] for _ in range(2)], m.b.item()

    for body in (setter, getattribute, buffer):
        eager, ours = both(body)
        assert ours == eager


class Plus(nn.Module):
    def forward(self, x):
        return x + 1


class ForwardFromInit(nn.Module):
    def __init__(self):
        super().__init__()
        self.forward = self.times_three

    def times_three(self, x):
        return x * 3


def test_a_forward_set_on_the_instance_is_the_one_called():
    def replaced(compile):
        m = Plus()
        compiled = compile(m)
        first = compiled(torch.ones(1)).item()
        m.forward = lambda x: x * 50
        return first, compiled(torch.ones(1)).item()

    def from_init(compile):
        return compile(ForwardFromInit())(torch.ones(1)).item()

    for body in (replaced, from_init):
        eager, ours = both(body)
        assert ours == eager


def keep_gradient(x):
    y = x * 2
    y.retain_grad()
    return (y * y).sum(), y


def leaf_or_not(x):
    return x.is_leaf, x * 2 if x.is_leaf else x * 3


def test_retain_grad_and_is_leaf_as_in_eager():
    def retained(compile):
        x = torch.ones(3, requires_grad=True)
        loss, y = compile(keep_gradient)(x)
        loss.backward()
        return y.grad.tolist(), y.retains_grad

    def leaves(compile):
        compiled = compile(leaf_or_not)
        w = torch.ones(2, requires_grad=True)
        return [(flag, out.tolist()) for flag, out in (compiled(w), compiled(w * 1))]

    for body in (retained, leaves):
        eager, ours = both(body)
        assert ours == eager


def test_autograd_grad_in_the_frame_breaks_the_graph():
    def grad_of_square(w):
        loss = (w ** 2).sum()
        (gradient,) = torch.autograd.grad(loss, w)
        return loss, gradient

    w = torch.ones(3, requires_grad=True)
    for backend in ("eager", "aot_eager"):
        minidynamo.reset()
        loss, gradient = minidynamo.compile(grad_of_square, backend=backend)(w)
        assert loss.item() == 3.0 and gradient.tolist() == [2.0, 2.0, 2.0]


def grad_off(x):
    torch.set_grad_enabled(False)
    return x * 2


def grad_on(x):
    torch.set_grad_enabled(True)
    return x * 2


def test_the_function_form_of_set_grad_enabled_outlives_the_graph():
    """`torch.set_grad_enabled(False)` called as a function leaves grad mode off after
    the call; AOTAutograd runs the graph's `_set_grad_enabled` node while it traces, not
    when the graph runs, so the transformed code sets the mode the graph ends in."""
    for backend in ("eager", "aot_eager"):
        for fn, before, after in ((grad_off, True, False), (grad_on, False, True)):
            minidynamo.reset()
            compiled = minidynamo.compile(fn, backend=backend)
            try:
                for _ in range(2):
                    torch.set_grad_enabled(before)
                    out = compiled(torch.ones(2, requires_grad=True))
                    assert torch.is_grad_enabled() is after, (fn.__name__, backend)
                    assert out.requires_grad is after
            finally:
                torch.set_grad_enabled(True)


class Plain:
    pass


class Equal:
    def __eq__(self, other):
        return True

    __hash__ = None


def compare(x, p, q):
    return x + (1 if p == q else 0) + (10 if p != q else 0)


def test_objects_without_eq_compare_by_identity_in_one_graph_as_torch_does():
    """`p == q` of two modules or plain objects (object's `__eq__`: identity, after
    asking `q`'s own `__eq__`) recursed without end for modules and broke the graph
    for objects; torch.compile captures one graph."""
    from minidynamo.testing import CompileCounter, strict_mode

    a, b, m1, m2, e = Plain(), Plain(), nn.Identity(), nn.Identity(), Equal()
    pairs = [(a, b), (a, a), (m1, m2), (m1, m1), (a, e)]
    for p, q in pairs:
        minidynamo.reset()
        torch._dynamo.reset()
        ours, theirs = CompileCounter(), CompileCounter()
        with strict_mode():
            got = minidynamo.compile(compare, backend=ours)(torch.ones(2), p, q)
        expected = torch.compile(compare, backend=theirs)(torch.ones(2), p, q)
        assert torch.equal(got, compare(torch.ones(2), p, q)) and torch.equal(got, expected)
        assert ours.frame_count == theirs.frame_count == 1


class Logged(nn.Module):
    """A module class with its own `__setattr__`: a log of the values given to `x`."""

    def __init__(self):
        super().__init__()
        self.history = []

    def __setattr__(self, name, value):
        if name == "x":
            self.history.append(value)
        super().__setattr__(name, value)

    def forward(self, t):
        self.x = len(self.history)
        return t + len(self.history)


class Frozen(nn.Module):
    def __setattr__(self, name, value):
        if getattr(self, "frozen", False):
            raise AttributeError("frozen")
        super().__setattr__(name, value)


def test_a_module_classs_own_setattr_runs_in_the_trace():
    """`m.x = 1` on a module whose class has its own `__setattr__` was stored directly
    and replayed once after the graph: the log missed a value, reads in the frame saw
    the old state, and a refusal (`raise AttributeError`) escaped the frame's `try`."""
    def make_and_call(compile_):
        logged, frozen = Logged(), Frozen()
        object.__setattr__(frozen, "frozen", True)

        def writes(t):
            logged.x = 1
            logged.x = 2
            return t + len(logged.history)

        def refused(t):
            try:
                frozen.z = 1
                return t + 1
            except AttributeError:
                return t - 1

        run = compile_(logged)
        outputs = [compile_(writes)(torch.zeros(1)), compile_(refused)(torch.zeros(1))]
        outputs += [run(torch.zeros(1)) for _ in range(3)]
        return [each.item() for each in outputs], logged.history, logged.x

    eager, ours = both(make_and_call)
    assert ours == eager == ([2.0, -1.0, 3.0, 4.0, 5.0], [1, 2, 2, 3, 4], 4)


def test_a_lazy_modules_first_call_is_traced_after_it_is_initialized():
    """`nn.LazyLinear` sizes its parameters from its first input in a pre-hook: it ran
    inside the trace as an internal error (an uninitialized parameter), so the first
    call ran eagerly. It is initialized on the inputs' FakeTensors now, as TorchDynamo
    does, with eager's parameters (the same draws from the RNG), in one graph."""
    def make_and_call(compile_):
        model = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(2))
        run = compile_(model)
        outputs = [run(torch.ones(4, 5)) for _ in range(2)]
        return outputs, [type(layer).__name__ for layer in model], model[2].weight.detach()

    (eager, eager_classes, eager_weight), (ours, classes, weight) = both(make_and_call)
    assert classes == eager_classes == ["Linear", "ReLU", "Linear"]
    assert torch.equal(weight, eager_weight)
    for want, got in zip(eager, ours):
        assert torch.equal(want, got)
    minidynamo.reset()
    explanation = minidynamo.explain(nn.LazyLinear(3))(torch.ones(2, 4))
    assert explanation.graph_count == 1 and explanation.graph_break_count == 0
