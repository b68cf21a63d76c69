"""`python -m minidynamo.scan module:function`: a bytecode scanner report (chapter 1).

Prints what chapter 1 builds, for any Python function: the instruction listing
(as `minidynamo.bytecode.scan` sees it: EXTENDED_ARG folded, CACHE dropped,
jumps pointing at instructions, exception handlers attached), the maximum
stack depth, and a short report in the spirit of a "BytecodeScanner": how
many instructions could touch a tensor (and so become FX graph nodes in
chapter 5), how many jump, and where TorchDynamo would have to think hard
(data-dependent branches graph-break, chapter 6).

    python -m minidynamo.scan json:dumps
    python -m minidynamo.scan textwrap:TextWrapper._wrap_chunks
    python -m minidynamo.scan --file model.py:forward
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import inspect
import sys
from collections import Counter
from pathlib import Path
from types import CodeType
from typing import Any, Sequence

from minidynamo.bytecode import Instruction, max_stack_depth, opcodes, scan

# Opcodes that, given a tensor operand, compute something with it: under
# TorchDynamo each becomes (or may become) a node of the FX graph. Loads,
# stores and stack shuffles only move references around and are not counted;
# PRECALL is not counted either, its CALL is.
TENSOR_OPS: dict[str, str] = {
    "BINARY_OP": "arithmetic: a + b, a @ b, a **= 2",
    "UNARY_NEGATIVE": "-x", "UNARY_POSITIVE": "+x", "UNARY_INVERT": "~x",
    "UNARY_NOT": "not x (asks a tensor for its truth value)",
    "COMPARE_OP": "x < y gives a tensor of booleans",
    "CONTAINS_OP": "v in x",
    "BINARY_SUBSCR": "indexing and slicing: x[0], x[:, 1:]",
    "STORE_SUBSCR": "in-place indexing: x[0] = 1",
    "DELETE_SUBSCR": "del x[i]",
    "LOAD_ATTR": "attributes: x.shape, x.T, self.weight",
    "LOAD_METHOD": "methods: x.sum(), x.view(...)",
    "STORE_ATTR": "setting attributes: self.cache = x",
    "CALL": "calls: torch.relu(x), self.linear(x)",
    "CALL_FUNCTION_EX": "calls with *args / **kwargs",
    "UNPACK_SEQUENCE": "a, b = x (iterates a tensor's first dimension)",
    "GET_ITER": "for row in x",
    "FORMAT_VALUE": "f'{x}' (str(x) reads the tensor's values)",
}

# Direction-neutral families of conditional jumps, by what decides them.
TRUTH_JUMPS = frozenset(
    name for name in opcodes.CONDITIONAL_JUMPS if "TRUE" in name or "FALSE" in name)
NONE_JUMPS = frozenset(name for name in opcodes.CONDITIONAL_JUMPS if "NONE" in name)

GRAPH_BREAK_NOTES: dict[str, str] = {
    "truth": "branches on the truth of a value: if that value is a tensor (or "
             "computed from one) the direction depends on data, so TorchDynamo "
             "graph-breaks there (generic_jump, chapter 6); on a Python value it "
             "is decided while tracing",
    "none": "`is None` tests are decided while tracing: no break",
    "loop": "loops are unrolled while tracing when they iterate a Python "
            "container or range; iterating an unknown iterator graph-breaks",
    "yield": "generator code: a function that yields is not traced as one frame",
    "try": "try/except/with blocks: traced in chapter 8; a raise inside traced "
           "code graph-breaks unless it is handled in the same frame",
}


class TargetError(Exception):
    """A target on the command line that does not name a function with bytecode."""


# ---------------------------------------------------------------------------
# Finding the function
# ---------------------------------------------------------------------------

def split_target(target: str) -> tuple[str, str]:
    """'package.module:Class.method' -> ('package.module', 'Class.method')."""
    where, separator, qualname = target.rpartition(":")
    if not separator or not where or not qualname:
        raise TargetError(
            f"{target!r} is not of the form module:function. "
            "Fix: write e.g. json:dumps or textwrap:TextWrapper.wrap "
            "(or --file path.py:function).")
    return where, qualname


def import_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        raise TargetError(
            f"cannot import module {name!r}: {error}. Fix: check the spelling, "
            "run from the directory that contains it, or pass --file path.py:function."
        ) from error


def load_file(path: str) -> Any:
    """Execute a Python file as a module named after it, and return the module."""
    file = Path(path)
    if not file.is_file():
        raise TargetError(f"no such file: {path!r}. Fix: give the path of a .py file.")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    if spec is None or spec.loader is None:
        raise TargetError(f"{path!r} cannot be loaded as Python source. "
                          "Fix: give the path of a .py file.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def resolve_attribute(module: Any, qualname: str) -> Any:
    """Follow 'Class.method' from the module, naming the missing part on failure."""
    current, walked = module, module.__name__
    for part in qualname.split("."):
        if not hasattr(current, part):
            names = [name for name in dir(current) if not name.startswith("__")]
            close = difflib.get_close_matches(part, names, n=3)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise TargetError(f"{walked} has no attribute {part!r}.{hint} "
                              f"Fix: name a function defined in {walked}.")
        current, walked = getattr(current, part), f"{walked}.{part}"
    return current


def code_of(obj: Any, name: str) -> CodeType:
    """The code object behind a function, method or decorated function."""
    while not hasattr(obj, "__code__"):
        inner = getattr(obj, "__func__", None) or getattr(obj, "__wrapped__", None)
        if inner is None:
            break
        obj = inner
    if hasattr(obj, "__code__"):
        return obj.__code__
    if inspect.isclass(obj):
        problem = f"{name} is a class, not a function. Fix: name one of its methods, " \
                  f"e.g. {name}.__init__"
    elif inspect.isbuiltin(obj) or inspect.ismethoddescriptor(obj):
        problem = f"{name} is implemented in C and has no bytecode. Fix: name a " \
                  "function written in Python"
    else:
        problem = f"{name} is a {type(obj).__name__}, not a function. Fix: name a " \
                  "function or method written in Python"
    raise TargetError(problem + ".")


def find_code(target: str, *, from_file: bool = False) -> CodeType:
    """The code object named by 'module:qualname' (or 'path.py:qualname')."""
    where, qualname = split_target(target)
    module = load_file(where) if from_file else import_module(where)
    return code_of(resolve_attribute(module, qualname), f"{where}:{qualname}")


# ---------------------------------------------------------------------------
# The listing
# ---------------------------------------------------------------------------

def format_instruction(instruction: Instruction) -> str:
    """One listing row: marker, offset, line, opname, argument, handler."""
    marker = ">>" if instruction.is_jump_target else "  "
    line = "" if instruction.starts_line is None else str(instruction.starts_line)
    argument = instruction.argrepr
    if not argument and instruction.arg is not None:
        argument = str(instruction.arg)
    if instruction.target is not None:
        argument = f"-> {instruction.target.offset}"
    row = f"{marker}{instruction.offset:>6}  {line:>5}  {instruction.opname:<31}{argument}"
    entry = instruction.exn_tab_entry
    if entry is not None:
        lasti = ", lasti" if entry.lasti else ""
        row = f"{row:<80}  except -> {entry.target.offset} (depth {entry.depth}{lasti})"
    return row.rstrip()


def listing(instructions: list[Instruction]) -> list[str]:
    header = f"  {'offset':>6}  {'line':>5}  {'opname':<31}argument"
    return [header] + [format_instruction(instruction) for instruction in instructions]


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

def _where(instruction: Instruction) -> str:
    line = instruction.positions.lineno if instruction.positions else None
    return f"offset {instruction.offset}" + (f", line {line}" if line else "")


def graph_break_notes(instructions: list[Instruction]) -> list[str]:
    """Where TorchDynamo would have to decide something: one note per kind."""
    found: dict[str, list[Instruction]] = {}
    for instruction in instructions:
        kind = ("truth" if instruction.opname in TRUTH_JUMPS else
                "none" if instruction.opname in NONE_JUMPS else
                "loop" if instruction.opname == "FOR_ITER" else
                "yield" if instruction.opname == "YIELD_VALUE" else
                "try" if instruction.opname == "PUSH_EXC_INFO" else None)
        if kind is not None:
            found.setdefault(kind, []).append(instruction)
    notes = []
    for kind, note in GRAPH_BREAK_NOTES.items():
        if kind in found:
            places = "; ".join(_where(instruction) for instruction in found[kind][:6])
            more = f" and {len(found[kind]) - 6} more" if len(found[kind]) > 6 else ""
            notes.append(f"{len(found[kind])} x {note}. At {places}{more}.")
    return notes


def report(instructions: list[Instruction]) -> list[str]:
    """The BytecodeScanner summary: counts, tensor share, jumps, break notes."""
    total = len(instructions)
    tensor_ops = Counter(i.opname for i in instructions if i.opname in TENSOR_OPS)
    touching = sum(tensor_ops.values())
    share = 100.0 * touching / total if total else 0.0
    jumps = [i for i in instructions if i.opname in opcodes.JUMPS]
    conditional = sum(1 for i in jumps if i.opname in opcodes.CONDITIONAL_JUMPS)
    handlers = {id(i.exn_tab_entry.target) for i in instructions if i.exn_tab_entry}
    lines = [
        "BytecodeScanner report",
        f"  instructions:        {total}",
        f"  may touch tensors:   {touching} ({share:.1f}%)",
    ]
    lines += [f"      {name:<20}{count:>4}  {TENSOR_OPS[name]}"
              for name, count in tensor_ops.most_common()]
    lines += [
        f"  jumps:               {len(jumps)} ({conditional} conditional, "
        f"{len(jumps) - conditional} unconditional)",
        f"  exception handlers:  {len(handlers)}",
        "  graph-break notes:",
    ]
    notes = graph_break_notes(instructions)
    lines += [f"    - {note}" for note in notes] or ["    - straight-line code: nothing to decide"]
    return lines


def describe(code: CodeType) -> str:
    """The whole printout for one code object."""
    instructions = scan(code)
    title = f"{code.co_qualname}  ({code.co_filename}:{code.co_firstlineno})"
    depth = max_stack_depth(instructions)
    parts = [title, ""] + listing(instructions) + [
        "", f"max stack depth: {depth} (co_stacksize {code.co_stacksize})", ""]
    return "\n".join(parts + report(instructions))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minidynamo.scan",
        description="List a function's bytecode as minidynamo scans it, with a "
                    "BytecodeScanner report (chapter 1).")
    parser.add_argument("target", nargs="?", help="module:function or module:Class.method")
    parser.add_argument("--file", metavar="PATH.py:FUNCTION",
                        help="load the function from a Python file instead")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    options = parser.parse_args(argv)
    if (options.target is None) == (options.file is None):
        parser.error("give exactly one of: module:function, or --file path.py:function")
    try:
        code = find_code(options.file or options.target, from_file=options.file is not None)
    except TargetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(describe(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
