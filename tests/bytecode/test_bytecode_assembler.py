"""assemble(scan(code)) against the original code objects and their behaviour."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import copy
import dis
import email.utils
import fnmatch
import html
import ipaddress
import json.decoder
import json.encoder
import posixpath
import re
import shlex
import statistics
import string
import textwrap
import traceback
import types
import urllib.parse

import pytest

from minidynamo.bytecode import assemble, create_instruction, opcodes, scan

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def rebuild(function, transform=None):
    """A copy of `function` whose code went through scan -> transform -> assemble."""
    instructions = scan(function.__code__)
    if transform is not None:
        transform(instructions)
    code = assemble(instructions, function.__code__)
    clone = types.FunctionType(code, function.__globals__, function.__name__,
                               function.__defaults__, function.__closure__)
    clone.__kwdefaults__ = function.__kwdefaults__
    return clone


def outcome(function, args):
    """What calling function(*args) does: its result (generators drained) or its error."""
    try:
        result = function(*args)
        if isinstance(result, types.GeneratorType):
            result = list(result)
        elif isinstance(result, types.CoroutineType):
            result = asyncio.run(result)
        return "returned", without_addresses(repr(result))
    except Exception as error:   # noqa: BLE001 - comparing failures is the point
        return "raised", type(error).__name__, without_addresses(str(error))


def without_addresses(text):
    """`<ast.Call object at 0x7f..>` differs between two calls; the rest must not."""
    return re.sub(r" at 0x[0-9a-f]+", " at 0x...", text)


def insert_nops_before_jump_targets(instructions, count=300):
    """Push every jump target (and handler) `count` code units further away."""
    edited = []
    for instruction in instructions:
        if instruction.is_jump_target:
            edited += [create_instruction("NOP") for _ in range(count)]
        edited.append(instruction)
    instructions[:] = edited


def insert_new_local_and_const(instructions):
    """After the first RESUME: `_minidynamo_tmp = ('new', 12345)`."""
    first_resume = next(i for i, inst in enumerate(instructions) if inst.opname == "RESUME")
    instructions[first_resume + 1:first_resume + 1] = [
        create_instruction("LOAD_CONST", argval=("new", 12345)),
        create_instruction("STORE_FAST", argval="_minidynamo_tmp"),
    ]


# ---------------------------------------------------------------------------
# sample functions: control flow the stdlib sample may not cover on its own
# ---------------------------------------------------------------------------


def try_except_else_finally(values):
    log = []
    for value in values:
        try:
            log.append(10 // value)
        except ZeroDivisionError:
            log.append("zero")
            continue
        except TypeError as error:
            log.append(type(error).__name__)
            break
        else:
            log.append("ok")
        finally:
            log.append("finally")
    return log


def raise_in_finally(x):
    try:
        return 1 / x
    finally:
        if x == 2:
            raise KeyError("two")


def with_blocks(items):
    class Recorder:
        def __init__(self, log, name):
            self.log, self.name = log, name

        def __enter__(self):
            self.log.append(f"enter {self.name}")
            return self

        def __exit__(self, kind, value, tb):
            self.log.append(f"exit {self.name} {kind and kind.__name__}")
            return kind is KeyError

    log = []
    for item in items:
        with Recorder(log, "outer"), Recorder(log, "inner") as inner:
            log.append(inner.name)
            if item == "key":
                raise KeyError(item)
            if item == "value":
                raise ValueError(item)
    with contextlib.suppress(ZeroDivisionError):
        log.append(1 / 0)
    return log


def closures_and_generators(n):
    total = 0

    def evens():
        for i in range(n):
            if i % 2 == 0:
                yield i

    def add(value):
        nonlocal total
        total += value
        return total

    def delegate():
        received = yield from evens()
        return received

    return [add(v) for v in evens()], total, list(delegate()), sum(x * x for x in evens())


def pattern_matching(value):
    match value:
        case [x, y, *rest]:
            return ("seq", x, y, len(rest))
        case {"kind": kind, **others}:
            return ("map", kind, sorted(others))
        case int(number) if number > 3:
            return ("big", number)
        case str() | bytes():
            return ("text", value)
        case _:
            return ("other", repr(value))


def exception_groups(errors):
    caught = []
    try:
        raise ExceptionGroup("many", errors)
    except* ValueError as group:
        caught.append(("value", len(group.exceptions)))
    except* KeyError as group:
        caught.append(("key", len(group.exceptions)))
    return caught


async def coroutine(n):
    await asyncio.sleep(0)
    results = []
    async with contextlib.AsyncExitStack():
        for i in range(n):
            results.append(i * 2)
    return results


def many_branches(x):
    # long enough that jumps over it need EXTENDED_ARG even unmodified
    result = 0
    for i in range(x):
        if i % 3 == 0:
            result += i
        elif i % 3 == 1:
            result -= i
        else:
            result *= 2
        if result > 1000:
            result = result % 997
            continue
        if result < -1000:
            break
    return result


CASES = [
    (textwrap.dedent, ("    a\n      b\n    c\n",)),
    (textwrap.fill, ("The quick brown fox jumps over the lazy dog. " * 4, 23)),
    (textwrap.indent, ("a\n\nb\n", "> ")),
    (shlex.split, ('a "b c" d\\ e \'f g\'',)),
    (shlex.split, ('unterminated "quote',)),
    (fnmatch.translate, ("*.py[co]?",)),
    (posixpath.normpath, ("/a/./b/../c//d/",)),
    (posixpath.relpath, ("/a/b/c", "/a/d")),
    (json.decoder.py_scanstring, ('"ab\\n\\u00e9c" tail', 1)),
    (json.decoder.py_scanstring, ('"unterminated', 1)),
    (json.encoder.py_encode_basestring_ascii, ('a"b\u00e9\U0001f600',)),
    (ast.literal_eval, ("{'a': [1, 2.5, (3, -4j)], 'b': {None, True}}",)),
    (ast.literal_eval, ("__import__('os')",)),
    (email.utils.parseaddr, ("Alice Example <alice@example.com>",)),
    (email.utils.formataddr, (("Alice", "alice@example.com"),)),
    (urllib.parse.urlsplit.__wrapped__, ("http://user:pw@host:8080/p/a?q=1&r=2#frag",)),
    (urllib.parse.urlsplit.__wrapped__, ("http://host:notaport/",)),
    (urllib.parse.quote, ("a b&c/é",)),
    (urllib.parse.parse_qsl, ("a=1&b=2&b=3&c",)),
    (html.unescape, ("&lt;&amp;&#62;&eacute;&#x41;",)),
    (string.capwords, ("hello   big  world",)),
    (statistics.median, ([3, 1, 4, 1, 5],)),
    (statistics.mean, ([1, 2, 3, 4.5],)),
    (statistics.mean, ([],)),
    (ipaddress.ip_address, ("192.168.0.1",)),
    (ipaddress.ip_address, ("::ffff:1.2.3.4",)),
    (ipaddress.ip_address, ("not an address",)),
    (copy.deepcopy, ({"a": [1, 2, {3}], "b": (4, [5])},)),
    (try_except_else_finally, ([1, 0, 2, "x", 5],)),
    (raise_in_finally, (4,)),
    (raise_in_finally, (0,)),
    (raise_in_finally, (2,)),
    (with_blocks, (["plain", "key", "plain"],)),
    (with_blocks, (["plain", "value"],)),
    (closures_and_generators, (7,)),
    (pattern_matching, ([1, 2, 3, 4],)),
    (pattern_matching, ({"kind": "k", "x": 1},)),
    (pattern_matching, (9,)),
    (pattern_matching, (b"bytes",)),
    (pattern_matching, (2.5,)),
    (exception_groups, ([ValueError(1), KeyError(2), ValueError(3)],)),
    (coroutine, (4,)),
    (many_branches, (200,)),
]
CASE_IDS = [f"{function.__qualname__}-{index}" for index, (function, _) in enumerate(CASES)]

# ---------------------------------------------------------------------------
# unmodified round trip
# ---------------------------------------------------------------------------


def test_round_trip_is_byte_identical_on_the_stdlib(stdlib_code):
    for code in stdlib_code:
        rebuilt = assemble(scan(code), code)
        assert rebuilt.co_code == code.co_code, code
        assert rebuilt.co_exceptiontable == code.co_exceptiontable, code
        assert rebuilt.co_stacksize == code.co_stacksize, code
        assert rebuilt.co_linetable == code.co_linetable, code
        assert (rebuilt.co_consts, rebuilt.co_names, rebuilt.co_varnames) == (
            code.co_consts, code.co_names, code.co_varnames), code


def test_round_trip_keeps_lines_and_positions(stdlib_code):
    for code in stdlib_code[::3]:
        rebuilt = assemble(scan(code), code)
        assert list(dis.findlinestarts(rebuilt)) == list(dis.findlinestarts(code))
        assert list(rebuilt.co_positions()) == list(code.co_positions())


@pytest.mark.parametrize(("function", "args"), CASES, ids=CASE_IDS)
def test_rebuilt_functions_behave_the_same(function, args):
    assert outcome(rebuild(function), args) == outcome(function, args)


def test_inner_code_objects_survive_a_round_trip():
    code = closures_and_generators.__code__
    inner = [const for const in code.co_consts if isinstance(const, types.CodeType)]
    assert inner and all(assemble(scan(c), c).co_code == c.co_code for c in inner)

# ---------------------------------------------------------------------------
# modified instruction lists
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("function", "args"), CASES, ids=CASE_IDS)
def test_nops_before_jump_targets_need_extended_args(function, args):
    clone = rebuild(function, insert_nops_before_jump_targets)
    assert outcome(clone, args) == outcome(function, args)


def test_nop_insertion_really_produces_extended_args():
    clone = rebuild(many_branches, insert_nops_before_jump_targets)
    opnames = [instruction.opname for instruction in dis.get_instructions(clone)]
    assert "EXTENDED_ARG" in opnames
    assert len(clone.__code__.co_code) > len(many_branches.__code__.co_code) + 600


@pytest.mark.parametrize(("function", "args"), CASES, ids=CASE_IDS)
def test_new_local_and_constant_are_appended(function, args):
    clone = rebuild(function, insert_new_local_and_const)
    assert clone.__code__.co_varnames[-1] == "_minidynamo_tmp"
    assert ("new", 12345) in clone.__code__.co_consts
    assert outcome(clone, args) == outcome(function, args)


def test_modified_code_keeps_each_instruction_on_its_line():
    instructions = scan(with_blocks.__code__)
    original_lines = {id(i): i.positions.lineno for i in instructions}
    insert_nops_before_jump_targets(instructions, count=40)
    code = assemble(instructions, with_blocks.__code__)
    line_at = {start: line for start, end, line in code.co_lines() for start in range(start, end, 2)}
    for instruction in instructions:
        if id(instruction) in original_lines:
            assert line_at[instruction.offset] == original_lines[id(instruction)], instruction


def test_traceback_lines_survive_modification():
    def fails(x):
        y = x + 1
        return {"a": 1}[y]           # KeyError raised on this line

    def last_frame(function):
        try:
            function(1)
        except KeyError as error:
            frame = traceback.extract_tb(error.__traceback__)[-1]
            return frame.lineno, frame.colno, frame.end_colno
        raise AssertionError("no KeyError")

    clone = rebuild(fails, insert_nops_before_jump_targets)
    clone = rebuild(clone, lambda ins: ins[1:1].extend(
        create_instruction("NOP") for _ in range(300)))
    assert last_frame(clone) == last_frame(fails)


def test_hand_built_loop_with_direction_neutral_jumps():
    def template(n):
        pass

    loop_test = create_instruction("LOAD_FAST", argval="i")
    done = create_instruction("LOAD_FAST", argval="total")
    instructions = [
        create_instruction("RESUME", arg=0),
        create_instruction("LOAD_CONST", argval=0),
        create_instruction("STORE_FAST", argval="total"),
        create_instruction("LOAD_CONST", argval=0),
        create_instruction("STORE_FAST", argval="i"),
        loop_test,
        create_instruction("LOAD_FAST", argval="n"),
        create_instruction("COMPARE_OP", argval="<"),
        create_instruction("POP_JUMP_IF_FALSE", target=done),
        create_instruction("LOAD_FAST", argval="total"),
        create_instruction("LOAD_FAST", argval="i"),
        create_instruction("BINARY_OP", argval="+="),
        create_instruction("STORE_FAST", argval="total"),
        create_instruction("LOAD_FAST", argval="i"),
        create_instruction("LOAD_CONST", argval=1),
        create_instruction("BINARY_OP", argval="+"),
        create_instruction("STORE_FAST", argval="i"),
        create_instruction("JUMP", target=loop_test),
        done,
        create_instruction("RETURN_VALUE"),
    ]
    code = assemble(instructions, template.__code__)
    function = types.FunctionType(code, {})
    assert [function(n) for n in (0, 1, 10, 100)] == [sum(range(n)) for n in (0, 1, 10, 100)]
    opnames = {instruction.opname for instruction in dis.get_instructions(code)}
    assert {"POP_JUMP_FORWARD_IF_FALSE", "JUMP_BACKWARD"} <= opnames
    assert code.co_varnames == ("n", "total", "i") and code.co_nlocals == 3
    assert code.co_stacksize == 2


def test_conditional_jump_turns_backward_when_its_target_is_behind():
    def template(n):
        pass

    top = create_instruction("LOAD_FAST", argval="n")
    instructions = [
        create_instruction("RESUME", arg=0),
        top,                                             # do { n -= 1 } while n > 0
        create_instruction("LOAD_CONST", argval=1),
        create_instruction("BINARY_OP", argval="-"),
        create_instruction("STORE_FAST", argval="n"),
        create_instruction("LOAD_FAST", argval="n"),
        create_instruction("LOAD_CONST", argval=0),
        create_instruction("COMPARE_OP", argval=">"),
        create_instruction("POP_JUMP_IF_TRUE", target=top),
        create_instruction("LOAD_FAST", argval="n"),
        create_instruction("RETURN_VALUE"),
    ]
    code = assemble(instructions, template.__code__)
    assert instructions[8].opname == "POP_JUMP_BACKWARD_IF_TRUE"
    assert types.FunctionType(code, {})(5) == 0


def test_new_global_name_and_null_bit():
    def template(x):
        return x

    instructions = [
        create_instruction("RESUME", arg=0),
        create_instruction("LOAD_GLOBAL", argval="len", arg=1),   # NULL + len
        create_instruction("LOAD_CONST", argval="abcd"),
        create_instruction("PRECALL", arg=1),
        create_instruction("CALL", arg=1),
        create_instruction("LOAD_FAST", argval="x"),
        create_instruction("BUILD_TUPLE", arg=2),
        create_instruction("RETURN_VALUE"),
    ]
    code = assemble(instructions, template.__code__)
    assert code.co_names == ("len",) and instructions[1].arg == 1
    assert types.FunctionType(code, {"len": len})(5) == (4, 5)


def test_equal_constants_of_different_types_stay_distinct():
    def template():
        pass

    instructions = [create_instruction("RESUME", arg=0)]
    for value in (1, 1.0, True, 0.0, -0.0):
        instructions.append(create_instruction("LOAD_CONST", argval=value))
    instructions += [create_instruction("BUILD_TUPLE", arg=5),
                     create_instruction("RETURN_VALUE")]
    code = assemble(instructions, template.__code__)
    result = types.FunctionType(code, {})()
    assert [type(v) for v in result] == [int, float, bool, float, float]
    assert str(result[-1]) == "-0.0"


def test_inserted_instruction_inside_a_try_is_protected():
    def guarded(x):
        try:
            y = x + 1
        except TypeError:
            return "caught"
        return y

    def transform(instructions):
        add = next(i for i in instructions if i.opname == "BINARY_OP")
        index = instructions.index(add)
        # divide by zero inside the protected range: the handler must not catch it,
        # so insert a TypeError-raising `None + 1` instead
        instructions[index:index] = [
            create_instruction("LOAD_CONST", argval=None),
            create_instruction("LOAD_CONST", argval=1),
            create_instruction("BINARY_OP", argval="+"),
            create_instruction("POP_TOP"),
        ]

    assert rebuild(guarded, transform)(1) == "caught"
    assert guarded(1) == 2


def test_backward_only_jump_cannot_be_forced_forward():
    def loop(items):
        for item in items:
            pass

    instructions = scan(loop)
    for_iter = next(i for i in instructions if i.opname == "FOR_ITER")
    for_iter.target = instructions[0]
    with pytest.raises(ValueError, match="cannot jump backward"):
        assemble(instructions, loop.__code__)


def test_missing_arg_is_reported():
    def template():
        pass

    instructions = [create_instruction("RESUME", arg=0),
                    create_instruction("BUILD_TUPLE"),
                    create_instruction("RETURN_VALUE")]
    with pytest.raises(ValueError, match="cannot derive the arg"):
        assemble(instructions, template.__code__)


def test_direction_neutral_names_map_to_real_opcodes():
    for neutral, (forward, backward) in opcodes.JUMP_DIRECTIONS.items():
        assert create_instruction(neutral).opname == forward
        assert opcodes.jump_variant(forward, backward=True) == backward


def test_jump_without_target_is_reported():
    def template():
        pass

    instructions = [create_instruction("RESUME", arg=0),
                    create_instruction("JUMP"),
                    create_instruction("LOAD_CONST", argval=None),
                    create_instruction("RETURN_VALUE")]
    with pytest.raises(ValueError, match="without a target"):
        assemble(instructions, template.__code__)
