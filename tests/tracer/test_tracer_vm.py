"""Chapter 2: the symbolic stack machine, compared with CPython.

The dispatch table is built once per translator class from handler names;
snippets of plain Python run in minidynamo and in CPython and must agree.
"""

from __future__ import annotations

import collections
import dis

import pytest
import torch

import minidynamo
from minidynamo.bytecode import opcodes
from minidynamo.translator import (
    InliningInstructionTranslator,
    InstructionTranslator,
    InstructionTranslatorBase,
)
from minidynamo.translator.base import BytecodeDispatchTableMeta

# Opcodes that straight-line code, calls and loops use (the scope of chapters 2-3).
CHAPTER_2_OPCODES = """
    RESUME NOP LOAD_FAST STORE_FAST DELETE_FAST LOAD_CONST LOAD_GLOBAL STORE_GLOBAL
    LOAD_DEREF STORE_DEREF LOAD_CLOSURE MAKE_CELL COPY_FREE_VARS LOAD_ATTR STORE_ATTR
    LOAD_METHOD PUSH_NULL PRECALL CALL KW_NAMES CALL_FUNCTION_EX MAKE_FUNCTION BINARY_OP
    UNARY_NEGATIVE UNARY_POSITIVE UNARY_INVERT UNARY_NOT COMPARE_OP IS_OP CONTAINS_OP
    BUILD_LIST BUILD_TUPLE BUILD_MAP BUILD_CONST_KEY_MAP BUILD_SET BUILD_SLICE BUILD_STRING
    LIST_APPEND LIST_EXTEND SET_ADD SET_UPDATE MAP_ADD DICT_UPDATE DICT_MERGE LIST_TO_TUPLE
    BINARY_SUBSCR STORE_SUBSCR DELETE_SUBSCR UNPACK_SEQUENCE UNPACK_EX GET_ITER FOR_ITER
    POP_TOP COPY SWAP FORMAT_VALUE RETURN_VALUE JUMP_FORWARD JUMP_BACKWARD
    POP_JUMP_FORWARD_IF_TRUE POP_JUMP_FORWARD_IF_FALSE POP_JUMP_FORWARD_IF_NONE
    POP_JUMP_FORWARD_IF_NOT_NONE POP_JUMP_BACKWARD_IF_TRUE POP_JUMP_BACKWARD_IF_FALSE
    JUMP_IF_TRUE_OR_POP JUMP_IF_FALSE_OR_POP
""".split()


@pytest.mark.parametrize("translator", [InstructionTranslator, InliningInstructionTranslator])
def test_dispatch_table_has_a_handler_named_after_each_opcode(translator):
    table = translator.dispatch_table
    assert len(table) == 256
    for opname in CHAPTER_2_OPCODES:
        handler = table[dis.opmap[opname]]
        assert handler is getattr(translator, opname)


def test_an_opcode_without_handler_is_a_graph_break_when_it_runs():
    handler = InstructionTranslator.dispatch_table[dis.opmap["SETUP_ANNOTATIONS"]]
    with pytest.raises(
        minidynamo.Unsupported, match="missing bytecode handler: SETUP_ANNOTATIONS"
    ) as info:
        handler(None, None)
    assert info.value.kind.id == "MD0001"


def test_handler_names_are_checked_against_dis_opmap():
    with pytest.raises(TypeError, match="LOAD_FASTT"):
        BytecodeDispatchTableMeta(
            "Typo", (InstructionTranslatorBase,), {"LOAD_FASTT": lambda self, inst: None}
        ).dispatch_table  # checked when the table is built, on first use


def test_version_facts_come_from_the_bytecode_layer():
    assert opcodes.BINARY_OP_SYMBOLS[0] == "+"


def test_push_pop_popn_keep_cpython_order():
    translator = object.__new__(InstructionTranslatorBase)
    translator.stack, translator.popped = [], []
    for value in "abc":
        translator.push(value)
    assert translator.popn(2) == ["b", "c"]
    assert translator.popn(0) == []
    assert translator.pop() == "a"
    assert translator.popped == ["b", "c", "a"]  # held by the running instruction


def straight_line(a, b):
    c = a * b + 3
    d = -c if c > 10 else c // 2
    e = not (a < b <= c)
    return c, d, e, a is None, b is not None, 3 in (1, 2, 3)


def containers(n):
    items = [1, 2, *range(n)]
    table = {"a": 1, **{"b": 2}}
    first, *middle, last = items
    items[0] = 9
    del items[1]
    return items, table, {1, 2} | {n}, first, middle, last, items[1:3], f"{n:>3}|{n!r}"


def loops(n):
    total = 0
    for i in range(n):
        if i % 2:
            continue
        total += i
    while total > 3:
        total -= 3
    return total, [j * j for j in range(n) if j], {k: k * 2 for k in "ab"}


def calls(n):
    def inner(a, b=2, *rest, scale=1, **extra):
        return (a + b + sum(rest)) * scale, extra

    args, kwargs = (1, 2, 3), {"scale": 2, "tag": "x"}
    return (
        inner(n),
        inner(*args, **kwargs),
        sorted([3, 1, 2], key=lambda v: -v),
        max("ab", "b", key=len),
    )


def closures(n):
    counter = 0

    def bump(step):
        nonlocal counter
        counter += step
        return counter

    bump(n)
    bump(1)
    return counter


class Shape:
    def __init__(self, sides):
        self.sides = sides

    @property
    def name(self):
        return f"{type(self).__name__}({self.sides})"


class Square(Shape):
    def __init__(self):
        super().__init__(4)


def objects_and_dict_classes(words):
    counts = collections.defaultdict(int)
    for word in words:
        counts[word] += 1
    ordered = collections.OrderedDict(sorted(counts.items()))
    ordered.move_to_end(words[0])
    square = Square()
    square.area = 9
    return dict(counts), list(ordered), square.name, square.area, isinstance(square, Shape)


def generators(n):
    def evens(limit):
        for value in range(limit):
            if value % 2 == 0:
                yield value

    return sum(v * v for v in range(n)), list(evens(n)), max(evens(n)), any(v > 3 for v in evens(n))


@pytest.mark.parametrize(
    "fn, args",
    [
        (straight_line, (3, 4)),
        (straight_line, (1, 1)),
        (containers, (3,)),
        (loops, (7,)),
        (calls, (5,)),
        (closures, (4,)),
        (objects_and_dict_classes, (["b", "a", "b"],)),
        (generators, (7,)),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_python_snippets_give_cpython_results_without_a_graph(fn, args):
    graphs = []
    result = minidynamo.compile(
        fn, backend=lambda gm, example: graphs.append(gm) or gm.forward, fullgraph=True
    )(*args)
    assert result == fn(*args)
    assert graphs == []  # no tensor operation: no graph, as torch.compile


def test_tensor_condition_is_a_graph_break_constant_condition_is_not():
    def branch(x, flag):
        if flag:
            x = x + 1
        if x is None:
            return x
        return x * 2

    assert torch.equal(
        minidynamo.compile(branch, fullgraph=True)(torch.ones(2), True), torch.full((2,), 4.0)
    )

    def data_dependent(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(minidynamo.Unsupported, match="truth value of a tensor") as info:
        minidynamo.compile(data_dependent, fullgraph=True)(torch.ones(2))
    assert info.value.kind.id == "MD0003"
