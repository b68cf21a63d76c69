"""Graded tests for CheckFunction.generate (ch09.3): the check function as Python source.

Your `generate` turns an entry's guards into `def ___check(L, G)`, which every call runs
before it reuses the entry: True only when every guard holds, False otherwise, and False
too when the input is not even shaped like the guarded one (a key or an attribute that
is gone). Each case changes one thing between calls (a Python argument, a container, an
object, a module, a closure, a function, grad mode, aliasing) and compares where
minidynamo traces again with torch.compile, call for call, and every value with eager's.
The source itself is what `show_guards` prints: one `if not (...)` per guard, in order,
with the guard's kind and user line as a comment, and each source read once into a local.
"""

from __future__ import annotations

import contextlib
import re

import pytest
import torch

import minidynamo
from minidynamo.guards import eval_source

from . import programs
from .programs import Call, check_recompiles, entry_of, same_then, t


@contextlib.contextmanager
def fc_replaced_by_a_function(net):
    """`net.fc` is a plain function for one call: `net._modules['fc']` is gone."""
    fc = net.fc
    del net.fc
    net.fc = lambda x: x - 1
    try:
        yield
    finally:
        del net.fc
        net.fc = fc


def around_net(change):
    net = programs.Net()
    return [Call(lambda: (t(2, 4), net)), Call(lambda: (t(2, 4), net)),
            Call(lambda: (t(2, 4), net), lambda: change(net)),
            Call(lambda: (t(2, 4), net), lambda: change(net)), Call(lambda: (t(2, 4), net))]


def distinct():
    return t(3), t(3)


def aliased():
    a = t(3)
    return a, a


CASES = {
    "tensor_size": (programs.affine, same_then(lambda: (t(3),), lambda: (t(4),))),
    "int_argument": (programs.scaled, same_then(lambda: (t(3), 2), lambda: (t(3), 3))),
    "int_to_float": (programs.scaled, same_then(lambda: (t(3), 2), lambda: (t(3), 2.0))),
    "none_argument": (programs.branch_on_none, same_then(lambda: (t(3),), lambda: (t(3), 3.0))),
    "string_argument": (programs.on_string,
                        same_then(lambda: (t(3), "sum"), lambda: (t(3), "mean"))),
    "list_length": (programs.over_list,
                    same_then(lambda: ([t(3), t(3)],), lambda: ([t(3)] * 3,))),
    "list_item": (programs.over_list,
                  same_then(lambda: ([t(3), 1, 2],), lambda: ([t(3), 1, 5],))),
    "keys_that_spell_G": (programs.scale_by_name, same_then(lambda: (t(3), "GPT2"),
                                                            lambda: (t(3), "Gemma"))),
    "dict_keys": (programs.over_dict,
                  same_then(lambda: (t(3), {"a": 1}), lambda: (t(3), {"a": 1, "b": 2}))),
    "dict_value": (programs.over_dict,
                   same_then(lambda: (t(3), {"a": 1}), lambda: (t(3), {"a": 4}))),
    "object_type": (programs.call_method, same_then(lambda: (t(3), programs.Holder(1.0)),
                                                    lambda: (t(3), programs.OtherHolder(1.0)))),
    "object_attribute": (programs.call_method, same_then(lambda: (t(3), programs.Holder(1.0)),
                                                         lambda: (t(3), programs.Holder(2.0)))),
    "closure_cell": (programs.call_arg, same_then(lambda: (t(3), programs.CLOSURE_TWO),
                                                  lambda: (t(3), programs.CLOSURE_THREE))),
    "function_argument": (programs.call_arg, same_then(lambda: (t(3), programs.double),
                                                       lambda: (t(3), programs.triple))),
    "grad_mode": (programs.needs_grad,
                  [Call(lambda: (t(3, requires_grad=True),)),
                   Call(lambda: (t(3, requires_grad=True),)),
                   Call(lambda: (t(3, requires_grad=True),), torch.no_grad),
                   Call(lambda: (t(3, requires_grad=True),), torch.no_grad),
                   Call(lambda: (t(3, requires_grad=True),))]),
    "aliased_inputs": (programs.add_pair,
                       [Call(distinct), Call(distinct), Call(aliased), Call(aliased),
                        Call(distinct)]),
    "module_attribute": (programs.run_net,
                         around_net(lambda net: programs.set_attribute(net, "alpha", 0.25))),
    "submodule_gone": (programs.run_net, around_net(fc_replaced_by_a_function)),
}


@pytest.mark.task("ch09.3")
@pytest.mark.parametrize("fn, calls", CASES.values(), ids=CASES)
def test_the_check_says_yes_exactly_where_torch_reuses_its_entry(fn, calls):
    pattern = check_recompiles(fn, calls)
    assert pattern[:2] == [1, 0], "a second identical call must reuse the entry"


@pytest.mark.task("ch09.3")
def test_an_input_without_the_guarded_keys_fails_the_check():
    minidynamo.compile(programs.scaled)(t(3), 2)
    check = entry_of(programs.scaled).check
    assert check.check({"x": t(3), "n": 2}, programs.__dict__) is True
    assert check.check({"x": t(3), "n": 3}, programs.__dict__) is False
    assert check.check({"x": t(3)}, programs.__dict__) is False   # KeyError: no L['n']
    assert check.check({}, programs.__dict__) is False


GUARD_LINE = re.compile(r"        if not \((?P<code>.*)\):  # (?P<kind>[A-Z_]+)(?:: (?P<where>.*))?")
FETCH_LINE = re.compile(r"        (?P<local>___v\d+) = (?P<expression>.*)")


def sources_read(guards) -> set[str]:
    """The name of every source the guards have, and of the sources they are built on."""
    names = set()
    for guard in guards:
        for source in guard.sources():
            while source is not None:
                names.add(source.name())
                source = getattr(source, "base", None)
    return names


def values_read(guards, L, G) -> dict[int, str]:
    """What the guards' sources and the sources they are built on hold now, by id, and
    the `__dict__` of each (where an attribute may be read from), named."""
    held = {}
    for name in sources_read(guards):
        value = eval_source(name, L, G)
        held[id(value)] = name
        instance_dict = getattr(value, "__dict__", None)
        if type(instance_dict) is dict:
            held.setdefault(id(instance_dict), f"{name}.__dict__")
    return held


@pytest.mark.task("ch09.3")
def test_one_line_per_guard_each_source_read_once():
    """Runs the check's fetch lines on the call's own locals: each assigns a new local
    once, no expression is read twice, each local holds a source's value (or the
    `__dict__` of one, to read attributes from), and each guard line reads its sources
    from locals that hold them, never from `L` or `G` again."""
    net, x = programs.Net(), t(2, 4)
    compiled = minidynamo.compile(programs.run_net)
    compiled(x, net)
    check = entry_of(programs.run_net).check
    lines = check.source.splitlines()
    assert lines[:2] == ["def ___check(L, G):", "    try:"]
    assert lines[-3].startswith("    except Exception:") and lines[-2:] == [
        "        return False", "    return True"]
    guard_lines = [line for line in lines if line.startswith("        if not (")]
    assert len(guard_lines) == len(check.guards)
    L, G = {"x": x, "net": net}, programs.__dict__
    held = values_read(check.guards, L, G)
    values: dict[str, object] = {}  # local -> what its line read
    expressions: set[str] = set()
    guard_number = 0
    for index, line in enumerate(lines[2:], start=2):
        fetch = FETCH_LINE.fullmatch(line)
        if fetch is not None:
            local, expression = fetch["local"], fetch["expression"]
            assert local not in values, f"{local} is assigned twice"
            assert expression not in expressions, f"{expression} is read twice"
            expressions.add(expression)
            values[local] = eval(expression, check.namespace, {"L": L, "G": G, **values})
            assert id(values[local]) in held, f"{line.strip()} reads no guarded source"
            continue
        match = GUARD_LINE.fullmatch(line)
        if match is None:
            continue
        guard = check.guards[guard_number]
        guard_number += 1
        assert lines[index + 1] == "            return False"
        assert match["kind"] == guard.kind
        assert match["where"] == (guard.user_line.strip() or None)
        assert "L[" not in match["code"] and not re.search(r"\bG\b", match["code"]), \
            "a guard reads its sources from the locals"
        for source in guard.sources():  # a joint TENSOR_MATCH reads several
            value = eval_source(source.name(), L, G)
            assert any(held_value is value and re.search(rf"\b{local}\b", match["code"])
                       for local, held_value in values.items()), \
                f"{match['code']} does not read {source.name()} from a local that holds it"
    compile(minidynamo.show_guards(compiled), "<guards>", "exec")


@pytest.mark.task("ch09.3")
def test_a_guard_on_the_symbols_reads_the_locals_too():
    """A SHAPE_ENV guard names no source of its own (`2 <= L['x'].size()[0]`, as torch's
    ShapeEnv words it): it reads whichever sources its code names, from their locals."""
    minidynamo.compile(programs.affine, dynamic=True)(t(3))
    check = entry_of(programs.affine).check
    shape_lines = [line for line in check.source.splitlines() if line.endswith("# SHAPE_ENV")]
    assert shape_lines, "dynamic=True: the trace assumed something of the symbol of x's size"
    local = re.search(r"(___v\d+) = L\['x'\]", check.source).group(1)
    for line in shape_lines:
        assert "L[" not in line and f"{local}.size()[0]" in line, line
    assert check.check({"x": t(5)}, programs.__dict__) is True
    assert check.check({"x": t(1)}, programs.__dict__) is False
