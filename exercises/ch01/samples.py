"""Code objects the chapter-1 graded tests compare against CPython's own `dis`.

Nothing here is graded: it only gathers real code (a slice of the standard library and
a few functions built to stress one feature each) for the tests to scan.
"""

from __future__ import annotations

import importlib
from types import CodeType

STDLIB_MODULES = ("json.decoder", "textwrap", "argparse", "difflib", "fractions",
                  "contextlib", "tokenize", "shlex")


def nested(code: CodeType):
    """`code` and every code object among its constants, recursively."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from nested(const)


def stdlib_code_objects() -> list[CodeType]:
    """Every code object of a few standard-library modules, compiled from source."""
    found = []
    for name in STDLIB_MODULES:
        path = importlib.import_module(name).__file__
        with open(path, encoding="utf-8") as source:
            found.extend(nested(compile(source.read(), path, "exec")))
    return found


def long_branch_function():
    """A function whose jumps are too long for one byte: needs EXTENDED_ARG."""
    body = "\n".join(f"        total += x * {i} - {i}" for i in range(120))
    source = (f"def long_branch(x, flag):\n    total = 0\n    if flag:\n{body}\n"
              f"    for i in range(3):\n        if i == 1:\n            continue\n"
              f"        total += i\n    return total\n")
    namespace: dict = {}
    exec(compile(source, "<long_branch>", "exec"), namespace)
    return namespace["long_branch"]


def many_constants_function():
    """A function with more than 256 constants: LOAD_CONST needs EXTENDED_ARG."""
    body = "\n".join(f"    x = x * 0.5 + {i}.25" for i in range(300))
    source = f"def many_constants(x):\n{body}\n    return x\n"
    namespace: dict = {}
    exec(compile(source, "<many_constants>", "exec"), namespace)
    return namespace["many_constants"]


def handlers(x):
    """try/except/finally and with: a real exception table."""
    import contextlib
    result = []
    try:
        with contextlib.suppress(KeyError):
            result.append({}[x])
        result.append(1 / x)
    except ZeroDivisionError as error:
        result.append(type(error).__name__)
    finally:
        result.append("done")
    return result


def tensor_like(x, w):
    """The shape of code the BytecodeScanner report is about."""
    y = x @ w + 1
    if y.sum() > 0:
        y = y.relu()
    return [v * 2 for v in (y, x)], y.shape, f"{x}"
