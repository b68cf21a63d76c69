"""Opcode facts: what minidynamo knows about one Python version's bytecode (chapter 1).

This is the ONE module of minidynamo that knows which Python it runs on. Every
fact that changes between CPython versions (which opcodes jump and in which
direction, how many inline CACHE entries follow an opcode, which argument
indexes which table, how much each opcode moves the value stack, ...) is written
here as *data*: one `OpcodeTable` per supported (major, minor) version. The table
for the running interpreter is chosen once, at import time, and re-exported as
plain module-level names (`CACHE_ENTRIES`, `FORWARD_JUMPS`, ...).

Supporting Python 3.12 means writing `PY312 = OpcodeTable(...)` and adding it to
`TABLES`; no other module of minidynamo should change. Nowhere else in the
package may `sys.version_info` appear.

Everything is keyed by opcode *name* ("LOAD_GLOBAL"); the numbers come from the
running interpreter's own `dis.opmap`, because they are renumbered between
versions while the names and their meaning are what a reader reasons about.

Compare with TorchDynamo: `torch/_dynamo/bytecode_transformation.py` and
`bytecode_analysis.py` spread these facts over `sys.version_info` checks inside
function bodies; CPython's own `Lib/opcode.py` keeps them as data, as we do.
"""

from __future__ import annotations

import dis
import sys
from dataclasses import dataclass
from typing import Callable, Mapping, Union

# A stack effect is either a constant or a function of the instruction's arg.
StackEffect = Union[int, Callable[[int], int]]


@dataclass(frozen=True)
class OpcodeTable:
    """The bytecode facts of one CPython minor version, keyed by opcode name.

    Attributes:
        version: the (major, minor) version these facts describe.
        cache_entries: opcodes followed by inline CACHE code units (2 bytes each)
            and how many; an opcode not listed has none.
        forward_jumps: relative jumps whose arg counts code units *forward* from
            the end of the jump instruction (its caches included).
        backward_jumps: relative jumps whose arg counts code units *backward*
            from the end of the jump instruction.
        absolute_jumps: jumps whose arg is the target's offset in code units.
        conditional_jumps: jumps that may fall through to the next instruction.
        jump_directions: a direction-neutral jump name (as the compiler thinks of
            it) -> its (forward, backward) opcodes; the assembler picks one.
        const_args: opcodes whose arg indexes `co_consts`.
        name_args: opcodes whose arg indexes `co_names`.
        local_args: opcodes whose arg indexes the fast locals.
        free_args: opcodes whose arg indexes the cell and free variables.
        name_flag_bits: opcodes that pack flag bits below the name index, and how
            many (3.11: LOAD_GLOBAL's low bit means "push NULL first").
        stops_flow: opcodes after which execution never falls through to the
            next instruction (returns, raises, unconditional jumps).
        resumes_with_value: opcodes that leave the frame and, when it is resumed,
            find one more value on the stack than `dis.stack_effect` counts
            (RETURN_GENERATOR: the first `send()` value, popped by the POP_TOP
            that follows it).
        suspends: opcodes at which a generator or coroutine frame yields to its
            caller or awaits (a coroutine without them runs straight through).
        stack_effects: net change of the stack depth, by opname; a callable
            receives the instruction's arg.
        branch_effects: opcodes whose stack effect depends on whether they jump:
            (effect when falling through, effect when jumping).
        local_reads: opcodes that read a local or cell variable (see
            `analysis.live_variables`).
        local_writes: opcodes after which a local or cell variable no longer
            holds its previous value.
        binary_op_symbols: BINARY_OP's arg -> the operator symbol it applies.
        compare_operators: COMPARE_OP's arg -> the comparison it applies.
    """

    version: tuple[int, int]
    cache_entries: Mapping[str, int]
    forward_jumps: frozenset[str]
    backward_jumps: frozenset[str]
    absolute_jumps: frozenset[str]
    conditional_jumps: frozenset[str]
    jump_directions: Mapping[str, tuple[str, str]]
    const_args: frozenset[str]
    name_args: frozenset[str]
    local_args: frozenset[str]
    free_args: frozenset[str]
    name_flag_bits: Mapping[str, int]
    stops_flow: frozenset[str]
    resumes_with_value: frozenset[str]
    suspends: frozenset[str]
    stack_effects: Mapping[str, StackEffect]
    branch_effects: Mapping[str, tuple[int, int]]
    local_reads: frozenset[str]
    local_writes: frozenset[str]
    binary_op_symbols: tuple[str, ...]
    compare_operators: tuple[str, ...]


def _count_flags(arg: int, bits: int) -> int:
    """How many of the lowest `bits` bits of arg are set (MAKE_FUNCTION's extras)."""
    return bin(arg & ((1 << bits) - 1)).count("1")


# ---------------------------------------------------------------------------
# CPython 3.11
# ---------------------------------------------------------------------------

_PY311_STACK_EFFECTS: dict[str, StackEffect] = {
    ## No stack change
    "NOP": 0, "CACHE": 0, "EXTENDED_ARG": 0, "RESUME": 0, "SWAP": 0,
    "UNARY_POSITIVE": 0, "UNARY_NEGATIVE": 0, "UNARY_NOT": 0, "UNARY_INVERT": 0,
    "GET_ITER": 0, "GET_YIELD_FROM_ITER": 0, "GET_AITER": 0, "GET_AWAITABLE": 0,
    "LOAD_ATTR": 0, "LIST_TO_TUPLE": 0, "CHECK_EXC_MATCH": 0, "CHECK_EG_MATCH": 0,
    "RETURN_GENERATOR": 0, "YIELD_VALUE": 0, "ASYNC_GEN_WRAP": 0,
    "SETUP_ANNOTATIONS": 0, "KW_NAMES": 0, "MAKE_CELL": 0, "COPY_FREE_VARS": 0,
    "DELETE_FAST": 0, "DELETE_NAME": 0, "DELETE_GLOBAL": 0, "DELETE_DEREF": 0,
    "JUMP_FORWARD": 0, "JUMP_BACKWARD": 0, "JUMP_BACKWARD_NO_INTERRUPT": 0,
    ## Push one value
    "LOAD_CONST": 1, "LOAD_FAST": 1, "LOAD_NAME": 1, "LOAD_DEREF": 1,
    "LOAD_CLOSURE": 1, "LOAD_CLASSDEREF": 1, "LOAD_METHOD": 1, "PUSH_NULL": 1,
    "COPY": 1, "LOAD_BUILD_CLASS": 1, "LOAD_ASSERTION_ERROR": 1, "IMPORT_FROM": 1,
    "GET_LEN": 1, "MATCH_MAPPING": 1, "MATCH_SEQUENCE": 1, "MATCH_KEYS": 1,
    "PUSH_EXC_INFO": 1, "WITH_EXCEPT_START": 1, "BEFORE_WITH": 1,
    "BEFORE_ASYNC_WITH": 1, "GET_ANEXT": 1,
    "LOAD_GLOBAL": lambda arg: 1 + (arg & 1),  # the low bit pushes a NULL too
    ## Pop one value
    "POP_TOP": -1, "RETURN_VALUE": -1, "STORE_FAST": -1, "STORE_NAME": -1,
    "STORE_GLOBAL": -1, "STORE_DEREF": -1, "DELETE_ATTR": -1, "POP_EXCEPT": -1,
    "BINARY_OP": -1, "BINARY_SUBSCR": -1, "COMPARE_OP": -1, "IS_OP": -1,
    "CONTAINS_OP": -1, "IMPORT_NAME": -1, "IMPORT_STAR": -1, "PRINT_EXPR": -1,
    "LIST_APPEND": -1, "SET_ADD": -1, "LIST_EXTEND": -1, "SET_UPDATE": -1,
    "DICT_MERGE": -1, "DICT_UPDATE": -1, "RERAISE": -1, "PREP_RERAISE_STAR": -1,
    "CALL": -1,  # PRECALL already popped the arguments; CALL swaps callable for result
    "POP_JUMP_FORWARD_IF_FALSE": -1, "POP_JUMP_FORWARD_IF_TRUE": -1,
    "POP_JUMP_FORWARD_IF_NONE": -1, "POP_JUMP_FORWARD_IF_NOT_NONE": -1,
    "POP_JUMP_BACKWARD_IF_FALSE": -1, "POP_JUMP_BACKWARD_IF_TRUE": -1,
    "POP_JUMP_BACKWARD_IF_NONE": -1, "POP_JUMP_BACKWARD_IF_NOT_NONE": -1,
    ## Pop several values
    "STORE_ATTR": -2, "DELETE_SUBSCR": -2, "MAP_ADD": -2, "END_ASYNC_FOR": -2,
    "MATCH_CLASS": -2, "STORE_SUBSCR": -3,
    ## Depends on the arg
    "UNPACK_SEQUENCE": lambda arg: arg - 1,
    "UNPACK_EX": lambda arg: (arg & 0xFF) + (arg >> 8),
    "BUILD_TUPLE": lambda arg: 1 - arg, "BUILD_LIST": lambda arg: 1 - arg,
    "BUILD_SET": lambda arg: 1 - arg, "BUILD_STRING": lambda arg: 1 - arg,
    "BUILD_MAP": lambda arg: 1 - 2 * arg,
    "BUILD_CONST_KEY_MAP": lambda arg: -arg,
    "BUILD_SLICE": lambda arg: -2 if arg == 3 else -1,
    "RAISE_VARARGS": lambda arg: -arg,
    "PRECALL": lambda arg: -arg,
    "CALL_FUNCTION_EX": lambda arg: -2 - (arg & 1),
    "MAKE_FUNCTION": lambda arg: -_count_flags(arg, 4),
    "FORMAT_VALUE": lambda arg: -1 if arg & 0x4 else 0,  # a format spec is popped
}

_PY311_BRANCH_EFFECTS = {
    # (falls through, jumps)
    "FOR_ITER": (1, -1),  # pushes the next item, or pops the exhausted iterator
    "SEND": (0, -1),
    "JUMP_IF_FALSE_OR_POP": (-1, 0),  # keeps the value only when it jumps
    "JUMP_IF_TRUE_OR_POP": (-1, 0),
}

PY311 = OpcodeTable(
    version=(3, 11),
    cache_entries={
        "BINARY_SUBSCR": 4, "STORE_SUBSCR": 1, "UNPACK_SEQUENCE": 1,
        "STORE_ATTR": 4, "LOAD_ATTR": 4, "COMPARE_OP": 2, "LOAD_GLOBAL": 5,
        "BINARY_OP": 1, "LOAD_METHOD": 10, "PRECALL": 1, "CALL": 4,
    },
    forward_jumps=frozenset({
        "JUMP_FORWARD", "FOR_ITER", "SEND",
        "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP",
        "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
    }),
    backward_jumps=frozenset({
        "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
        "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
    }),
    absolute_jumps=frozenset(),
    conditional_jumps=frozenset({
        "FOR_ITER", "SEND", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP",
        "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
        "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
    }),
    jump_directions={
        "JUMP": ("JUMP_FORWARD", "JUMP_BACKWARD"),
        "POP_JUMP_IF_FALSE": ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE"),
        "POP_JUMP_IF_TRUE": ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE"),
        "POP_JUMP_IF_NONE": ("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE"),
        "POP_JUMP_IF_NOT_NONE": (
            "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"),
    },
    const_args=frozenset({"LOAD_CONST", "KW_NAMES"}),
    name_args=frozenset({
        "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "LOAD_GLOBAL", "STORE_GLOBAL",
        "DELETE_GLOBAL", "LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD",
        "IMPORT_NAME", "IMPORT_FROM",
    }),
    local_args=frozenset({"LOAD_FAST", "STORE_FAST", "DELETE_FAST"}),
    free_args=frozenset({
        "MAKE_CELL", "LOAD_CLOSURE", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF",
        "LOAD_CLASSDEREF",
    }),
    name_flag_bits={"LOAD_GLOBAL": 1},
    stops_flow=frozenset({
        "RETURN_VALUE", "RAISE_VARARGS", "RERAISE",
        "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
    }),
    resumes_with_value=frozenset({"RETURN_GENERATOR"}),
    suspends=frozenset({
        "YIELD_VALUE", "SEND", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT",
        "BEFORE_ASYNC_WITH", "END_ASYNC_FOR", "ASYNC_GEN_WRAP",
    }),
    stack_effects=_PY311_STACK_EFFECTS,
    branch_effects=_PY311_BRANCH_EFFECTS,
    local_reads=frozenset({
        "LOAD_FAST", "DELETE_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF",
        "LOAD_CLOSURE", "DELETE_DEREF", "MAKE_CELL",
    }),
    local_writes=frozenset({"STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF"}),
    binary_op_symbols=(
        "+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^",
        "+=", "&=", "//=", "<<=", "@=", "*=", "%=", "|=", "**=", ">>=", "-=", "/=", "^=",
    ),
    compare_operators=("<", "<=", "==", "!=", ">", ">="),
)

TABLES: dict[tuple[int, int], OpcodeTable] = {(3, 11): PY311}


class UnsupportedPythonError(RuntimeError):
    """Raised at import time when no opcode table describes the running Python."""


def select_table(version: tuple[int, int]) -> OpcodeTable:
    """The opcode table for `version`, or a clear error naming what is supported."""
    if version not in TABLES:
        supported = ", ".join(f"{major}.{minor}" for major, minor in sorted(TABLES))
        raise UnsupportedPythonError(
            f"minidynamo's bytecode layer has opcode tables for Python {supported}, "
            f"but this is Python {version[0]}.{version[1]}. Run it under a supported "
            f"Python, or add an OpcodeTable for {version[0]}.{version[1]} to "
            f"minidynamo/bytecode/opcodes.py (TABLES)."
        )
    return TABLES[version]


# ---------------------------------------------------------------------------
# The facts of the running interpreter, chosen once.
# ---------------------------------------------------------------------------

TABLE: OpcodeTable = select_table(sys.version_info[:2])

OPMAP: Mapping[str, int] = dis.opmap            # opname -> opcode number
OPNAME: list[str] = dis.opname                  # opcode number -> opname
HAVE_ARGUMENT: int = dis.HAVE_ARGUMENT          # opcodes below this ignore their arg
EXTENDED_ARG: int = dis.opmap["EXTENDED_ARG"]
CACHE: int = dis.opmap["CACHE"]

CACHE_ENTRIES = TABLE.cache_entries
FORWARD_JUMPS = TABLE.forward_jumps
BACKWARD_JUMPS = TABLE.backward_jumps
ABSOLUTE_JUMPS = TABLE.absolute_jumps
RELATIVE_JUMPS = FORWARD_JUMPS | BACKWARD_JUMPS
JUMPS = RELATIVE_JUMPS | ABSOLUTE_JUMPS
CONDITIONAL_JUMPS = TABLE.conditional_jumps
UNCONDITIONAL_JUMPS = JUMPS - CONDITIONAL_JUMPS
JUMP_DIRECTIONS = TABLE.jump_directions
CONST_ARGS = TABLE.const_args
NAME_ARGS = TABLE.name_args
LOCAL_ARGS = TABLE.local_args
FREE_ARGS = TABLE.free_args
NAME_FLAG_BITS = TABLE.name_flag_bits
STOPS_FLOW = TABLE.stops_flow
RESUMES_WITH_VALUE = TABLE.resumes_with_value
SUSPENDS = TABLE.suspends
STACK_EFFECTS = TABLE.stack_effects
BRANCH_EFFECTS = TABLE.branch_effects
LOCAL_READS = TABLE.local_reads
LOCAL_WRITES = TABLE.local_writes
BINARY_OP_SYMBOLS = TABLE.binary_op_symbols
COMPARE_OPERATORS = TABLE.compare_operators


def has_arg(opcode: int) -> bool:
    """Whether the opcode uses its argument byte (dis reports arg=None otherwise)."""
    return opcode >= HAVE_ARGUMENT


def cache_entries(opname: str) -> int:
    """How many 2-byte CACHE code units follow this opcode in co_code."""
    return CACHE_ENTRIES.get(opname, 0)


def jump_variant(opname: str, *, backward: bool) -> str:
    """The opcode of the same jump family that jumps in the requested direction.

    `jump_variant("POP_JUMP_FORWARD_IF_TRUE", backward=True)` is
    "POP_JUMP_BACKWARD_IF_TRUE". A jump with only one direction (FOR_ITER) is
    returned unchanged; the assembler then reports an impossible layout.
    """
    for forward, backward_name in JUMP_DIRECTIONS.values():
        if opname in (forward, backward_name):
            return backward_name if backward else forward
    return opname


def canonical_opname(opname: str) -> str:
    """Map a direction-neutral jump name ("POP_JUMP_IF_FALSE") to a real opcode.

    The forward variant is returned; the assembler flips it when the target
    ends up before the jump. Real opnames are returned unchanged.
    """
    if opname in JUMP_DIRECTIONS and opname not in OPMAP:
        return JUMP_DIRECTIONS[opname][0]
    return opname


def localsplus_names(
    varnames: tuple[str, ...], cellvars: tuple[str, ...], freevars: tuple[str, ...]
) -> tuple[str, ...]:
    """The frame's variable slots, in the order LOAD_FAST / LOAD_DEREF args index them.

    Since 3.11 locals, cells and free variables share one array ("localsplus"):
    the locals first, then the cells that are not also arguments (an argument
    captured by an inner function keeps its local slot and becomes a cell in
    place), then the free variables.
    """
    cells_only = tuple(name for name in cellvars if name not in varnames)
    return varnames + cells_only + freevars
