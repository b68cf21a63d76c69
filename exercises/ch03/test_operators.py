"""Graded tests for chapter 3: operators (ch03.1), builtins (ch03.2), constants' methods
(ch03.3) and tensor attributes (ch03.4).

Every program runs eagerly (values), under torch.compile (the reference graph) and under
minidynamo with the task plugged; values, graphs, placeholders and op arguments must agree,
and before every instruction the symbolic stack must be as deep as CPython's (the stack
oracle). A program that must break checks the break's message too: it names the kind of
break and the operation, as every graph break does.
"""

from __future__ import annotations

import collections
import os

import pytest
import torch

import minidynamo

from minidynamo.testing import (
    Call,
    assert_same_as_torch,
    compare_with_eager,
    normalize_graph,
    placeholder_names,
    run_eager,
    run_minidynamo,
)

from . import samples


def run(program, *shapes, fullgraph=True):
    """The program on random inputs: the same as torch.compile, and CPython's stack depths."""
    shapes = shapes or ((4, 4),) * program.__code__.co_argcount
    inputs = samples.tensors(*shapes)
    comparison = assert_same_as_torch(program, *inputs, fullgraph=fullgraph)
    samples.assert_stack_depths_match(program, *inputs)
    return comparison


def first_break(comparison):
    """The first line of minidynamo's first graph break in a comparison's run."""
    assert comparison.minidynamo.graph_breaks, comparison.report()
    return comparison.minidynamo.graph_breaks[0].splitlines()[0]


# -- ch03.1: call_operator ----------------------------------------------------------------


@pytest.mark.task("ch03.1")
@pytest.mark.parametrize("program", [samples.folding, samples.reflected, samples.containers,
                                     samples.user_objects, samples.constant_and_list],
                         ids=lambda p: p.__name__)
def test_operator_rules_match_torch(program):
    run(program)


def tuple_grows(x, y):
    pair = (x,)
    pair += (y, 2)          # a tuple has no __iadd__: `+=` falls back to `+`
    return pair[0] * pair[2] + pair[1]


def item_of_a_list(xs):
    return xs[1] + 1        # xs[0] is never read: it must not become a graph input


@pytest.mark.task("ch03.1")
def test_in_place_operator_falls_back_to_the_plain_one():
    run(tuple_grows)


def size_grows(x):
    n = x.shape[0]          # a symbol with dynamic=True: `n += 1` is a node
    n += 1
    before = n              # the old value: an int is never updated in place
    n += 1
    return x.sum() + before, n, before


@pytest.mark.task("ch03.1")
def test_in_place_operator_on_a_symbol_is_the_plain_one():
    """FX writes an `iadd` node as `iadd += 1`, which rebinds the name every alias of the
    old value reads: `before` would become `n`. torch.compile records `add`."""
    assert_same_as_torch(size_grows, torch.randn(5), dynamic=True)


@pytest.mark.task("ch03.1")
@pytest.mark.parametrize("container", [list, tuple])
def test_an_item_of_a_list_leaves_the_other_items_lazy(container):
    """A list (mutable, never folded) and a tuple (immutable: asking whether it is a
    constant would read its items in order, the first tensor first)."""
    x, y = samples.tensors((4, 4), (4, 4))
    comparison = assert_same_as_torch(item_of_a_list, container([x, y]), fullgraph=True)
    assert placeholder_names(comparison.minidynamo.graphs[0]) == \
        placeholder_names(comparison.torch.graphs[0])
    samples.assert_stack_depths_match(item_of_a_list, container([x, y]))
    # xs[0] never read is never guarded either: a new xs[0] reuses the entry, as in torch
    for compile_fn, reset in ((torch.compile, torch._dynamo.reset),
                              (minidynamo.compile, minidynamo.reset)):
        reset()
        graphs = []
        compiled = compile_fn(item_of_a_list,
                              backend=lambda gm, _: graphs.append(gm) or gm.forward)
        compiled(container([x, y]))
        compiled(container([torch.randn(2, 3, dtype=torch.float64), y]))
        assert len(graphs) == 1, compile_fn


@pytest.mark.task("ch03.1")
def test_seed_g_folds_and_unrolls():
    """Seed 001's g: three muls by 2, 3, 4 and three adds, the same graph as torch.compile."""
    comparison = run(samples.g, (8,))
    ops = [name for kind, name in normalize_graph(comparison.minidynamo.graphs[0])
           if kind == "call_function"]
    assert ops == ["operator.mul"] * 3 + ["operator.add"] * 3


# -- ch03.2: BuiltinVariable.call_function ------------------------------------------------


@pytest.mark.task("ch03.2")
@pytest.mark.parametrize("program", [samples.builtins_mix, samples.iteration_builtins, samples.g],
                         ids=lambda p: p.__name__)
def test_builtins_match_torch(program):
    run(program)


def makes_a_class(x, y):
    Pair = collections.namedtuple("Pair", "a b")   # a class made at trace time
    pair = Pair(x, b=y)
    return pair.a - pair.b


def rounds(x):
    return x * round(2.567, ndigits=2)            # a pure builtin folds, keywords too


def folds_pure_builtins(x):
    quotient, remainder = divmod(17, 5)           # no handler of its own: folded, run now
    return x * pow(2, 5, mod=7) + quotient * 10 + remainder + int(chr(ord("0") + 3))


def pair_with_a_default(x, y):
    Pair = collections.namedtuple("Pair", ["a", "b"], defaults=[3])   # a keyword of the factory
    return x * Pair(x).b, Pair(x, y).b


@pytest.mark.task("ch03.2")
@pytest.mark.parametrize("program", [makes_a_class, rounds, folds_pure_builtins,
                                     pair_with_a_default],
                         ids=lambda p: p.__name__)
def test_builtins_that_fold_at_trace_time(program):
    run(program)


def module_name(x):
    return x * 2, globals()["__name__"]   # the caller's globals: not the tracer's own


@pytest.mark.task("ch03.2")
def test_a_builtin_that_is_not_pure_breaks_instead_of_running_at_trace_time():
    """Only pure builtins run at trace time. globals() reads the frame that calls it: run
    by the tracer it would answer for one of minidynamo's modules. It is a graph break,
    and the frame calls it itself, as torch.compile's does."""
    comparison = run(module_name, fullgraph=False)
    assert "(unsupported builtin call): builtin globals() with arguments []" in first_break(comparison)


def working_directory(x):
    return x * len(os.getcwd())   # C code, but not from the builtins module


@pytest.mark.task("ch03.2")
def test_c_code_outside_the_builtins_module_is_a_skipped_call():
    """TorchDynamo tells two untraceable C functions apart: one of the builtins module is
    "Failed to trace builtin operator", one of any other module (os.getcwd) is "Attempted
    to call function marked as skipped". minidynamo's kinds follow: "unsupported builtin
    call", and "unsupported call"."""
    comparison = run(working_directory, fullgraph=False)
    assert "(unsupported call): builtin getcwd() with arguments []" in first_break(comparison)


# -- ch03.3: ConstantVariable.call_method -------------------------------------------------


def splits(x):
    head, rest = "a-b-c".split(sep="-", maxsplit=1)
    return x * len(rest) + len(head)


@pytest.mark.task("ch03.3")
def test_a_method_with_keyword_arguments_folds():
    run(splits)


@pytest.mark.task("ch03.3")
def test_string_methods_fold():
    comparison = run(samples.strings)
    ops = normalize_graph(comparison.minidynamo.graphs[0])
    assert ops == normalize_graph(comparison.torch.graphs[0])
    assert [kind for kind, _ in ops] == ["placeholder", "call_function"]  # x * scale, folded


@pytest.mark.task("ch03.3")
@pytest.mark.parametrize("name", ["ReLU ", "sigmoid", " TANH"])
def test_a_folded_method_picks_the_torch_function(name):
    x, = samples.tensors((5,))
    assert_same_as_torch(samples.activation_by_name, x, name, fullgraph=True)
    samples.assert_stack_depths_match(samples.activation_by_name, x, name)


def labelled(x):
    y = x * 2
    return y + 1, "sum={}".format(y.sum())   # a tensor argument: nothing to fold


@pytest.mark.task("ch03.3")
def test_a_method_with_a_tensor_argument_is_an_unsupported_call():
    """str.format(tensor) cannot fold: an "unsupported call" break naming the method (not
    an "exception in traced code": the user's code raises nothing), and the frame runs
    the call itself."""
    comparison = run(labelled, (3,), fullgraph=False)
    assert "(unsupported call): str.format() with non-constant arguments" in first_break(comparison)


# -- ch03.4: TensorVariable.var_getattr ---------------------------------------------------


def returns_transpose(x):
    return x.T, x.mT.sum()


def transpose_of_a_result(x):
    y = x + 1
    return y.T, y.mT                 # y is no input: its attributes have no source to reload


def data_of_an_input_and_of_a_result(x):
    y = x * 2
    return y.data + 1, x.data.sum()  # torch.compile records `_get_data_attr(x)`


def missing_attribute(x):
    return x.no_such_attribute       # eager raises AttributeError


def real_part_of_a_real_tensor(x):
    return x.real is x, x.real * 2, x.real   # eager: the tensor itself


def transposed_in_place_then_written(x):
    v = x.T                          # a new tensor on every read, as in eager
    v.t_()                           # in place: its layout is x's again (a graph break)
    v[0].fill_(5)                    # row 0 of x
    return v, v, x


@pytest.mark.task("ch03.4")
@pytest.mark.parametrize("program", [returns_transpose, transpose_of_a_result,
                                     data_of_an_input_and_of_a_result],
                         ids=lambda p: p.__name__)
def test_a_returned_attribute_matches_torch(program):
    run(program)


def probes_attributes(x):
    return x * getattr(x, "scale_factor", 2) + hasattr(x, "shape") + 10 * hasattr(x, "nope")


@pytest.mark.task("ch03.4")
def test_the_real_part_of_a_real_tensor_is_the_tensor():
    """`x.real` of a real tensor is `x` itself in eager. Its node's FakeTensor is x's,
    so the tracker of its result is x's (the operation that returns its input gives the
    input's tracker back), and `is` answers True while tracing. torch.compile makes a
    tracker of the node and computes `x.real * 2` with it: the values agree, the
    arguments of that multiplication do not."""
    x = samples.tensors((3,))[0]
    comparison = assert_same_as_torch(real_part_of_a_real_tensor, x, fullgraph=True,
                                      ignore=("op arguments",))
    assert comparison.minidynamo.outcomes[0].value[0] is True


@pytest.mark.task("ch03.4")
def test_a_tensor_attribute_is_one_object_however_often_it_is_used():
    """`v = x.T` is a new tensor, reloaded from `L['x'].T` when the generated code needs
    it (`FreshAttrSource`, read once per piece of code): what the frame does to it in
    place, and that it is one object, must survive the graph break at `t_()`."""
    comparison = run(transposed_in_place_then_written, (3, 3), fullgraph=False)
    first, second, _ = comparison.minidynamo.outcomes[0].value
    assert first is second


@pytest.mark.task("ch03.4")
def test_an_attribute_tensors_lack_raises_attribute_error():
    """An attribute torch.Tensor does not have raises AttributeError, symbolically
    (chapter 8): uncaught, the frame runs eagerly and raises eager's AttributeError, and
    the break names the attribute."""
    comparison = run(missing_attribute, (3,), fullgraph=False)
    assert "AttributeError(\"'Tensor' object has no attribute 'no_such_attribute'\"" in \
        first_break(comparison)


def reads_a_user_attribute(x):
    return x * 2, hasattr(x, "tag"), x * x.tag, getattr(x, "missing", 5)


@pytest.mark.task("ch03.4")
def test_an_attribute_set_on_an_input_tensor_is_read_in_one_graph():
    """`x.tag = 3` outside the compiled function: `hasattr(x, "tag")` is True and `x.tag`
    is 3, read from the real tensor with its source `L['x'].tag` (`own_attribute`), and
    `x.missing` raises AttributeError (which `getattr` catches): one graph, as
    torch.compile. A var_getattr that answers "no such attribute" for every name the
    Tensor class lacks gets the wrong answer; one that breaks the graph loses the graph."""
    x = samples.tensors((3,))[0]
    x.tag = 3
    comparison = assert_same_as_torch(reads_a_user_attribute, x, fullgraph=True)
    assert comparison.minidynamo.outcomes[0].value[1] is True
    assert not comparison.minidynamo.graph_breaks


def attributes_of_a_result(x):
    y = x * 2
    return y, hasattr(y, "tag"), getattr(y, "scale", 1.5)


@pytest.mark.task("ch03.4")
def test_a_missing_attribute_of_a_result_is_an_attribute_error():
    """A tensor made in the frame has no attributes of its own yet: `hasattr` is False and
    `getattr` gives its default, in one graph, as torch.compile."""
    x = samples.tensors((3,))[0]
    comparison = assert_same_as_torch(attributes_of_a_result, x, fullgraph=True)
    assert comparison.minidynamo.outcomes[0].value[1:] == (False, 1.5)


def reads_the_gradient_function(x):
    y = x * 2
    return y, type(y.grad_fn).__name__


def reads_whether_it_retains_its_gradient(x):
    return x * 2, x.retains_grad


@pytest.mark.task("ch03.4")
@pytest.mark.parametrize("fn, attribute", [
    (reads_the_gradient_function, "grad_fn"),
    (reads_whether_it_retains_its_gradient, "retains_grad"),
])
def test_what_the_tracker_does_not_model_breaks_and_gives_eagers_value(fn, attribute):
    """A result computed from an input that requires grad has a `grad_fn`, autograd's
    graph, which the tracker does not model (neither does torch.compile);
    `x.retains_grad` is an attribute of the Tensor class this chapter's tracker does
    not model either. The graph breaks there (MD0005, naming the attribute), and the
    value is eager's (`MulBackward0`, False), neither an AttributeError nor a made-up
    one."""
    x = samples.tensors((3,))[0].requires_grad_()
    calls = [Call((x,))]
    eager = run_eager(fn, calls)
    mine = run_minidynamo(fn, calls)
    assert not compare_with_eager(eager, mine)
    assert f"(unsupported attribute): Tensor attribute '{attribute}'" in \
        mine.graph_breaks[0].splitlines()[0]


def branches_on_the_gradient_function(x):
    y = x * 2
    if y.grad_fn is None and x.grad_fn is None:
        return y + 1
    return y - 1


def version_before_and_after(x):
    before = x._version
    x.mul_(2)
    return x + (x._version - before)


@pytest.mark.task("ch03.4")
def test_no_gradient_function_is_none_in_one_graph():
    """`grad_fn` of a tensor that has none (the FakeTensor of a result made without
    grad; the real tensor behind an input that is a leaf, guarded) is None while
    tracing: one graph, as torch.compile."""
    x = samples.tensors((3,))[0]
    assert_same_as_torch(branches_on_the_gradient_function, x, fullgraph=True)
    assert_same_as_torch(branches_on_the_gradient_function, x.clone().requires_grad_(),
                         fullgraph=False)


def versions_returned(x):
    y = x * 2
    y.add_(1)
    return x * 2, x._version, y._version    # y's is the graph's answer; x's is read after it


@pytest.mark.task("ch03.4")
def test_the_version_counter_is_read_when_the_graph_runs():
    """`x._version` is torch's `_tensor_version` operation in the graph, not the number
    the FakeTensor had while tracing: the in-place `mul_` shows in it. An input's
    version that leaves the graph is read from the input after it (its source
    `L['x']._version`): AOTAutograd's functionalization folds the operation to a
    constant, so under aot_eager a version returned from the graph stays 0."""
    assert_same_as_torch(version_before_and_after, samples.tensors((3,))[0], fullgraph=True)
    minidynamo.reset()
    compiled = minidynamo.compile(versions_returned, backend="aot_eager")
    x = samples.tensors((3,))[0]
    for _ in range(3):
        x.add_(1)
        assert compiled(x)[1:] == versions_returned(x)[1:]


def leaf_or_not(x):
    return x.is_leaf, x * 2 if x.is_leaf else x * 3


@pytest.mark.task("ch03.4")
def test_an_inputs_is_leaf_is_guarded():
    """`x.is_leaf` of an input is not what its TENSOR_MATCH checks: a leaf, then a
    computed tensor of the same shape and dtype (`w * 1`), must not share one answer
    (a guard on `L['x'].is_leaf`; torch.compile 2.13 keeps the first answer of the
    branch). Computed in the frame, `y.is_leaf` is the FakeTensor's, no guard."""
    w = samples.tensors((2,))[0].requires_grad_()
    minidynamo.reset()
    compiled = minidynamo.compile(leaf_or_not, backend="eager")
    for x in (w, w * 1, w):
        flag, value = compiled(x)
        want_flag, want = leaf_or_not(x)
        assert flag == want_flag and torch.equal(value, want)
    assert_same_as_torch(computed_is_leaf, samples.tensors((2,))[0], fullgraph=True)


def computed_is_leaf(x):
    y = x * 2
    return y + 1 if y.is_leaf else y - 1


def reads_the_gradient(x):
    return x * 2 if x.grad is None else x - 0.1 * x.grad


@pytest.mark.task("ch03.4")
@pytest.mark.parametrize("has_grad", [False, True])
def test_the_gradient_of_an_input_is_read_as_an_input(has_grad):
    """`x.grad` of an input is None (guarded) or another input of the graph, as
    torch.compile reads it: an optimizer's `if p.grad is None` is one graph."""
    x = samples.tensors((3,))[0].requires_grad_()
    if has_grad:
        x.grad = samples.tensors((3,))[0]
    assert_same_as_torch(reads_the_gradient, x, fullgraph=True)


@pytest.mark.task("ch03.4")
def test_hasattr_and_getattr_defaults_on_a_tensor_are_one_graph():
    """`hasattr` and `getattr(x, name, default)` catch that AttributeError: one graph, as
    torch.compile."""
    run(probes_attributes, (3,))


@pytest.mark.task("ch03.4")
@pytest.mark.parametrize("program", [samples.attributes, samples.shape_arithmetic],
                         ids=lambda p: p.__name__)
def test_tensor_attributes_match_torch(program):
    run(program, (3, 5))


def sizes_in_bytes(x):
    return x * x.itemsize, x.nbytes, x.is_leaf, x.is_cpu


@pytest.mark.task("ch03.4")
def test_other_data_descriptors_are_read_with_a_kept_node():
    """`x.itemsize`, `x.nbytes`, `x.is_leaf`: answered from the FakeTensor, and each read
    is a `getattr` node that torch.compile keeps though nothing uses it."""
    comparison = run(sizes_in_bytes, (3, 5))
    reads = [node.args[1] for node in comparison.minidynamo.graphs[0].graph.nodes
             if node.target is getattr]
    assert reads == ["itemsize", "nbytes", "is_leaf", "is_cpu"]


def bytes_per_row(x):
    return x.sum(1) * x.nbytes, x.nbytes


@pytest.mark.task("ch03.4")
def test_nbytes_of_a_dynamic_tensor_is_numel_times_itemsize():
    """With a dynamic size the FakeTensor cannot answer `nbytes` (torch.compile fails
    there): it is `x.numel() * itemsize`, symbolic, one graph that serves every size."""
    fn = minidynamo.compile(bytes_per_row, backend="eager", fullgraph=True, dynamic=True)
    for rows in (3, 5):
        x, = samples.tensors((rows, 4))
        result, eager = fn(x), bytes_per_row(x)
        torch.testing.assert_close(result[0], eager[0])
        assert result[1] == eager[1] == rows * 4 * 4


# -- chapter 9's dynamic sizes reach these rules too ------------------------------------------


def rows_halved(x):
    rows = x.shape[0]              # with dynamic=True, the symbol s77: not a constant
    return x.view(rows // 2, -1) * (rows + 1)


@pytest.mark.task("ch03.1")
def test_arithmetic_on_a_symbolic_size_is_a_graph_node():
    """`rows // 2` on a SymNodeVariable (chapter 9) cannot fold: a node, as in torch's graph."""
    x, = samples.tensors((4, 3))
    comparison = assert_same_as_torch(rows_halved, x, fullgraph=True, dynamic=True)
    assert "s77" in placeholder_names(comparison.minidynamo.graphs[0])


def repeated_by_a_size(x):
    halves = [x, x * 2] * (x.shape[0] // 2)  # a list times a symbol: the list's rule
    return torch.cat(halves)


@pytest.mark.task("ch03.1")
def test_a_list_repeated_by_a_symbolic_size_is_a_list():
    """`[x, y] * s`: a symbol does not make every operator a graph node. Only when every
    operand is a symbol or a constant is it one; a list operand goes to the list's rule,
    which specializes the symbol, as torch.compile does."""
    x, = samples.tensors((4, 3))
    assert_same_as_torch(repeated_by_a_size, x, fullgraph=True, dynamic=True)


@pytest.mark.task("ch03.4")
def test_the_shape_of_a_dynamic_tensor_holds_its_symbols():
    """`x.shape` with a dynamic size (chapter 9): a SizeVariable with a SymNodeVariable."""
    x, = samples.tensors((4, 3))
    assert_same_as_torch(rows_halved, x, fullgraph=True, dynamic=True)
