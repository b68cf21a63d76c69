"""Automatic dynamic shapes (chapter 9), compared with torch.compile call for call.

Each case is a function and a sequence of calls. minidynamo and torch.compile run it
with the same `dynamic` option and a backend that records every graph; for every call
we compare whether the frame was traced again (the compile pattern, e.g. `[1, 0, 1, 0]`
for "a size, the same size, a new size, another new size": the third call makes that
dimension dynamic, the fourth reuses the dynamic entry), the placeholders of every
graph (`s77`, `L_x_`: the same symbols, named the same), and every output against
eager's.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import pytest
import torch
import torch._dynamo
import torch._dynamo.utils
from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

import minidynamo
from minidynamo import cache, convert_frame
from minidynamo.testing import assert_same_value, strict_mode


@dataclasses.dataclass
class Case:
    id: str
    fn: Callable[..., Any]
    calls: list[Callable[[], tuple]]  # each builds fresh arguments
    dynamic: bool | None = None
    compiles: list[int] | None = None  # the pattern, written down as torch 2.13 gives it


def t(*shape):
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape) / 7 + 1


def sizes(*shapes) -> list[Callable[[], tuple]]:
    return [lambda shape=shape: (t(*shape),) for shape in shapes]


# -- the functions ----------------------------------------------------------------------


def double(x):
    return x * 2


def add(x, y):
    return x + y


def two_sums(x, y):
    return x.sum() + y.sum()


def specialized_then_read_again(x):
    """`x + torch.ones(3)` makes the symbol of `x.shape[0]` the number 3; the loop reads
    the size again, now a SymInt that is only a number in disguise."""
    y = x
    for _ in range(2):
        if x.shape[0] > 3:
            y = y * 2
        else:
            y = y + torch.ones(3)
    return y


def halve_rows(x):
    return x.view(x.shape[0] // 2, -1)


def branch_on_size(x):
    if x.shape[0] > 4:
        return x + 1
    return x - 1


def scale(x, n):
    return x * n


def branch_on_int(x, n):
    if n > 2:
        return x + 1
    return x - 1


def new_zeros(x):
    return x.new_zeros(x.shape[0] * 2) + x.sum()


def size_arithmetic(x):
    rows, cols = x.shape
    return x.reshape(cols, rows) * (rows + cols), x.numel()


def returns_size(x):
    return x * 2, x.size(0)


def ones_like_rows(x):
    return torch.ones(x.size(0)) + x[:, 0]


def loop_over_int(x, n):
    for _ in range(n):
        x = x + 1
    return x


def item_of_list(xs):
    return xs[0] * xs[1]


def break_on_data(x):
    y = x * 2
    if y.sum() > 0:  # a graph break: partial graph, then a resume function
        return y + x.shape[0]
    return y - 1


def cat_then_size(x):
    y = torch.cat([x, x])
    return y * y.shape[0]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()


NET = Net()


def run_net(x):
    return NET(x)


RATE = 0.1


def times_rate(x):
    return x * RATE


def with_rate(rate):
    global RATE
    RATE = rate
    return (t(2),)


class Scaled:
    def __init__(self, factor):
        self.factor = factor


def times_factor(x, obj):
    return x * obj.factor


def branch_on_a_float(x, s):
    if s > 0.6:
        return x * s
    return x - s


def float_arithmetic(x, s):
    return x * s, s * 2 + 1, s


def times_count(x, obj):
    return x * obj.count


def times_inner_count(x, obj):
    return x * obj.inner.count


def counted(count, depth=0):
    """An object with an int attribute `count`, or holding one `depth` levels down."""
    obj = Scaled(None)
    obj.count = count
    for _ in range(depth):
        outer = Scaled(None)
        outer.inner = obj
        obj = outer
    return obj


def call_helper(x, helper):
    return helper(x)


def closing_over(n):
    def helper(x):
        return x * n
    return helper


def defaulting_to(n):
    def helper(x, k=n):
        return x * k
    return helper


class Stepped(torch.nn.Module):
    def __init__(self, step):
        super().__init__()
        self.step = step
        self.config = counted(step)

    def forward(self, x):
        return x * self.step + self.config.count


def run_module(x, module):
    return module(x)


def clipped_warmup(x, step):
    return x * min(1.0, step / 100)


def at_least_three(x, n):
    return x.new_zeros(max(n, 3))


def float_of_an_int(x, n):
    return x + float(n)  # torch.sym_float(n): a node, not a specialized 3.0


def int_of_a_float(x, s):
    return x + int(s * 1.5)  # torch.sym_int


def item_at(x, n):
    return x[n]  # torch.select(x, 0, n): indexing would specialize n through __index__


def length_of(x):
    return len(x), x + 1  # a dynamic size: the symbol, returned


def root_of_an_int(x, n):
    return x * math.sqrt(n), math.floor(n / 3), x * math.cos(n)  # torch._sym_sqrt(n) ...


def rounded(x, s):
    return x - round(s), round(s, 1)  # s.__round__(): a symbol


def update_base_read_view(x, y):
    x.add_(1)  # y sees it: a view of x, passed beside it
    return y * 2


def view_with_base(view):
    return [lambda shape=shape: (lambda x: (x, view(x)))(t(*shape)) for shape in
            ((3, 4), (5, 4), (6, 4))]


def heads_of(x):  # GPT-2's Conv1D and attention: a torch.Size plus a tuple
    return x.view(x.size()[:-1] + (2, -1)) * 2, x.reshape((1,) + x.shape) + 1


def text_of_a_float(x, s):
    return x + 1, str(s * 0.0)  # a graph break: sympy's 0.0 has no sign, str(-0.0) has


CASES = [
    Case("a_size_changes", double, sizes((3,), (3,), (5,), (7,), (3,)), compiles=[1, 0, 1, 0, 0]),
    Case("sizes_0_and_1_are_specialized", double, sizes((1,), (2,), (3,), (1,), (0,), (4,))),
    Case("two_dimensions", double, sizes((3, 4), (3, 5), (4, 6), (5, 7))),
    Case("broadcast_makes_sizes_equal", add,
         [lambda n=n: (t(n), t(n)) for n in (3, 4, 5, 6)]),
    Case("independent_sizes", two_sums,
         [lambda a=a, b=b: (t(a), t(b)) for a, b in ((3, 3), (4, 4), (5, 6), (2, 9))]),
    Case("arithmetic_on_a_size", halve_rows, sizes((4, 2), (6, 2), (8, 2), (10, 2))),
    Case("a_branch_on_a_size", branch_on_size, sizes((3,), (5,), (6,), (2,), (7,), (3,))),
    Case("new_zeros_of_a_computed_size", new_zeros, sizes((2,), (3,), (4,))),
    Case("unpacked_sizes", size_arithmetic, sizes((2, 3), (3, 4), (4, 5))),
    Case("returns_a_size", returns_size, sizes((2,), (3,), (4,))),
    Case("ones_of_a_size", ones_like_rows, sizes((2, 2), (3, 2), (5, 2))),
    Case("cat_then_its_size", cat_then_size, sizes((2,), (3,), (4,))),
    Case("a_module_batch", run_net, sizes((2, 4), (3, 4), (5, 4))),
    Case("a_break_with_dynamic_sizes", break_on_data, sizes((2,), (3,), (4,), (5,))),
    Case("an_int_changes", scale, [lambda n=n: (t(3), n) for n in (2, 2, 3, 4, 1, 0)],
         compiles=[1, 0, 1, 0, 0, 0]),
    Case("a_branch_on_an_int", branch_on_int, [lambda n=n: (t(2), n) for n in (3, 4, 5, 1)],
         compiles=[1, 1, 0, 1]),
    Case("range_of_an_int", loop_over_int, [lambda n=n: (t(2), n) for n in (2, 3, 4)]),
    Case("an_int_in_a_list", item_of_list, [lambda n=n: ([t(2), n],) for n in (3, 4, 5)]),
    Case("a_tensor_in_a_list", item_of_list, [lambda n=n: ([t(n), t(n)],) for n in (3, 4, 5)]),
    Case("len_of_a_dynamic_size", length_of, sizes((2, 2), (3, 2), (4, 2))),
    Case("a_size_plus_a_tuple", heads_of, sizes((3, 4), (5, 4), (6, 6), (7, 8))),
    Case("math_of_a_dynamic_int", root_of_an_int, [lambda n=n: (t(2), n) for n in (2, 3, 4, 5)]),
    Case("round_of_a_dynamic_float", rounded,
         [lambda s=s: (t(2), s) for s in (0.17, 2.5, 1.0, 1.3, -0.5)]),
    # a view passed beside its base: its strides and storage offset can be symbols too
    Case("a_row_passed_with_its_base", update_base_read_view, view_with_base(lambda x: x[1])),
    Case("a_slice_passed_with_its_base", update_base_read_view, view_with_base(lambda x: x[1:])),
    Case("a_transpose_passed_with_its_base", update_base_read_view,
         view_with_base(lambda x: x.t())),
    Case("a_slice_alone", double, [lambda n=n: (t(n, 2)[1:],) for n in (3, 5, 6)]),
    Case("a_bool_is_never_dynamic", scale, [lambda b=b: (t(2), b) for b in (True, False, True)]),
    Case("a_float_changes", scale, [lambda s=s: (t(3), s) for s in (0.5, 0.5, 0.7, 0.9, 2.5)],
         compiles=[1, 0, 1, 0, 0]),
    Case("a_global_float", times_rate, [lambda r=r: with_rate(r) for r in (0.1, 0.2, 0.3)]),
    Case("a_float_attribute", times_factor,
         [lambda f=f: (t(2), Scaled(f)) for f in (0.5, 1.5, 2.5)]),
    Case("a_float_in_a_list", item_of_list, [lambda s=s: ([t(2), s],) for s in (0.5, 1.5, 2.5)]),
    Case("a_branch_on_a_float", branch_on_a_float,
         [lambda s=s: (t(2), s) for s in (0.1, 0.2, 0.3, 0.7, 0.8, 0.2)],
         compiles=[1, 1, 0, 1, 0, 0]),
    Case("nan_stays_a_constant", scale,
         [lambda s=s: (t(2), s) for s in (0.5, float("nan"), float("inf"), 0.7)]),
    Case("dynamic_true_floats", float_arithmetic, [lambda s=s: (t(3), s) for s in (0.5, 1.5)],
         dynamic=True),
    # ints reached from an argument become symbols; through a module or a default, not
    Case("an_int_attribute_of_an_argument", times_count,
         [lambda n=n: (t(2), counted(n)) for n in (2, 3, 4, 5)], compiles=[1, 1, 0, 0]),
    Case("an_int_two_attributes_down", times_inner_count,
         [lambda n=n: (t(2), counted(n, depth=1)) for n in (2, 3, 4)], compiles=[1, 1, 0]),
    Case("an_int_in_a_closure_cell", call_helper,
         [lambda n=n: (t(2), closing_over(n)) for n in (2, 3, 4)], compiles=[1, 1, 0]),
    Case("an_int_default_argument_stays_static", call_helper,
         [lambda n=n: (t(2), defaulting_to(n)) for n in (2, 3, 4)], compiles=[1, 1, 1]),
    Case("int_attributes_of_a_module_stay_static", run_module,
         [lambda n=n: (t(2), Stepped(n)) for n in (2, 3, 4)], compiles=[1, 1, 1]),
    Case("min_of_a_symbol", clipped_warmup, [lambda n=n: (t(2), n) for n in range(5)],
         compiles=[1, 1, 0, 0, 0]),
    Case("max_of_a_symbol", at_least_three, [lambda n=n: (t(2), n) for n in (4, 5, 6, 2)],
         compiles=[1, 1, 0, 0]),
    Case("float_of_a_dynamic_int", float_of_an_int, [lambda n=n: (t(2), n) for n in (2, 3, 4, -5)],
         compiles=[1, 1, 0, 0]),
    Case("int_of_a_dynamic_float", int_of_a_float,
         [lambda s=s: (t(2), s) for s in (2.0, 3.0, 4.5, -5.0)], compiles=[1, 1, 0, 0]),
    Case("a_dynamic_int_as_an_index", item_at, [lambda n=n: (t(8), n) for n in (1, 2, 3, 5, -2)],
         compiles=[1, 1, 0, 0, 1]),  # a negative index is another case of select's guards
    Case("str_of_a_dynamic_float", text_of_a_float,
         [lambda s=s: (t(2), s) for s in (1.5, 2.5, -3.5, -1.0)]),
    Case("dynamic_false_stays_static", double, sizes((3,), (5,), (7,)), dynamic=False,
         compiles=[1, 1, 1]),
    Case("dynamic_true_from_the_first_call", double, sizes((3,), (5,), (1,), (7,)),
         dynamic=True),
    Case("dynamic_true_ints", scale, [lambda n=n: (t(3), n) for n in (2, 3, 1)], dynamic=True),
    Case("dynamic_true_two_inputs", add, [lambda n=n: (t(n), t(n)) for n in (3, 4)],
         dynamic=True),
    Case("dynamic_true_module", run_net, sizes((2, 4), (3, 4)), dynamic=True),
    Case("a_size_specialized_by_an_operation", specialized_then_read_again,
         sizes((3,), (5,), (3,), (6,)), dynamic=True),
    Case("a_size_specialized_after_it_changed", specialized_then_read_again,
         sizes((5,), (3,), (3,), (6,))),
]


# -- running a case -------------------------------------------------------------------------


def run(compile_fn, case, frames) -> tuple[list[int], list[list[str]], list[Any]]:
    """Per call: traced again (1) or not (0); every graph's placeholders; the outputs."""
    placeholders: list[list[str]] = []

    def backend(gm, example_inputs):
        placeholders.append([node.target for node in gm.graph.nodes if node.op == "placeholder"])
        return gm.forward

    compiled = compile_fn(case.fn, backend=backend, dynamic=case.dynamic)
    pattern, outputs = [], []
    for make_args in case.calls:
        before = frames()
        outputs.append(compiled(*make_args()))
        pattern.append(frames() - before)
    return pattern, placeholders, outputs


def torch_run(case):
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    return run(torch.compile, case, lambda: torch._dynamo.utils.counters["frames"]["ok"])


def minidynamo_run(case):
    minidynamo.reset()
    with strict_mode():
        return run(minidynamo.compile, case, lambda: convert_frame.counters["frames"])


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_dynamic_shapes_as_torch_compile(case):
    ours, our_graphs, our_outputs = minidynamo_run(case)
    theirs, their_graphs, _ = torch_run(case)
    for index, make_args in enumerate(case.calls):
        assert_same_value(case.fn(*make_args()), our_outputs[index], path=f"call {index}")
    assert ours == theirs, f"minidynamo compiled {ours}, torch.compile {theirs}"
    if case.compiles is not None:
        assert ours == case.compiles
    assert our_graphs == their_graphs


def test_a_dynamic_entry_guards_the_symbols_not_the_sizes():
    minidynamo.reset()
    compiled = minidynamo.compile(add)
    compiled(t(3, 4), t(3, 4))
    compiled(t(5, 4), t(5, 4))  # dimension 0 is dynamic now
    check = cache.lookup(add.__code__).entries[0].check
    source = check.source
    tensor_guard = next(guard for guard in check.guards if guard.kind == "TENSOR_MATCH")
    assert "x.dim() == 2 and x.size()[1] == 4" in tensor_guard.text  # no size()[0] check
    assert tensor_guard.text in check.annotated_source()
    assert "if not (2 <= ___v0.size()[0]):  # SHAPE_ENV" in source
    assert "___v1.size()[0] == ___v0.size()[0]" in source  # x + y needed equal sizes
    assert torch.equal(compiled(t(9, 4), t(9, 4)), t(9, 4) * 2)
    with pytest.raises(RuntimeError, match="must match"):  # no entry applies; eager raises
        compiled(t(9, 4), t(8, 4))


def test_recompile_reasons_name_the_shape_guard_as_torch_does():
    def reasons_of(compile_fn, frames_reset, failures):
        frames_reset()
        compiled = compile_fn(double, backend="eager")
        for shape in ((3,), (5,), (1,)):
            compiled(t(*shape))
        return [reason.split("\n")[0].split("  #")[0].strip() for reason in failures()]

    ours = reasons_of(minidynamo.compile, minidynamo.reset,
                      lambda: cache.lookup(double.__code__).failures)
    theirs = reasons_of(torch.compile, torch._dynamo.reset,
                        lambda: torch._dynamo.utils.guard_failures[double.__code__])
    assert ours == theirs == ["0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5",
                              "0/1: 2 <= x.size()[0]",
                              "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 1"]


def rows_unrolled(x):
    total = x[0]
    for row in x[1:]:  # the number of rows, needed as a number: specialized
        total = total + row
    return total


@pytest.mark.parametrize("compile_fn, mark", [(minidynamo.compile, minidynamo.mark_dynamic),
                                              (torch.compile, torch._dynamo.mark_dynamic)],
                         ids=["minidynamo", "torch"])
def test_a_marked_dimension_that_the_trace_specializes_is_an_error(compile_fn, mark):
    """The user said the dimension is dynamic; the trace needs its value: the ShapeEnv's
    check of the mark raises ConstraintViolationError, as on torch.compile (minidynamo
    specialized it silently)."""
    minidynamo.reset()
    torch._dynamo.reset()
    x = t(4, 3)
    mark(x, 0)
    with pytest.raises(ConstraintViolationError, match=r"L\['x'\]\.size\(\)\[0\]"):
        compile_fn(rows_unrolled, backend="eager")(x)


@pytest.mark.parametrize("mark", [minidynamo.mark_dynamic, torch._dynamo.mark_dynamic],
                         ids=["minidynamo", "torch"])
def test_mark_dynamic_makes_a_dimension_a_symbol_from_the_first_call(mark):
    minidynamo.reset()
    graphs = []
    compiled = minidynamo.compile(double, backend=lambda gm, inputs: graphs.append(gm) or gm)
    x = t(3, 4)
    mark(x, 0)
    compiled(x)
    assert [node.target for node in graphs[0].graph.nodes if node.op == "placeholder"] == \
        ["s77", "L_x_"]
    y = t(6, 4)
    mark(y, 0)
    compiled(y)
    assert len(graphs) == 1
    compiled(t(3, 4))  # not marked: reused, as torch.compile reuses it (marks are a subset)
    assert len(graphs) == 1
    z = t(3, 4)
    mark(z, 1)  # a mark the entry was not compiled with: a new entry
    compiled(z)
    assert len(graphs) == 2


def test_torch_compile_honours_minidynamos_mark():
    torch._dynamo.reset()
    graphs = []
    compiled = torch.compile(double, backend=lambda gm, inputs: graphs.append(gm) or gm)
    x = t(3, 4)
    minidynamo.mark_dynamic(x, 0)
    compiled(x)
    assert [node.target for node in graphs[0].graph.nodes if node.op == "placeholder"] == \
        ["s77", "L_x_"]


def test_mark_static_wins_over_dynamic_true():
    minidynamo.reset()
    graphs = []
    compiled = minidynamo.compile(double, dynamic=True,
                                  backend=lambda gm, inputs: graphs.append(gm) or gm)
    x = t(3, 4)
    minidynamo.mark_static(x, 0)
    compiled(x)
    example = next(node for node in graphs[0].graph.nodes if node.target == "L_x_")
    size = example.meta["example_value"].size()
    assert size[0] == 3 and isinstance(size[0], int) and not isinstance(size[1], int)


def test_parameters_keep_static_shapes():
    minidynamo.reset()
    graphs = []
    compiled = minidynamo.compile(NET, dynamic=True,
                                  backend=lambda gm, inputs: graphs.append(gm) or gm)
    compiled(t(3, 4))
    weight = next(node for node in graphs[0].graph.nodes if "weight" in node.name)
    assert tuple(weight.meta["example_value"].size()) == (3, 4)


def test_bad_marks_and_options_are_clear_errors():
    with pytest.raises(IndexError, match="out of range"):
        minidynamo.mark_dynamic(t(3), 1)
    with pytest.raises(TypeError, match="expect a tensor"):
        minidynamo.mark_static([1, 2], 0)
    with pytest.raises(TypeError, match="dynamic must be None, True or False"):
        minidynamo.compile(double, dynamic="yes")


MARK_SEQUENCES = {  # the dimensions marked dynamic on each call's fresh tensor (None: no mark)
    "fewer_marks_reuse": [[0, 1], [0]],
    "no_mark_reuses": [[0], None],
    "a_new_mark_recompiles": [None, [0]],
    "more_marks_recompile": [[0], [0, 1]],
    "another_dimension_recompiles": [[0], [1]],
}


@pytest.mark.parametrize("marks", list(MARK_SEQUENCES.values()), ids=list(MARK_SEQUENCES))
def test_mark_dynamic_entries_are_reused_for_a_subset_of_the_marks_as_torchs(marks):
    """torch 2.13's rule: an entry compiled for marked dimensions serves a tensor marked
    on a subset of them, or not at all; a mark it was not compiled with recompiles.
    Compile patterns and recompile reasons are torch.compile's."""
    def pattern(compile_fn, mark, compiles_so_far):
        compiled, result = compile_fn(double), []
        for dims in marks:
            x = t(3, 4)
            if dims is not None:
                mark(x, dims)
            before = compiles_so_far()
            assert_same_value(compiled(x), double(x))
            result.append(compiles_so_far() - before)
        return result

    torch._dynamo.reset()
    torch._dynamo.utils.guard_failures.clear()
    their_graphs = []
    theirs = pattern(lambda f: torch.compile(f, backend=lambda gm, _: their_graphs.append(gm) or gm),
                     torch._dynamo.mark_dynamic, lambda: len(their_graphs))
    minidynamo.reset()
    our_graphs = []
    ours = pattern(lambda f: minidynamo.compile(f, backend=lambda gm, _: our_graphs.append(gm) or gm),
                   minidynamo.mark_dynamic, lambda: len(our_graphs))
    assert ours == theirs
    their_reasons = [reason.splitlines()[0] for reason in
                     torch._dynamo.utils.guard_failures.get(double.__code__, [])]
    assert cache.lookup(double.__code__).failures == their_reasons
