"""The standard-library sample the bytecode tests and benchmark compare against.

Sources are compiled, not imported, so module-level code is included and
nothing runs. Every code object is collected, nested ones (functions, classes,
lambdas, comprehensions, generators) included.
"""

from __future__ import annotations

import importlib
from types import CodeType

MODULES = (
    "json.decoder", "json.encoder", "json", "ast", "inspect", "textwrap", "argparse",
    "difflib", "email.message", "email.utils", "email._header_value_parser",
    "email.feedparser", "http.client", "collections", "functools", "dataclasses",
    "enum", "pathlib", "typing", "re._parser", "re._compiler", "tarfile", "zipfile",
    "configparser", "logging", "logging.handlers", "unittest.case", "string", "shlex",
    "fnmatch", "posixpath", "statistics", "fractions", "tokenize", "calendar",
    "copy", "pprint", "csv", "urllib.parse", "html.parser", "ipaddress", "contextlib",
    "asyncio.base_events", "asyncio.tasks", "traceback", "tempfile", "shutil",
    "threading", "pickle", "datetime", "_pydecimal", "dis",
)


def nested_code_objects(code: CodeType):
    """`code` and every code object among its constants, recursively."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from nested_code_objects(const)


def compile_module(name: str) -> CodeType:
    """Compile a module's source file (frozen modules have a __file__ too)."""
    path = importlib.import_module(name).__file__
    with open(path, encoding="utf-8") as source:
        return compile(source.read(), path, "exec")


def corpus(modules=MODULES) -> list[CodeType]:
    """Every code object of the sample modules."""
    return [code for name in modules for code in nested_code_objects(compile_module(name))]
