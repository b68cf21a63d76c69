"""Python semantics that programs written to probe minidynamo found wrong (session 29),
each compared with eager Python on the same calls, in strict mode (an internal error
fails the test rather than running the frame eagerly):

- zero-argument `super()` after a graph break in a method: the resume function's first
  local is a stack value, not `self` (it calls `super(__class__, self)` now);
- `f(**{'a': g(x)})` with a break inside `g`: the dict crossed the break lazily;
- a list or dict that holds itself, returned: rebuilt without end;
- a namedtuple through `max`, `min`, `sorted`, dict keys: came back a plain tuple;
- `obj.__dict__['k'] = v` on an object made in the frame: dropped;
- `list(obj)` of a class whose `__iter__` returns `self`: recursed without end;
- a function whose globals are no imported module's (`exec`): KeyError;
- `raise err` in a handler: `err.__context__` was set on a copy, not on `err`; `raise a`
  inside a handler of a later exception kept a cycle CPython cuts;
- `len()` of a 0-d tensor inside `try`: the TypeError escaped as an internal error;
- an error of torch's ShapeEnv while making the guards reached the user;
- a user operator that returned NotImplemented gave NotImplemented (no reflected method,
  no TypeError, no identity for `==`), and a subclass's reflected method was not first.
- `2 * obj` called `obj.__mul__`: a number on the left of a user object now asks the
  object's reflected method.
- a generator given to a callee that breaks ran its `finally` at the next garbage
  collection, not when the frame returned;
- code after a break reported no line (`f_lineno` None, `inspect.stack()` raised) or
  the `def` line (session 30);
- the result of an operation on a tensor subclass was a plain Tensor inside the frame
  (`type(x * 2)`, `isinstance`), and a subclass's own `__torch_function__` was never
  asked (session 31).
"""

from __future__ import annotations

import gc
import inspect
import itertools
import math
import sys
import traceback
import types
import warnings
from collections import namedtuple

import pytest
import torch

import minidynamo
from minidynamo.testing import assert_same_value, compare_with_torch, strict_mode


def same_as_eager(fn, *calls):
    """Each call's result (or exception text) in eager and under minidynamo."""
    minidynamo.reset()
    compiled = minidynamo.compile(fn, backend="eager")
    for make_args in calls:
        expected = fn(*make_args())
        with strict_mode():
            got = compiled(*make_args())
        assert_same_value(expected, got)


class Base:
    def f(self, t):
        return t * 2

    @classmethod
    def g(cls, t):
        return t * 3


class Derived(Base):
    def f(self, t):
        torch._dynamo.graph_break()
        return super().f(t) + 1

    @classmethod
    def g(cls, t):
        torch._dynamo.graph_break()
        return super().g(t) + 1

    def h(self, t):
        def me():
            return self  # `self` is a cell here
        torch._dynamo.graph_break()
        return super().f(t) + me().f(t)


def calls_super(x):
    return Derived().f(x) + Derived.g(x) + Derived().h(x)


def test_zero_argument_super_after_a_break():
    same_as_eager(calls_super, lambda: (torch.ones(2),), lambda: (torch.full((2,), 2.0),))


def scale(a, b=1, **kw):
    return a * b + len(kw)


def through_a_break(v):
    torch._dynamo.graph_break()
    return v


def merged_across_a_break(x, n):
    options = {"b": n}
    return scale(**{"a": through_a_break(x)}) + scale(x, **options, w=through_a_break(2))


def test_a_dict_merged_after_a_break():
    same_as_eager(merged_across_a_break, lambda: (torch.ones(2), 3), lambda: (torch.ones(2), 4))


def holds_itself(x):
    items = [x * 2]
    items.append(items)
    table = {}
    table["self"] = table
    return items, table, items[1][0] + 1


def test_a_container_that_holds_itself_is_returned():
    minidynamo.reset()
    with strict_mode():
        items, table, total = minidynamo.compile(holds_itself)(torch.ones(2))
    assert items[1] is items and table["self"] is table
    assert torch.equal(items[0], torch.full((2,), 2.0)) and torch.equal(total, torch.full((2,), 3.0))


Point = namedtuple("Point", "x y")


def namedtuples_kept(x, p):
    return (x + 1, max(p, Point(0, 0)), min(p, Point(9, 9)), list({p: 1})[0],
            sorted({p, Point(1, 1)}), dict.fromkeys([p]).popitem())


def test_a_namedtuple_stays_a_namedtuple():
    same_as_eager(namedtuples_kept, lambda: (torch.ones(1), Point(2, 3)),
                  lambda: (torch.ones(1), Point(-2, 3)))
    minidynamo.reset()
    with strict_mode():
        result = minidynamo.compile(namedtuples_kept)(torch.ones(1), Point(2, 3))
    assert all(type(value) is Point for value in result[1:4])


class Slot:
    k = 7

    def __init__(self, v=3):
        self.v = v


def written_through_dict(x, n):
    made = Slot()
    made.__dict__["k"] = n
    made.__dict__["v"] = n + 1
    return x + 1, made.k, made.v, dict(vars(made))


def test_a_write_through_the_dict_of_an_object_made_here():
    same_as_eager(written_through_dict, lambda: (torch.ones(1), 3), lambda: (torch.ones(1), 5))


class Count:
    def __init__(self, n):
        self.i, self.n = 0, n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i


def listed(x, n):
    counter = Count(n)
    return x * sum(list(counter)), counter.i


def test_list_of_an_object_that_is_its_own_iterator():
    same_as_eager(listed, lambda: (torch.ones(1), 3), lambda: (torch.ones(1), 4))


EXECUTED: dict = {}
exec("def doubled(v):\n    return v * len([1, 2])\n", EXECUTED)


def calls_executed_code(x):
    return EXECUTED["doubled"](x) + 1


def test_a_function_made_by_exec_is_called():
    same_as_eager(calls_executed_code, lambda: (torch.ones(1),))


def context_of_the_raised(x):
    err = ValueError("mine")
    try:
        try:
            raise KeyError("k")
        except KeyError:
            raise err
    except ValueError:
        pass
    return x + 1, repr(err.__context__)


def cause_of_the_raised(x):
    err = ValueError("mine")
    try:
        raise err from KeyError("c")
    except ValueError:
        pass
    return x + 1, repr(err.__cause__), err.__suppress_context__


def context_cycle_cut(x):
    try:
        try:
            raise ValueError("a")
        except ValueError as first:
            try:
                raise KeyError("b")
            except KeyError:
                raise first
    except ValueError as caught:
        return x + 1, repr(caught.__context__), repr(caught.__context__.__context__)


@pytest.mark.parametrize("fn", [context_of_the_raised, cause_of_the_raised, context_cycle_cut])
def test_exception_chaining_is_seen_by_every_name(fn):
    same_as_eager(fn, lambda: (torch.ones(1),))


def attempt(call):
    try:
        return call()
    except Exception as error:  # noqa: BLE001
        return f"{type(error).__name__}: {error}"


def length_of_a_scalar(x):
    return x + 1, attempt(lambda: len(x[0]))


def test_len_of_a_0d_tensor_raises_in_the_traced_code():
    same_as_eager(length_of_a_scalar, lambda: (torch.ones(2),))


def infinite_product(x, a):
    return x + 1, str(a * math.inf)


def test_an_error_of_the_guards_runs_the_frame_eagerly(monkeypatch):
    """torch's ShapeEnv asserts on a NaN while making the guards of a dynamic int times
    infinity: an internal error, so (not in strict mode) the frame runs eagerly and the
    answer is eager's; it reached the user before."""
    monkeypatch.setattr(minidynamo.config, "strict", False)
    minidynamo.reset()
    compiled = minidynamo.compile(infinite_product, backend="eager")
    for a in (7, -5, 2):
        assert_same_value(infinite_product(torch.ones(1), a), compiled(torch.ones(1), a))


class Declines:
    def __add__(self, other):
        return NotImplemented

    def __eq__(self, other):
        return NotImplemented

    __hash__ = None


class Reflects:
    def __radd__(self, other):
        return "Reflects.__radd__"


class Parent:
    def __add__(self, other):
        return "Parent.__add__"


class Child(Parent):
    def __radd__(self, other):
        return "Child.__radd__"


class Vec:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Vec(self.v + other.v) if isinstance(other, Vec) else NotImplemented

    def __eq__(self, other):
        return isinstance(other, Vec) and self.v == other.v

    __hash__ = None


def operators(x):
    """Python's operator protocol on user objects: NotImplemented, then the right
    operand's reflected method (first when its class is a subclass of the left's), then
    identity for `==`/`!=` or a TypeError; `!=` of a class with `__eq__` inverts it."""
    declines = Declines()
    return (x + 1, Declines() + Reflects(), declines == declines, Declines() != Declines(),
            attempt(lambda: Declines() + 1), Parent() + Child(), (Vec(1) + Vec(2)).v,
            attempt(lambda: Vec(1) + "a"), Vec(1) != Vec(1), Vec(1) != Vec(2),
            attempt(lambda: Declines() < Declines()))


def test_user_operators_follow_pythons_protocol():
    same_as_eager(operators, lambda: (torch.ones(1),))


class Scaled:
    """An object with reflected methods only: `2 * obj` is `obj.__rmul__(2)`."""

    def __mul__(self, other):
        return ("Scaled.__mul__", other)

    def __rmul__(self, other):
        return ("Scaled.__rmul__", other)

    def __gt__(self, other):
        return ("Scaled.__gt__", other)


def number_on_the_left(x):
    """A number on the left of a user object: int's and float's methods decline it, so
    Python asks the object's reflected method (`2 * obj` used to call `obj.__mul__`, and
    `obj * 4` asked `int.__mul__`)."""
    return (x + 1, Scaled() * 4, 2 * Scaled(), 2.5 * Scaled(), True * Scaled(), 2 + Reflects(),
            2 < Scaled(), 2 == Declines(), 2 != Declines(), attempt(lambda: 1 - Scaled()))


def test_a_number_on_the_left_asks_the_objects_reflected_method():
    same_as_eager(number_on_the_left, lambda: (torch.ones(1),))
    comparison = compare_with_torch(number_on_the_left, torch.ones(1))
    assert comparison.ok, comparison.report()


def counting_to_two(log):
    try:
        yield 1
        yield 2
    finally:
        log.append("closed")


def breaks_then_advances(generator):
    torch._dynamo.graph_break()
    return next(generator)


def hands_a_generator_over(x, log):
    generator = counting_to_two(log)
    value = breaks_then_advances(generator)
    log.append("returning")
    return x + value


def test_a_generator_given_to_a_breaking_callee_closes_when_the_frame_returns():
    """The break's error, kept for the next trace, held the first trace's frames in its
    traceback, and through them the generator: its `finally` ran at the next garbage
    collection instead of when the frame returned."""
    minidynamo.reset()
    compiled = minidynamo.compile(hands_a_generator_over, backend="eager")
    gc.disable()
    try:
        for _ in range(2):
            log = []
            compiled(torch.ones(1), log)
            assert log == ["returning", "closed"]
    finally:
        gc.enable()


def line_after_a_break(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y, sys._getframe(0).f_lineno


def line_of_a_call_that_breaks(x):
    y = x + 1
    return y, traceback.extract_stack()[-1].lineno


def frames_after_a_break(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y, inspect.stack()[0].lineno  # its name is the resume function's (as in torch)


def warns_after_a_break(x):
    torch._dynamo.graph_break()
    warnings.warn("after the break")
    return x + 1


@pytest.mark.parametrize("fn", [line_after_a_break, line_of_a_call_that_breaks,
                                frames_after_a_break], ids=lambda fn: fn.__name__)
def test_a_frame_reports_its_own_line_after_a_break(fn):
    """The code minidynamo writes (the graph's call, the call that breaks) had no
    source position: it inherited the prologue's (the `def` line), or none at all in a
    resume function, where `f_lineno` was None and `inspect.stack()` raised TypeError.
    It now has the position of the instruction where the trace ended."""
    same_as_eager(fn, lambda: (torch.ones(1),))


def test_a_warning_after_a_break_names_its_line():
    minidynamo.reset()
    lines = []
    for run in (warns_after_a_break, minidynamo.compile(warns_after_a_break, backend="eager")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(torch.ones(1))
        lines.append([warning.lineno for warning in caught])
    assert lines[0] == lines[1]


def operators_on_builtin_values(x, number, items, text):
    """A number, None or a string on the left of a list, a dict or a set: int's method
    says NotImplemented (it was returned as the value: `3 == [1]` gave NotImplemented),
    and the operator's own protocol answers: False, True, or a TypeError in its words."""
    return (x + 1, number == items, text != items, attempt(lambda: number + items),
            attempt(lambda: number < items), attempt(lambda: None + items),
            attempt(lambda: text * items), attempt(lambda: items * 2.5),
            attempt(lambda: number * items))


def set_operators_take_sets(x, items, other):
    """`{1} == [1]` is False and `{1} | 'ab'` a TypeError: the operators take sets only,
    the named methods (`union`) any iterable."""
    return (x + 1, items == other, items != other, attempt(lambda: items | other),
            attempt(lambda: items - other), attempt(lambda: items <= other),
            items.union(other) if not isinstance(other, int) else None)


def formats_a_number(x, n):
    return x + 1, "%s" % n, "%d|%5s|%r" % (n, n, n)


def zips_nothing(x):
    return x + 1, list(zip()), attempt(lambda: list(map(abs)))


@pytest.mark.parametrize("items", [[1], {1: 2}, {1}, (1,)], ids=["list", "dict", "set", "tuple"])
def test_an_operator_between_a_constant_and_a_container_follows_python(items):
    same_as_eager(operators_on_builtin_values, lambda: (torch.ones(1), 3, items, "a"),
                  lambda: (torch.ones(1), 2.5, items, "b"))


@pytest.mark.parametrize("other", [[1], "ab", 3, frozenset({1}), {2}], ids=repr)
def test_set_operators_take_only_sets(other):
    same_as_eager(set_operators_take_sets, lambda: (torch.ones(1), {1}, other))


def test_percent_formatting_of_a_dynamic_int_is_its_value():
    """Once `n` is dynamic, `'%s' % n` was folded on the symbol: 's77'."""
    same_as_eager(formats_a_number, *[lambda n=n: (torch.ones(1), n) for n in (3, 5, 0, -1)])


def test_zip_of_nothing_is_empty():
    same_as_eager(zips_nothing, lambda: (torch.ones(1),))


def step_with_rate(x, lr):
    return x.add(x * 2, alpha=-lr)


def test_a_float_aot_autograd_cannot_make_a_tensor_is_traced_again_as_a_constant():
    """Under aot_eager a float that changed is a dynamic input; AOTAutograd's pass that
    turns such floats into tensors cannot for `alpha=`, and raises
    TensorifyScalarRestartAnalysis. It reached the user as BackendCompilerFailed; the
    frame is now traced again with that float a constant, as torch.compile does (which
    compiles on every new value too)."""
    frames = []
    for compile_fn, reset, count in (
            (minidynamo.compile, minidynamo.reset,
             lambda: minidynamo.convert_frame.counters["frames"]),
            (torch.compile, torch._dynamo.reset,
             lambda: torch._dynamo.utils.counters["frames"]["ok"])):
        reset()
        torch._dynamo.utils.counters.clear()
        compiled = compile_fn(step_with_rate, backend="aot_eager")
        for lr in (0.1, 0.2, 0.3):
            with strict_mode():
                assert torch.equal(compiled(torch.ones(3), lr), step_with_rate(torch.ones(3), lr))
        frames.append(count())
    assert frames[0] == frames[1]


class Decaying(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.ones(4))

    def forward(self, x):
        self.state.mul_(0.5)
        return x + 0


def test_a_buffer_changed_in_place_and_passed_in_is_not_taken_for_another_tensor():
    """Buffers are left out of the aliasing guard, unless the graph changes them in
    place: called first with a plain tensor, then with the buffer itself, the entry
    was reused and AOTAutograd read the input before the change (0.5, eager 0.25)."""
    for backend in ("eager", "aot_eager"):
        minidynamo.reset()
        eager, compiled_module = Decaying(), Decaying()
        compiled = minidynamo.compile(compiled_module, backend=backend)
        for pick in (lambda m: torch.ones(4), lambda m: m.state, lambda m: torch.ones(4)):
            with strict_mode():
                assert_same_value(eager(pick(eager)), compiled(pick(compiled_module)))


def same_object_back(x, fs, t, d):
    """`frozenset(fs) is fs` and `tuple(t) is t` in CPython; `d | 3` is a TypeError (it
    returned the NotImplemented object)."""
    return x + 1, frozenset(fs) is fs, tuple(t) is t, attempt(lambda: d | 3), attempt(lambda: d | [1])


def test_conversions_that_return_their_argument_and_a_dict_or_with_a_non_dict():
    same_as_eager(same_object_back, lambda: (torch.ones(1), frozenset({1}), (1, 2), {1: 2}))


def resized(x):
    x.resize_(2, 3)
    return x


def transposed_in_place(x):
    x.t_()
    return x + 1


@pytest.mark.parametrize("fn", [resized, transposed_in_place], ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_an_in_place_view_of_an_input_breaks_as_in_torch(fn, backend):
    """`x.resize_(2, 3)` under aot_eager left the caller's tensor 4 x 5, and `x.t_()`
    on a sliced input raised an internal error on the dynamic recompile. Operators torch
    tags `inplace_view` (and `resize_`) on an input break the graph, as in TorchDynamo."""
    minidynamo.reset()
    compiled = minidynamo.compile(fn, backend=backend)
    for make in (lambda: torch.randn(4, 5), lambda: torch.randn(8, 7)[2:]):
        torch.manual_seed(0)
        mine = make()
        torch.manual_seed(0)
        theirs = make()
        with strict_mode():
            got = compiled(mine)
        assert_same_value(fn(theirs), got)
        assert_same_value(theirs, mine)



class Tagged(torch.Tensor):
    """A subclass with Tensor's own `__torch_function__`: results are Tagged too."""


class TaggedTwice(Tagged):
    pass


class Logged(torch.Tensor):
    """A subclass with its own `__torch_function__`, which could answer anything."""

    calls = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Logged.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def classes_of_results(x, y):
    pair = torch.max(x, 0)
    results = (x * 2, x + y, x.data, torch.cat([x, y]), torch.relu(x), x.new_zeros(2),
               x.sum(), x[0], x.T, pair.values, pair.indices)
    return [type(r).__name__ for r in results], isinstance(x + y, Tagged), (x + y).sum()


@pytest.mark.parametrize("other", [torch.Tensor, TaggedTwice, torch.nn.Parameter],
                         ids=["tensor", "subclass", "parameter"])
def test_results_of_a_tensor_subclass_have_its_class_inside_the_frame(other):
    """`type(x * 2)` of a subclass input was Tensor while tracing (about 104 probe
    programs): a result's class is the most derived subclass among the operation's
    tensor arguments, as `Tensor.__torch_function__` converts it; a Parameter's
    disabled `__torch_function__` takes no part."""
    def make():
        y = torch.arange(6.0).reshape(3, 2)
        y = torch.nn.Parameter(y) if other is torch.nn.Parameter else y.as_subclass(other)
        return torch.ones(3, 2).as_subclass(Tagged), y

    same_as_eager(classes_of_results, make)
    assert minidynamo.explain(classes_of_results)(*make()).graph_count == 1


def test_a_subclass_with_its_own_torch_function_breaks_and_runs_it_eagerly():
    """Its `__torch_function__` could return anything: the operation breaks the graph
    and runs eagerly, as do operations on unrelated subclasses (eager raises)."""
    def scaled(x):
        y = x + 1
        return type(y).__name__, y * 3

    same_as_eager(scaled, lambda: (torch.ones(2).as_subclass(Logged),))
    explanation = minidynamo.explain(scaled)(torch.ones(2).as_subclass(Logged))
    assert "its own __torch_function__" in str(explanation.break_reasons[0])
    minidynamo.reset()
    added = minidynamo.compile(lambda a, b: a + b, backend="eager")
    for unrelated in (Logged, Unrelated):
        pair = (torch.ones(2).as_subclass(Tagged), torch.ones(2).as_subclass(unrelated))
        with pytest.raises(TypeError, match="unsupported operand"):
            pair[0] + pair[1]
        with strict_mode(), pytest.raises(TypeError, match="unsupported operand"):
            added(*pair)


class Unrelated(torch.Tensor):
    pass


def add_to_base_read_view(x, y):
    x.add_(1)
    return y * 2


@pytest.mark.parametrize("view", [lambda x: x[1], lambda x: x[1:], lambda x: x.t()],
                         ids=["row", "slice", "transpose"])
def test_a_view_passed_beside_its_base_compiles_dynamically_under_aot_eager(view):
    """`f(x, x[1:])` raised BackendCompilerFailed (a storage offset symbol with no
    placeholder) or an internal error (the base's symbols had no source) on the
    dynamic recompile. A view's symbolic strides and storage offset are graph inputs,
    and its base is tracked as `L['y']._base`, as TorchDynamo does."""
    minidynamo.reset()
    compiled = minidynamo.compile(add_to_base_read_view, backend="aot_eager")
    for rows in (3, 5, 6):
        mine, theirs = torch.arange(rows * 4.0).reshape(rows, 4), torch.arange(rows * 4.0).reshape(rows, 4)
        with strict_mode():
            got = compiled(mine, view(mine))
        assert_same_value(add_to_base_read_view(theirs, view(theirs)), got)
        assert_same_value(theirs, mine)


def logging_generator(log, tag):
    try:
        yield 1
        yield 2
    finally:
        log.append(tag)


def paused_across_a_break(x, log):
    it = logging_generator(log, "outer")
    x = x + next(it)
    torch._dynamo.graph_break()
    return x * 2


def writes_nothing(x):
    print("", end="")  # a break inside the callee: the call runs natively
    return x + 1


def paused_across_a_call_that_breaks(x, log):
    it = logging_generator(log, "outer")
    x = x + next(it)
    x = writes_nothing(x)
    return x * 2


@pytest.mark.parametrize("fn", [paused_across_a_break, paused_across_a_call_that_breaks],
                         ids=lambda fn: fn.__name__)
def test_a_generator_paused_at_a_break_still_runs_its_finally(fn):
    """The paused generator was dropped at the break, so its `finally` never ran (eager
    runs it when the frame's locals go; torch.compile drops it too). It cannot cross
    the break: the whole frame runs eagerly (MD0024)."""
    logs = []
    same_as_eager(lambda x: (fn(x, logs.append([]) or logs[-1]), logs[-1]),
                  lambda: (torch.ones(2),), lambda: (torch.ones(2),))
    explanation = minidynamo.explain(fn)(torch.ones(2), [])
    assert "MD0024" in str(explanation.break_reasons[0])


SETTINGS = types.ModuleType("settings_for_a_test")
SETTINGS.SCALE = 2.0


def scaled_by_settings(x):
    return x * SETTINGS.SCALE


def test_a_module_that_answers_every_name_through_getattr():
    """After `del SETTINGS.SCALE` with a PEP 562 `__getattr__`, the next trace met a
    module that answers `__module__` with a float: torch's trace rules failed on it
    (an internal error). A value that cannot be called is no torch function."""
    minidynamo.reset()
    compiled = minidynamo.compile(scaled_by_settings, backend="eager")
    try:
        same_as_eager(scaled_by_settings, lambda: (torch.ones(2),))
        SETTINGS.__getattr__ = lambda name: 7.0
        del SETTINGS.SCALE
        with strict_mode():
            assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 7.0))
    finally:
        SETTINGS.__dict__.pop("__getattr__", None)
        SETTINGS.SCALE = 2.0
