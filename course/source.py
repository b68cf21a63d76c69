"""Reading the package's source: where an exercise is defined, and its exact text.

Everything here works on the files under the repository root with `ast` and
`tokenize`; nothing is imported. So the generator is fast (no torch import),
deterministic, and reads exactly the files it writes next to. A `Definition` keeps
the verbatim lines of one function or method: its decorators and signature (the
"header", up to the colon), its docstring, and its whole text.
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    """A module or definition that is not where a manifest says it is."""


@dataclass(frozen=True)
class Definition:
    """One function or method as written in the package."""

    module: str
    qualname: str
    path: Path
    start: int                  # first line (1-based), decorators included
    end: int                    # last line
    indent: str                 # the indentation of its `def`
    header: str                 # decorators and signature, verbatim, up to the colon
    docstring: str | None       # the docstring's lines, verbatim, or None
    body_indent: str            # the indentation of its body
    text: str                   # the whole definition, verbatim, ending in a newline
    names: frozenset[str]       # every bare name it mentions
    signature_names: frozenset[str]   # the names in its decorators and signature only


@dataclass(frozen=True)
class ModuleSource:
    """A parsed package module."""

    module: str
    path: Path
    text: str
    tree: ast.Module

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)

    def definition(self, qualname: str) -> Definition:
        """The function `name` or method `Class.name` defined in this module."""
        node = self._find(qualname)
        return _definition(self, qualname, node)

    def _find(self, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
        owner_name, _, name = qualname.rpartition(".")
        body, where = self.tree.body, self.path.name
        if owner_name:
            classes = {node.name: node for node in body if isinstance(node, ast.ClassDef)}
            if owner_name not in classes:
                raise SourceError(f"{where} defines no class {owner_name}"
                                  f"{_hint(owner_name, classes)}")
            body, where = classes[owner_name].body, f"class {owner_name} in {where}"
        functions = {node.name: node for node in body
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if name not in functions:
            raise SourceError(f"{where} defines no function {name}{_hint(name, functions)}")
        return functions[name]

    def top_level_names(self) -> set[str]:
        """Names this module binds with def, class or a plain assignment."""
        names: set[str] = set()
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        return names

    def import_lines(self) -> list[str]:
        """The module's top-level imports, relative ones made absolute.

        `if TYPE_CHECKING:` blocks of imports are kept as blocks.
        """
        lines = []
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lines.append(ast.unparse(self._absolute(node)))
            elif isinstance(node, ast.If) and _is_type_checking(node.test) and all(
                    isinstance(child, (ast.Import, ast.ImportFrom)) for child in node.body):
                body = [self._absolute(child) for child in node.body]
                lines.append(ast.unparse(ast.If(test=node.test, body=body, orelse=[])))
        return lines

    def _absolute(self, node: ast.stmt) -> ast.stmt:
        if not isinstance(node, ast.ImportFrom) or not node.level:
            return node
        package = self.module if self.path.name == "__init__.py" else self.module.rpartition(".")[0]
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - node.level + 1])
        module = f"{base}.{node.module}" if node.module else base
        return ast.ImportFrom(module=module, names=node.names, level=0)


def module_path(root: Path, module: str) -> Path:
    """The file under `root` that defines `module` (a module file or a package's __init__)."""
    base = Path(root).joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise SourceError(f"no module {module}: neither {base.relative_to(root)}.py nor "
                      f"{(base / '__init__.py').relative_to(root)} exists")


_CACHE: dict[tuple[Path, int, int], ModuleSource] = {}


def read_module(root: Path, module: str) -> ModuleSource:
    """Parse a package module under `root` (cached while the file is unchanged)."""
    path = module_path(Path(root), module)
    stat = path.stat()
    key = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _CACHE:
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as error:
            raise SourceError(f"{path}: {error}") from None
        _CACHE[key] = ModuleSource(module=module, path=path, text=text, tree=tree)
    return _CACHE[key]


def _definition(source: ModuleSource, qualname: str, node: ast.FunctionDef) -> Definition:
    lines = source.lines
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    indent = " " * node.col_offset
    header_line, header_col = _header_end(lines, node)
    header = "".join(lines[start - 1:header_line - 1]) + lines[header_line - 1][:header_col]
    first = node.body[0]
    own_line = first.lineno > header_line
    body_indent = " " * first.col_offset if own_line else indent + "    "
    docstring = None
    if ast.get_docstring(node, clean=False) is not None:
        if own_line:
            docstring = "".join(lines[first.lineno - 1:first.end_lineno]).rstrip() + "\n"
        else:
            docstring = body_indent + ast.unparse(first) + "\n"
    text = "".join(lines[start - 1:node.end_lineno]).rstrip() + "\n"
    return Definition(module=source.module, qualname=qualname, path=source.path, start=start,
                      end=node.end_lineno, indent=indent, header=header, docstring=docstring,
                      body_indent=body_indent, text=text, names=_names(node),
                      signature_names=_names(*node.decorator_list, node.args, node.returns))


def _header_end(lines: list[str], node: ast.FunctionDef) -> tuple[int, int]:
    """(line, column just after) of the colon that ends `def name(...) -> ...:`."""
    depth = 0
    readline = io.StringIO("".join(lines[node.lineno - 1:])).readline
    try:
        for token in tokenize.generate_tokens(readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
            elif token.string == ":" and depth == 0:
                return node.lineno + token.end[0] - 1, token.end[1]
    except (tokenize.TokenError, IndentationError):
        pass
    raise SourceError(f"cannot find the end of the signature of {node.name}")


def _names(*nodes: ast.AST | None) -> frozenset[str]:
    return frozenset(n.id for node in nodes if node is not None
                     for n in ast.walk(node) if isinstance(n, ast.Name))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _hint(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
