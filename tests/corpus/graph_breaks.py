"""Graph-break corpus: programs on which ``torch.compile`` breaks the graph (chapters 6-7).

For each case minidynamo must do what TorchDynamo does: the same number of graphs
(partial graphs and resume functions included), the same ops per graph, break
reasons of the same kind at the same user lines; and what eager PyTorch does: the
same return values, every side effect applied exactly once.

Families: tensor-dependent ``if``/``while``/``and``/``or``; ``print`` and other
calls that cannot be traced (``.item()``, ``.tolist()``, C functions); breaks inside
inlined helpers, nested helpers and methods; several breaks in a row; live
containers, closures and NULLs on the stack at the break; breaks where torch.compile
gives up on the whole frame (inside ``try``, inside loops) or falls back to the last
statement boundary and runs the frame's own bytecode after it (a break no resume
function can follow, once the graph has two operations); breaks inside grad-mode
``with`` blocks, whose outputs must keep eager's ``requires_grad``; a module
constructed while tracing whose ``forward`` then breaks (both trace
``nn.Module.__init__``, with ``torch._C._log_api_usage_once`` in the first graph,
rebuild the new module at the break and compile its ``forward`` as a frame). Cases
tagged ``known_gap`` are breaks minidynamo does not yet handle like torch. An
object's method that breaks while the object, made while tracing, is live runs the
frame eagerly in both: neither rebuilds that bound method. (A callee called twice
natively reuses its cache entry; a frame that falls back to eager, and the bytecode
after a statement boundary, loops included, still have their callees compiled as
frames of their own, as PEP 523 gives torch: chapter 9.)
"""

from __future__ import annotations

import math

import torch

from . import Registry

CASES = Registry()
case = CASES.case

_generator = torch.Generator().manual_seed(1)


def t(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_generator)


def pos(*shape: int) -> torch.Tensor:
    return torch.rand(*shape, generator=_generator) + 0.5


def neg(*shape: int) -> torch.Tensor:
    return -pos(*shape)


LOG: list = []  # a global list that some programs append to


def quiet(*args):
    """An opaque call: a C function (`math.fsum`-style) torch.compile cannot trace."""
    return None


## Tensor-dependent branches ##############################################################


@case(pos(4))
@case(neg(4))
def if_sum_positive(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


@case(pos(3))
@case(neg(3))
def if_else_assign(x):
    y = x.sin()
    if y.mean() > 0:
        z = y * 2
    else:
        z = y * 3
    return z.cos()


@case(pos(3))
@case(neg(3))
def if_not(x):
    y = x + 1
    if not (y.sum() > 0):
        return y * 10
    return y


@case(pos(3))
@case(neg(3))
def and_condition(x):
    y = x * 2
    z = (y.sum() > 0) and (y.mean() < 10)
    return y + 1, z


@case(pos(3))
@case(neg(3))
def or_condition(x):
    y = x * 2
    z = (y.sum() > 0) or (y.mean() < 10)
    return y - 1, z


@case(pos(3), pos(3))
@case(pos(3), neg(3))
def if_two_inputs(x, y):
    a = x + y
    if a.sum() > 1:
        return a * x
    return a * y


@case(pos(3))
def if_live_locals(x):
    a = x * 2
    b = x * 3
    c = 5
    if a.sum() > 0:
        return a + b + c
    return a - b


@case(pos(3))
def if_unused_local(x):
    a = x * 2
    b = x * 3
    if a.sum() > 0:
        return a
    return a * 2


@case(pos(3))
@case(neg(3))
def ternary(x):
    y = x * 2
    z = y + 1 if y.sum() > 0 else y - 1
    return z * 3


@case(t(3))
def if_bool_call(x):
    y = x.abs()
    if bool(y.sum() > 0):
        return y + 1
    return y


@case(pos(2, 3))
def if_any(x):
    y = x - 0.6
    if (y > 0).any():
        return y.relu()
    return y


@case(pos(2, 3))
def if_all(x):
    y = x - 0.2
    if (y > 0).all():
        return y.sqrt()
    return y


@case(pos(3))
def while_once(x):
    while x.sum() < 10:
        x = x + 20
    return x


@case(pos(3))
def while_never(x):
    y = x * 2
    while y.sum() < 0:
        y = y + 1
    return y


@case(pos(3))
def nested_ifs(x):
    y = x * 2
    if y.sum() > 0:
        z = y + 1
        if z.mean() > 100:
            return z * 0
        return z * 2
    return y


@case(pos(3))
def two_ifs_in_a_row(x):
    y = x + 1
    if y.sum() > 0:
        y = y * 2
    if y.mean() > 0:
        y = y - 3
    return y


@case(pos(3))
def if_then_constant_code(x):
    n = 3
    y = x * n
    if y.sum() > 0:
        n = n + 1
    return y * n


@case(pos(3))
def if_scalar_tensor(x):
    s = x.sum()
    if s:
        return x / s
    return x


@case(pos(3))
def if_on_comparison_of_inputs(x):
    if x[0] > x[1]:
        return x[0] - x[1]
    return x[1] - x[0]


@case(pos(3))
def if_returns_tuple(x):
    y = x.exp()
    if y.max() > 1:
        return y, y.max()
    return y, None


@case(pos(3))
def if_keeps_list_live(x):
    parts = [x * 2, x * 3]
    if parts[0].sum() > 0:
        parts.append(x * 4)
    return sum(parts)


@case(pos(3))
def if_keeps_dict_live(x):
    d = {"a": x + 1, "b": 2}
    if d["a"].sum() > 0:
        d["c"] = d["a"] * d["b"]
    return d


@case(pos(3))
def if_keeps_tuple_live(x):
    pair = (x * 2, 3)
    if pair[0].sum() > 0:
        return pair[0] * pair[1]
    return pair[0]


@case(pos(3))
def if_with_constant_list(x):
    sizes = [1, 2, 3]
    y = x * len(sizes)
    if y.sum() > 0:
        sizes.append(4)
    return y + len(sizes)


## Calls that cannot be traced #############################################################


@case(t(3))
def print_between(x):
    y = x * 2
    print("between graphs")
    return y + 1


@case(t(3))
def print_tensor_value(x):
    y = x * 2
    print(y.shape)
    return y.sin()


@case(t(3))
def user_inserted_graph_break(x):
    y = x * 2
    torch._dynamo.graph_break()
    return y + 1


@case(t(3))
def user_inserted_graph_break_in_a_helper(x):
    return helper_with_a_graph_break(x * 2) + 1


def helper_with_a_graph_break(x):
    y = x.cos()
    torch._dynamo.graph_break()
    return y * 3


@case(t(3))
def print_first_line(x):
    print("first")
    return x * 2


@case(t(3))
def print_last(x):
    y = x * 2
    print("last")
    return y


@case(t(3))
def two_prints(x):
    y = x + 1
    print("one")
    y = y * 2
    print("two")
    return y - 3


@case(t(3))
def three_prints(x):
    a = x + 1
    print("a")
    b = a * 2
    print("b")
    c = b - 1
    print("c")
    return a + b + c


@case(pos(3))
def item_call(x):
    y = x * 2
    v = y.sum().item()
    return y + v


@case(pos(3))
def tolist_call(x):
    y = x * 2
    values = y.tolist()
    return y + 1, values


@case(pos(3))
def item_then_python(x):
    y = x + 1
    v = y.max().item()
    scale = v * 2 + 1
    return y * scale


@case(t(3))
def print_with_keyword(x):
    y = x * 2
    print("value", end="\n")
    return y + 1


@case(t(3))
def print_in_expression(x):
    y = x * 2
    return y + 1, print("inside a tuple")


@case(t(3))
def print_with_null_and_stack(x):
    y = x * 2
    return y + 1, len([print("stacked")]), y - 1


@case(t(3))
def print_args_from_tensor_ops(x):
    y = x * 2
    print("shape", y.shape, y.dtype)
    return y + 1


@case(t(3))
def break_then_if(x):
    y = x * 2
    print("first a print")
    if y.sum() > -100:
        return y + 1
    return y


@case(t(3))
def if_then_break(x):
    y = x * 2
    if y.sum() > -100:
        print("then a print")
        return y + 1
    return y


@case(t(3))
def log_global_then_print(x):
    LOG.append("before")
    y = x * 2
    print("logged")
    return y + 1


@case(t(3), [])
def mutate_input_then_print(x, out):
    out.append(1)
    y = x * 2
    print("mutated")
    out.append(2)
    return y


@case(t(3), {"k": 1})
def mutate_dict_then_break(x, d):
    d["k"] = d["k"] + 1
    y = x + d["k"]
    print("dict")
    d["j"] = 3
    return y


@case(t(3))
def closure_then_print(x):
    scale = 3

    def mul(v):
        return v * scale

    y = mul(x)
    print("closure")
    return mul(y)


@case(t(3))
def cell_written_after_break(x):
    total = 1

    def read():
        return total

    y = x * read()
    print("cell")
    total = 5
    return y * read()


## Breaks inside inlined helpers ###########################################################


def helper_print(x):
    print("helper")
    return x + 1


def helper_ops_then_print(x):
    y = x * 3
    print("helper after ops")
    return y - 1


def helper_if(x):
    if x.sum() > 0:
        return x * 2
    return x * -2


def helper_item(x):
    return x * x.sum().item()


def outer_helper(x):
    return helper_print(x * 2) * 3


@case(t(3))
def inlined_print(x):
    y = x * 2
    z = helper_print(y)
    return z * 3


@case(t(3))
def inlined_ops_then_print(x):
    y = x + 1
    z = helper_ops_then_print(y)
    return z.sin()


@case(pos(3))
@case(neg(3))
def inlined_if(x):
    y = x + 1
    z = helper_if(y)
    return z - 1


@case(pos(3))
def inlined_item(x):
    y = x + 1
    return helper_item(y) * 2


@case(t(3))
def nested_helpers(x):
    y = x - 1
    z = outer_helper(y)
    return z / 2


@case(t(3))
def helper_break_first_statement(x):
    return helper_print(x) * 2


@case(t(3))
def helper_twice(x):
    a = helper_print(x)
    b = helper_print(a)
    return a + b


@case(t(3))
def helper_with_keywords(x):
    def scaled(v, *, k):
        print("kw")
        return v * k

    y = x * 2
    return scaled(y, k=3) + 1


@case(t(3))
def nested_function_breaks(x):
    offset = 2

    def inner(v):
        print("inner")
        return v + offset

    y = x * 2
    return inner(y) * 3


@case(t(3))
def lambda_breaks(x):
    f = lambda v: print("lambda") or v * 2  # noqa: E731
    y = x + 1
    return f(y) - 1


class Scaler:
    def __init__(self, k):
        self.k = k

    def noisy(self, x):
        print("method")
        return x * self.k

    def __len__(self):
        return self.k


@case(t(3))
def method_breaks(x):
    # `s.noisy` is live at the break, a method of an object made while tracing: neither
    # compiler can rebuild it, so the frame runs eagerly and `noisy` compiles on its own
    s = Scaler(3)
    y = x + 1
    return s.noisy(y) + 1


@case(t(3), Scaler(2))
def input_method_breaks(x, s):
    y = x + 1
    return s.noisy(y) + 1


class Flag:
    def __init__(self, on):
        self.on = on

    def __bool__(self):
        return self.on


class TensorFlag:
    def __init__(self, t):
        self.t = t

    def __bool__(self):
        return bool(self.t.sum() > 0)


@case(t(3), Flag(True))
@case(t(3), Flag(False))
def user_bool_is_traced(x, flag):
    if flag:
        return x + 1
    return x - 1


@case(t(3), Scaler(0))
@case(t(3), Scaler(2))
def user_len_is_traced(x, s):
    if s:
        return x * 2
    return x


@case(pos(3))
@case(neg(3))
def user_bool_on_tensor_breaks(x):
    flag = TensorFlag(x * 2)
    y = x + 1
    if flag:
        return y * 2
    return y


@case(t(3))
def helper_result_in_container(x):
    return [helper_print(x), x * 2]


@case(t(3))
def helper_args_are_containers(x):
    def total(values):
        print("total")
        return values[0] + values[1]

    return total([x * 2, x * 3]) + 1


@case(t(3))
def helper_in_tuple_on_stack(x):
    y = x * 2
    return (y + 1, helper_print(y), y - 1)


@case(t(3))
def module_with_print(x):
    return PrintingModule()(x) + 1


class PrintingModule(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        print("module")
        return y + 1


CASES.add("printing_module_as_root", PrintingModule(), t(3))


class BranchModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.linear(x)
        if y.sum() > 0:
            return y.relu()
        return y.tanh()


CASES.add("branch_module", BranchModule(), t(2, 3))


## Many breaks in a row ###################################################################


@case(pos(3))
def four_breaks(x):
    y = x + 1
    print(1)
    y = y * 2
    if y.sum() > 0:
        y = y - 1
    print(2)
    y = y.sin()
    v = y.sum().item()
    return y + v


@case(t(3))
def break_between_pure_python(x):
    a = [1, 2]
    print("a")
    a.append(3)
    print("b")
    return x * sum(a)


@case(t(3))
def break_with_no_tensor_work(x):
    print("nothing before")
    print("nothing after")
    return x


@case(t(3))
def break_before_return_constant(x):
    y = x * 2
    print("then a constant")
    return 7


@case(t(3), 4)
def break_with_int_argument(x, n):
    y = x * n
    print("int")
    return y + n


@case(t(3), "tag")
def break_with_string_argument(x, name):
    y = x * 2
    print(name)
    return y, name + "!"


@case(t(3), t(3))
def break_keeps_two_inputs(x, y):
    a = x * 2
    print("two")
    return a + y


@case(t(3))
def break_in_argument_evaluation(x):
    return torch.add(x * 2, x.sum().item())


@case(t(3))
def break_with_method_on_stack(x):
    y = x * 2
    return y.add(y.sum().item())


@case(t(3))
def break_in_list_building(x):
    y = x + 1
    values = [y * 2, print("in a list"), y * 3]
    return values[0] + values[2]


@case(t(3))
def break_in_dict_building(x):
    y = x + 1
    d = {"a": y * 2, "b": print("in a dict")}
    return d["a"]


@case(t(3))
def break_in_fstring(x):
    y = x + 1
    text = f"{print('fstring')}"
    return y, text


@case(t(3))
def break_in_binary_operand(x):
    y = x + 1
    return y * (x.sum().item() + 1)


## No resume function possible: the last statement boundary, then the original bytecode ##


@case(t(3))
def print_in_try_after_two_ops(x):
    y = x * 2
    z = y + 1
    try:
        print("try")
    except ValueError:
        pass
    return z * 3


@case(pos(3))
@case(neg(3))
def if_in_try_after_two_ops(x):
    y = x * 2
    z = y.sin()
    try:
        if z.sum() > 0:
            z = z + 1
    finally:
        LOG.append("finally")
    return z * y


@CASES.tag("inductor")
@case(t(3), [1.0])
def statement_boundary_keeps_locals_and_mutations(x, items):
    y = x.cos()
    z = y * 2
    items.append(2.0)
    pair = [z, y]
    scale = 3

    def times():
        return scale

    try:
        print("in try")
    except ValueError:
        pass
    items.append(z)
    return pair[0] * times() + pair[1], len(items)


@case(t(3))
def statement_boundary_in_a_resume_function(x):
    y = x * 2
    print("first")
    z = y + 1
    w = z * 3
    try:
        print("second")
    except ValueError:
        pass
    return w - 1


def sin_twice(v):
    return v.sin() * 2


@case(t(3))
def helper_after_statement_boundary(x):
    y = x * 2
    z = y + 1
    try:
        print("try")
    except ValueError:
        pass
    return sin_twice(z)


@case(t(3))
def helper_in_loop_after_statement_boundary(x):
    y = x * 2
    z = y + 1
    try:
        print("try")
    except ValueError:
        pass
    for _ in range(2):
        z = sin_twice(z)
    return z


class Doubling(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Guarded(Doubling):
    def forward(self, x):
        y = x.sin()
        z = y.cos()
        try:
            print("guarded")
        finally:
            LOG.append("done")
        return super().forward(z) + self.bias(z)

    def bias(self, z):
        return z.mean()


CASES.add("module_methods_after_statement_boundary", Guarded(), t(3))


@case(t(3), 2)
def print_in_try_in_while_loop(x, n):
    y = x.sin()
    z = y.cos()
    k = 0
    while k < n:
        try:
            print("loop")
        finally:
            k += 1
    return z + k


@case(pos(3))
@case(neg(3))
def user_bool_on_tensor_in_while(x):
    y = x * 2
    z = y + 1
    n = 0
    while TensorFlag(z - n):
        n += 1
    return z * n


## Where torch.compile gives up on the whole frame ########################################


@case(t(3))
def print_in_try(x):
    y = x * 2
    try:
        print("try")
    except ValueError:
        pass
    return y + 1


@case(pos(3))
def if_in_try(x):
    y = x * 2
    try:
        if y.sum() > 0:
            y = y + 1
    finally:
        y = y * 2
    return y


class Doubler(torch.nn.Module):
    def forward(self, u):
        return u * 2


@case(t(3), Doubler())
def callees_of_a_frame_run_eagerly(x, double):
    # the frame runs eagerly; each frame it calls is compiled as a frame of its own, as
    # PEP 523 gives torch every frame: a module passed in, a closure, a lambda
    try:
        print("try")
    except ValueError:
        pass
    y = double(x)

    def inner():
        return y + 1

    z = inner()
    return (lambda: z * 3)()


@case(t(3))
def print_in_for_loop(x):
    for i in range(2):
        x = x * 2
        print(i)
    return x


@case(pos(3))
def if_in_for_loop(x):
    for _ in range(2):
        if x.sum() > 0:
            x = x - 0.1
    return x


@case(t(3))
def item_in_loop(x):
    total = 0.0
    for i in range(2):
        total += (x * i).sum().item()
    return x + total


@case(t(3))
def helper_break_in_loop(x):
    for _ in range(2):
        x = helper_print(x)
    return x


## with blocks: grad mode is left before each partial graph ends and entered again #######
## around the breaking instruction and in the resume function, as torch.compile does ######


def needs_grad(*shape: int) -> torch.Tensor:
    return t(*shape).requires_grad_()


@case(needs_grad(3))
def print_in_no_grad(x):
    y = x * 2
    with torch.no_grad():
        print("in")
        z = y + 1
    return z * 2, y


@case(pos(3).requires_grad_())
@case(neg(3).requires_grad_())
def if_in_no_grad(x):
    with torch.no_grad():
        y = x * 2
        if y.sum() > 0:
            y = y + 1
    return y, x * 3


@case(needs_grad(3))
def print_in_nested_grad_blocks(x):
    with torch.enable_grad():
        with torch.no_grad():
            z = x.cos()
            print("a")
            z = z + 1
        z = z * x
    return z


@case(needs_grad(3))
def print_in_set_grad_enabled_false(x):
    with torch.set_grad_enabled(False):
        y = x * 3
        print("b")
    return y, x + 1


@case(needs_grad(3))
def no_grad_without_break(x):
    with torch.no_grad():
        y = x * 2
    return y + 1, x * y


@case(needs_grad(3))
def item_in_no_grad(x):
    with torch.no_grad():
        scale = x.sum().item()
        y = x * scale
    return y, x * 2


@case(needs_grad(3))
def helper_break_in_no_grad(x):
    with torch.no_grad():
        y = helper_print(x)
    return y + x


@CASES.tag("inductor")
@case(needs_grad(3))
def two_breaks_in_no_grad(x):
    with torch.no_grad():
        print("one")
        y = x + 1
        print("two")
        y = y * 2
    return y, x - 1


@case(needs_grad(3))
def enable_grad_inside_no_grad_with_break(x):
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            print("inner")
            b = x * 3
    return a, b


## Values that cross a break: read as they were, before anything is written back ########
# The generated code reads every value it passes on before it replays a mutation or fills
# a cell (codegen.py, "read everything, then write"); minimal programs from the fuzzer.


@case(torch.tensor([1.0, 2.0]))
def cell_rebound_between_two_breaks(x):
    t0 = x
    x.tolist()
    t0 = t0 * 2  # t0 is a cell of the lambda; x was first seen through it
    v = x.tolist()
    return v[0], (lambda: t0)()


@case(torch.tensor([9.0]), [torch.full((1,), float(i)) for i in range(3)])
def item_of_list_mutated_before_break(x, xs):
    t1 = xs[1]
    xs.insert(0, x)
    x.tolist()
    xs.insert(0, t1)
    return xs


@case(t(2), [t(2), t(2)], [t(2)])
def item_moved_between_two_input_lists(x, xs, ys):
    first = xs[0]
    xs.reverse()
    ys.append(first)
    print("break")
    return x + ys[-1] + xs[0]


class Box:
    def __init__(self, value):
        self.value = value


@case(t(2), Box(t(2)))
def attribute_overwritten_before_break(x, box):
    old = box.value
    box.value = x * 2
    print("break")
    return old + box.value


@case(t(2), {"a": t(2), "b": t(2)})
def dict_item_replaced_before_break(x, d):
    a = d["a"]
    d["a"] = d["b"]
    d["b"] = x
    x.tolist()
    return a + d["a"] + d["b"]
