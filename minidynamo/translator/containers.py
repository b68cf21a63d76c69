"""Handlers that build and take apart containers: BUILD_*, LIST_APPEND, UNPACK_* (chapter 2).

A list display `[a, b]` is BUILD_LIST 2: pop two trackers, push one
`ListVariable` holding them. Nothing reaches the graph: containers live only in
the symbolic world. The in-place builders used by comprehensions and unpacking
(LIST_APPEND, LIST_EXTEND, SET_ADD, MAP_ADD, DICT_UPDATE ...) call the same
tracker methods as user code (`append`, `extend`, `update`), so each makes a new
version of the container on the stack.

Compare with TorchDynamo: `BUILD_TUPLE`, `BUILD_LIST`, `BUILD_MAP`,
`LIST_APPEND`, `UNPACK_SEQUENCE`, `UNPACK_EX`, `FORMAT_VALUE` in
`torch/_dynamo/symbolic_convert.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidynamo.bytecode import Instruction
from minidynamo.exc import UNSUPPORTED_OPERATOR, graph_break, raise_observed
from minidynamo.variables import (
    BuiltinVariable,
    ConstDictVariable,
    ConstantVariable,
    ListVariable,
    SliceVariable,
    TupleVariable,
    new_object_id,
)
from minidynamo.variables.base import constant_values
from minidynamo.variables.dicts import as_key, set_from_values

if TYPE_CHECKING:
    from minidynamo.translator.base import InstructionTranslatorBase

# FORMAT_VALUE's conversion bits -> the conversion applied before formatting
CONVERSIONS = {0: None, 1: str, 2: repr, 3: ascii}


class ContainerHandlers:
    """Building and unpacking tuples, lists, sets, dicts, slices and strings."""

    ## Building

    def BUILD_TUPLE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(TupleVariable(tuple(self.popn(inst.arg))))

    def BUILD_LIST(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(ListVariable(tuple(self.popn(inst.arg)), object_id=new_object_id()))

    def BUILD_SET(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(set_from_values([as_key(self, item) for item in self.popn(inst.arg)]))

    def BUILD_MAP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        flat = self.popn(2 * inst.arg)  # key0, value0, key1, value1, ...
        keys = [as_key(self, key) for key in flat[0::2]]
        self.push(ConstDictVariable(dict(zip(keys, flat[1::2])), object_id=new_object_id()))

    def BUILD_CONST_KEY_MAP(self: InstructionTranslatorBase, inst: Instruction) -> None:
        keys = self.pop().as_python_constant()
        values = self.popn(inst.arg)
        self.push(ConstDictVariable(dict(zip(keys, values)), object_id=new_object_id()))

    def BUILD_SLICE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        parts = self.popn(inst.arg)
        if len(parts) == 2:
            parts.append(ConstantVariable(None))
        self.push(SliceVariable(*parts))

    def BUILD_STRING(self: InstructionTranslatorBase, inst: Instruction) -> None:
        pieces = [value.as_python_constant() for value in self.popn(inst.arg)]
        self.push(ConstantVariable("".join(pieces)))

    def LIST_TO_TUPLE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        self.push(TupleVariable(tuple(self.pop().unpack_var_sequence(self))))

    ## Adding to the container `inst.arg` slots down (comprehensions, displays)

    def LIST_APPEND(self: InstructionTranslatorBase, inst: Instruction) -> None:
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "append", [value], {})

    def LIST_EXTEND(self: InstructionTranslatorBase, inst: Instruction) -> None:
        values = self.pop()
        self.stack[-inst.arg].call_method(self, "extend", [values], {})

    def SET_ADD(self: InstructionTranslatorBase, inst: Instruction) -> None:
        value = self.pop()
        self.stack[-inst.arg].call_method(self, "add", [value], {})

    def SET_UPDATE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        values = self.pop()
        self.stack[-inst.arg].call_method(self, "update", [values], {})

    def MAP_ADD(self: InstructionTranslatorBase, inst: Instruction) -> None:
        key, value = self.popn(2)
        self.stack[-inst.arg].call_method(self, "__setitem__", [key, value], {})

    def DICT_UPDATE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        other = self.pop()
        self.stack[-inst.arg].call_method(self, "update", [other], {})

    def DICT_MERGE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        other = self.pop().realize()
        target = self.stack[-inst.arg].realize()  # lazy: a resume function's stack argument
        if not isinstance(other, ConstDictVariable):
            graph_break(UNSUPPORTED_OPERATOR, f"** unpacking of {other}")
        if repeated := set(other.items) & set(target.items):
            raise_observed(TypeError, f"got multiple values for keyword argument {min(repeated)!r}")
        target.call_method(self, "update", [other], {})

    ## Unpacking

    def UNPACK_SEQUENCE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        items = self.pop().unpack_var_sequence(self)
        if len(items) > inst.arg:
            raise_observed(ValueError, f"too many values to unpack (expected {inst.arg})")
        if len(items) < inst.arg:
            raise_observed(ValueError, f"not enough values to unpack (expected {inst.arg}, "
                           f"got {len(items)})")
        for item in reversed(items):
            self.push(item)

    def UNPACK_EX(self: InstructionTranslatorBase, inst: Instruction) -> None:
        before, after = inst.arg & 0xFF, inst.arg >> 8
        items = self.pop().unpack_var_sequence(self)
        if len(items) < before + after:
            raise_observed(ValueError, f"not enough values to unpack (expected at least "
                           f"{before + after}, got {len(items)})")
        middle = ListVariable(tuple(items[before:len(items) - after]), object_id=new_object_id())
        for item in reversed([*items[:before], middle, *items[len(items) - after:]]):
            self.push(item)

    ## Strings

    def FORMAT_VALUE(self: InstructionTranslatorBase, inst: Instruction) -> None:
        """`{value!r:spec}`: the conversion (`str`, `repr`, `ascii`), then `format(value,
        spec)`, as the builtins do them: an object's own `__str__`, `__repr__` or
        `__format__` is traced (`variables/builtins.py`)."""
        spec = self.pop() if inst.arg & 0x04 else ConstantVariable("")
        value = self.pop()
        conversion = CONVERSIONS[inst.arg & 0x03]
        values = constant_values([value, spec])
        if values is not None:  # the common case, folded at once
            text = conversion(values[0]) if conversion else values[0]
            self.push(ConstantVariable(format(text, values[1])))
            return
        if conversion is ascii:
            graph_break(UNSUPPORTED_OPERATOR, "ascii() of a non-constant value in an f-string")
        if conversion is not None:
            value = BuiltinVariable(conversion).call_function(self, [value], {})
        self.push(BuiltinVariable(format).call_function(self, [value, spec], {}))
