"""The package's style rules, checked in CI (STYLE.md; tinygrad checks its size the same way).

Each test reads the source of `minidynamo/` as text or with `ast` (nothing is
imported) and lists every offence with its file and line, so a failure says
exactly what to fix:

- every module opens with a docstring whose first paragraph names its chapter;
- no file over 800 lines, no function over 60 (a longer one is two concepts);
- `sys.version_info` appears only in `minidynamo/bytecode/opcodes.py`;
- a module imports only from its own layer or the layers below it (ARCHITECTURE.md).
"""

from __future__ import annotations

import ast
import dis
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minidynamo"
MODULES = sorted(PACKAGE.rglob("*.py"))

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 60

# Functions allowed to stay longer than MAX_FUNCTION_LINES, with the reason. An
# exercise target (exercises/chNN/manifest.toml) belongs here only when splitting
# it would change the student's task; anything else is split into two concepts.
LONG_FUNCTIONS: dict[str, str] = {
    # "minidynamo/module.py::Class.method": "exercise chNN.K: why it stays whole",
}

# Modules whose docstring may leave the chapter out, with the reason.
NO_CHAPTER_DOCSTRING: dict[str, str] = {
    # "minidynamo/module.py": "why its docstring names no chapter",
}

VERSION_CHECK_MODULE = "minidynamo/bytecode/opcodes.py"  # the one module of Python-version facts

# The import layering, lowest first (ARCHITECTURE.md): a module may import from its own
# layer and the layers below it. Names are the first part after `minidynamo.`.
LAYERS: list[tuple[str, ...]] = [
    ("config", "logs", "polyfills", "trace_rules"),  # leaves: settings, loggers, plain Python
    # helpers, the table of torch functions
    ("bytecode",),  # ch01
    ("resume",),  # ch07, but it needs only bytecode/, so the translator can use it
    ("exc",),  # graph breaks, used by every layer above bytecode
    ("sources", "variables", "global_state", "guard_reads", "guards", "joint_guards", "pinning",
     "constant_tuples",
     "shapes"),
    # ch03-04; guards, how their check function reads values and runs tuples of
    # constants, dynamic shapes (ch09)
    ("codegen",),  # ch05: rebuilds trackers in bytecode; the translator's breaks use it
    ("translator",),  # ch02, 06, 08
    ("output_graph", "side_effects"),  # ch05
    ("cache",),  # ch09: cache entries, their check functions and binders
    ("convert_frame",),  # ch07, 09
    ("backends",),  # ch10
    ("api",),
    ("trace_logs",),  # trace logs as data: the testing helpers read them
    ("__init__", "scan", "testing", "stack_oracle"),  # entry points and tools: may import anything
    ("fuzz",),  # the differential fuzzer (ch07): runs programs through testing's helpers
]
LAYER_OF = {name: rank for rank, names in enumerate(LAYERS) for name in names}

# Layers with a stricter rule than "this layer or below".
ONLY_IMPORTS: dict[str, set[str]] = {"resume": {"bytecode", "resume"}}

# Imports under `if TYPE_CHECKING:` (annotations only, never run) that may point up,
# by imported module, with the reason.
TYPE_CHECKING_UPWARD: dict[str, str] = {
    "minidynamo.translator.base": "trackers annotate `tx: Translator` in their protocol methods",
    "minidynamo.codegen": "trackers annotate `reconstruct(self, codegen: PyCodegen)`",
    "minidynamo.output_graph": "builders and lazy trackers annotate the OutputGraph they use",
}


def relative(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def component(path: Path) -> str:
    """The layer name of a module file: `minidynamo/variables/base.py` -> `variables`."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


# -- docstrings ---------------------------------------------------------------------

CHAPTER = re.compile(r"\bchapters? \d+", re.IGNORECASE)  # "chapter 5", "(chapters 2-6)"


def test_every_module_docstring_names_its_chapter():
    offences = []
    for path in MODULES:
        docstring = ast.get_docstring(parse(path)) or ""
        first_paragraph = docstring.split("\n\n")[0]
        if relative(path) not in NO_CHAPTER_DOCSTRING and not CHAPTER.search(first_paragraph):
            offences.append(f"{relative(path)}:1: docstring does not name its chapter: "
                            f"{first_paragraph[:70]!r}")
    assert not offences, "\n".join(offences)


# -- size ------------------------------------------------------------------------------


def test_no_file_is_over_800_lines():
    offences = [
        f"{relative(path)}: {count} lines (at most {MAX_FILE_LINES})"
        for path in MODULES
        if (count := len(path.read_text().splitlines())) > MAX_FILE_LINES
    ]
    assert not offences, "\n".join(offences)


def functions_with_qualnames(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", node
            yield from functions_with_qualnames(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions_with_qualnames(node, f"{prefix}{node.name}.")
        else:
            yield from functions_with_qualnames(node, prefix)


def test_no_function_is_over_60_lines():
    offences = []
    for path in MODULES:
        for qualname, node in functions_with_qualnames(parse(path)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            count = node.end_lineno - start + 1
            key = f"{relative(path)}::{qualname}"
            if count > MAX_FUNCTION_LINES and key not in LONG_FUNCTIONS:
                offences.append(f"{relative(path)}:{node.lineno}: {qualname} is {count} lines "
                                f"(at most {MAX_FUNCTION_LINES})")
    assert not offences, "\n".join(offences)


def test_the_long_function_allowlist_has_no_stale_entries():
    present = {
        f"{relative(path)}::{qualname}"
        for path in MODULES
        for qualname, _ in functions_with_qualnames(parse(path))
    }
    stale = sorted(set(LONG_FUNCTIONS) - present)
    assert not stale, f"LONG_FUNCTIONS names functions that no longer exist: {stale}"


# -- Python-version checks -----------------------------------------------------------


def version_checks(tree: ast.AST):
    """Line numbers of `sys.version_info` and of `from sys import version_info`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "version_info":
            yield node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            if any(alias.name == "version_info" for alias in node.names):
                yield node.lineno


def test_version_checks_live_only_in_the_opcode_facts_module():
    offences = [
        f"{relative(path)}:{line}: sys.version_info outside {VERSION_CHECK_MODULE}"
        for path in MODULES
        if relative(path) != VERSION_CHECK_MODULE
        for line in version_checks(parse(path))
    ]
    assert not offences, "\n".join(offences)


# -- import layering -----------------------------------------------------------------


def package_imports(tree: ast.Module):
    """(imported module, line, under TYPE_CHECKING) for every import of the package,
    at module level and inside functions. `from minidynamo import config` imports
    the module `minidynamo.config`."""

    def visit(node: ast.AST, type_checking: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from visit_statement(statement, True)
                for statement in child.orelse:
                    yield from visit_statement(statement, type_checking)
            else:
                yield from visit_statement(child, type_checking)

    def visit_statement(node: ast.AST, type_checking: bool):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, type_checking
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "minidynamo":
                for alias in node.names:
                    yield f"minidynamo.{alias.name}", node.lineno, type_checking
            else:
                yield node.module, node.lineno, type_checking
        else:
            yield from visit(node, type_checking)

    for module, line, type_checking in visit(tree, False):
        if module == "minidynamo" or module.startswith("minidynamo."):
            yield module, line, type_checking


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def layering_offences(path: Path, tree: ast.Module) -> list[str]:
    """Every import in `tree` (the module at `path`) that breaks the layering."""
    importer = component(path)
    offences = []
    for module, line, type_checking in package_imports(tree):
        imported = module.split(".")[1] if "." in module else "__init__"
        where = f"{relative(path)}:{line}: {importer} imports {module}"
        if imported not in LAYER_OF:
            offences.append(f"{where}, which is in no layer (add it to LAYERS)")
        elif importer in ONLY_IMPORTS and imported not in ONLY_IMPORTS[importer]:
            offences.append(f"{where}, but {importer} may import only "
                            f"{sorted(ONLY_IMPORTS[importer])}")
        elif LAYER_OF[imported] > LAYER_OF[importer]:
            if type_checking and module in TYPE_CHECKING_UPWARD:
                continue  # an annotation only, listed with its reason
            offences.append(f"{where}, a higher layer ({' / '.join(LAYERS[LAYER_OF[imported]])})")
    return offences


def test_every_package_module_is_in_a_layer():
    missing = sorted({relative(path) for path in MODULES if component(path) not in LAYER_OF})
    assert not missing, f"modules in no layer of LAYERS: {missing}"


def test_modules_import_only_from_their_layer_or_below():
    offences = [
        offence for path in MODULES if component(path) in LAYER_OF
        for offence in layering_offences(path, parse(path))
    ]
    assert not offences, "\n".join(offences)


@pytest.mark.parametrize(
    "file, source, expected",
    [
        ("variables/base.py", "from minidynamo.translator import root\n",
         "minidynamo/variables/base.py:1: variables imports minidynamo.translator"),
        ("exc.py", "def f():\n    from minidynamo import api\n",
         "minidynamo/exc.py:2: exc imports minidynamo.api"),
        ("resume/generate.py", "from minidynamo.exc import graph_break\n",
         "but resume may import only"),
        ("variables/lazy.py",
         "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from minidynamo.api import x\n",
         "minidynamo/variables/lazy.py:3: variables imports minidynamo.api"),
    ],
)
def test_the_layering_check_reports_a_violation_with_its_file_and_line(file, source, expected):
    offences = layering_offences(PACKAGE / file, ast.parse(source))
    assert len(offences) == 1 and expected in offences[0]


def test_type_checking_imports_on_the_list_may_point_up():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from minidynamo.codegen import PyCodegen\n"
    assert layering_offences(PACKAGE / "variables/base.py", ast.parse(source)) == []


# -- text that lists the package -----------------------------------------------------

ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
LAYER_LINE = re.compile(r"^\s*(\d+)\s+(.*)$")
MODULE_NAME = re.compile(r"\b([a-z_][a-z0-9_]*)(?:\.py|/)")


def architecture_layers() -> list[tuple[str, ...]]:
    """The numbered layer lines of ARCHITECTURE.md's package-layers block, as names."""
    text = ARCHITECTURE.read_text()
    section = text[text.index("## Package layers"):]
    block = section[section.index("```\n") + 4:]
    block = block[:block.index("```")]
    layers = []
    for line in block.splitlines():
        if match := LAYER_LINE.match(line):
            assert int(match.group(1)) == len(layers), f"layer numbers out of order: {line!r}"
            names_part = re.split(r"\s{2,}", match.group(2))[0]
            layers.append(tuple(MODULE_NAME.findall(names_part)))
    return layers


def test_architecture_layer_diagram_is_the_layering_the_tests_check():
    assert architecture_layers() == LAYERS


TRANSLATOR = PACKAGE / "translator"
LISTED_MODULE = re.compile(r"^    (\w+\.py)\s+(.*)$")
CAPITALS = re.compile(r"\b[A-Z][A-Z0-9_]+\b")


def translator_listing() -> dict[str, str]:
    """translator/__init__.py's docstring listing: module file -> what it says it holds."""
    listing: dict[str, str] = {}
    current = None
    for line in (ast.get_docstring(parse(TRANSLATOR / "__init__.py")) or "").splitlines():
        if match := LISTED_MODULE.match(line):
            current = match.group(1)
            listing[current] = match.group(2)
        elif current and line.startswith(" " * 10) and line.strip():
            listing[current] += " " + line.strip()
        else:
            current = None
    return listing


def defined_names(path: Path) -> set[str]:
    """Every function, method and class-level name a module defines."""
    names = set()
    for node in ast.walk(parse(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_translator_docstring_lists_every_module_and_what_it_handles():
    listing = translator_listing()
    modules = {p.name for p in TRANSLATOR.glob("*.py") if p.name != "__init__.py"}
    assert set(listing) == modules, "translator/__init__.py's listing and the package differ"
    offences = []
    for module, text in listing.items():
        names = defined_names(TRANSLATOR / module)
        handled = names & set(dis.opmap)
        named = set(CAPITALS.findall(text)) & set(dis.opmap)
        offences += [f"{module}: lists {name}, which it does not define" for name in named - names]
        if "family" not in text:
            offences += [f"{module}: handles {name}, not listed" for name in handled - named]
    assert not offences, "\n".join(offences)


def test_variable_tracker_protocol_table_lists_every_public_method():
    tree = parse(PACKAGE / "variables" / "base.py")
    tracker = next(node for node in tree.body
                   if isinstance(node, ast.ClassDef) and node.name == "VariableTracker")
    methods = {node.name for node in tracker.body
               if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")}
    table = {match.group(1) for match in
             re.finditer(r"^\| `(\w+)\(", ast.get_docstring(tree) or "", re.MULTILINE)}
    assert table == methods, f"only in the class: {methods - table}; only in the table: {table - methods}"
