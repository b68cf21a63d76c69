"""Mutation testing of the graded tests: small wrong versions of each task's solution.

A graded test is only worth its points if wrong code fails it. Mutation testing makes
the wrong code: it takes a task's reference solution (the package function the manifest
names, verbatim in `solutions/chNN/`), changes one thing in it (a *mutant*), plugs that
in as the student's code, and runs the task's graded tests. A mutant that fails a test
is *killed*; one that passes them all *survives*: either the tests have a gap (a
student's plausible mistake would score full points, so a sharper test is needed) or
the change does not alter what the function does (an *equivalent* mutant, recorded in
`exercises/chNN/mutants.toml` with a one-line reason, `course/mutant_records.py`).

The operators, one change each (`KINDS`):

    operator     arithmetic and bitwise operators swapped (+ -, * //, & |, << >>)
    compare      comparisons swapped (< <=, == !=, in / not in, is / is not)
    identity     `is` / `==` swapped (and `is not` / `!=`); not against None, where the
                 two agree for every type that does not overload `==`
    not          a `not`, unary minus or `~` removed
    boolean      `and` / `or` swapped
    constant     an integer constant moved by one either way; True / False swapped
    statement    a statement replaced by `pass`
    push         a push / append / extend call dropped (a value never reaches the stack)
    branch       an `if`'s body removed (its `else` kept), or its `else` removed; one
                 side of a conditional expression taken always
    arguments    two neighbouring positional arguments of a call swapped
    keyword      a keyword argument dropped from a call
    return       a returned value replaced by None
    handler      an exception handler removed (the exception then propagates)

Why not mutmut or cosmic-ray: both mutate files on disk and run a whole test command per
mutant, and they find the code under test by import path. Here a task's code is one
function that the course plugin plugs into the package for the tests of that task only
(`course/plugging.py`), so the mutant is just another submission of that function: the
mutator works on the function's syntax tree alone and leaves the package untouched, and
`course/mutant_runner.py` runs many mutants in one pytest process (one fork each, after
collection), which is what makes a few thousand mutants affordable.

`python -m course mutants [chNN ...]` (in `course/mutant_records.py`) generates, runs,
reports and records them.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from course.generate import definitions, render_solution
from course.manifest import Chapter, Task

MUTATOR_VERSION = 1   # bump when the operators change: every record is then stale
BASELINE = "baseline"   # the key under which a task's unchanged solution is run first

KINDS = ("operator", "compare", "identity", "not", "boolean", "constant", "statement", "push",
         "branch", "arguments", "keyword", "return", "handler")

OPERATORS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.LShift: ast.RShift,
    ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitOr,
}
COMPARISONS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
IDENTITIES: dict[type, type] = {ast.Is: ast.Eq, ast.IsNot: ast.NotEq, ast.Eq: ast.Is,
                                ast.NotEq: ast.IsNot}
PUSHES = frozenset({"push", "push_many", "append", "extend", "appendleft", "insert", "add"})
SHOWN = 70   # characters of source shown for each side of a change


@dataclass(frozen=True)
class Mutant:
    """One changed version of a task's function."""

    task: str           # "ch01.4"
    key: str            # stable name: kind, line within the function, the change
    kind: str           # one of KINDS
    line: int           # line in the function (1 = its `def`)
    description: str    # `before` -> `after`
    source: str         # the whole mutated function, indented as in its file


@dataclass(frozen=True)
class Change:
    """A mutation site found in the tree: what it does and how to apply it."""

    kind: str
    node: ast.AST
    after: str                               # the description's new side ("": the code)
    apply: Callable[[], object]              # returns the node (or statements) to put back


# -- finding the changes a node allows ---------------------------------------------------

def _shown(node: ast.AST | list) -> str:
    if isinstance(node, list):
        node = node[0] if node else ast.Pass()
    text = ast.unparse(node).splitlines()[0]
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value not in (None, True, False)


def _none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _expression_changes(node: ast.AST) -> Iterator[Change]:
    if isinstance(node, ast.BinOp):
        yield from _operator_changes(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.Invert)):
        yield Change("not", node, "", lambda node=node: node.operand)
    if isinstance(node, ast.BoolOp):
        def flipped(node=node):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            return node
        yield Change("boolean", node, "", flipped)
    if isinstance(node, ast.Compare):
        yield from _compare_changes(node)
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
        yield from _constant_changes(node)
    if isinstance(node, ast.IfExp):
        yield Change("branch", node, "", lambda node=node: node.body)
        yield Change("branch", node, "", lambda node=node: node.orelse)
    if isinstance(node, ast.Call):
        yield from _call_changes(node)


def _operator_changes(node: ast.BinOp | ast.AugAssign) -> Iterator[Change]:
    if type(node.op) in OPERATORS:
        def swapped(node=node):
            node.op = OPERATORS[type(node.op)]()
            return node
        yield Change("operator", node, "", swapped)


def _compare_changes(node: ast.Compare) -> Iterator[Change]:
    operands = [node.left, *node.comparators]
    for index, op in enumerate(node.ops):
        for kind, table in (("compare", COMPARISONS), ("identity", IDENTITIES)):
            new = table.get(type(op))
            if new is None:
                continue
            pair = operands[index:index + 2]
            if kind == "identity" and (any(map(_literal, pair)) or any(map(_none, pair))):
                continue   # `x is 0` is a SyntaxWarning; `x == None` is `x is None`
            def swapped(node=node, index=index, new=new):
                node.ops[index] = new()
                return node
            yield Change(kind, node, "", swapped)


def _constant_changes(node: ast.Constant) -> Iterator[Change]:
    if isinstance(node.value, bool):
        yield Change("constant", node, "", lambda node=node: ast.Constant(not node.value))
        return
    for step in (1, -1):
        yield Change("constant", node, "", lambda node=node, step=step:
                     ast.Constant(node.value + step))


def _call_changes(node: ast.Call) -> Iterator[Change]:
    arguments = node.args
    for index in range(len(arguments) - 1):
        first, second = arguments[index], arguments[index + 1]
        if isinstance(first, ast.Starred) or isinstance(second, ast.Starred) \
                or ast.dump(first) == ast.dump(second):
            continue
        def swapped(node=node, index=index):
            node.args[index], node.args[index + 1] = node.args[index + 1], node.args[index]
            return node
        yield Change("arguments", node, "", swapped)
    for index, keyword in enumerate(node.keywords):
        def dropped(node=node, index=index):
            del node.keywords[index]
            return node
        yield Change("keyword", node, "", dropped)


def _statement_changes(node: ast.stmt) -> Iterator[Change]:
    if not isinstance(node, (ast.Pass, ast.Global, ast.Nonlocal)):
        kind = "push" if _is_push(node) else "statement"
        yield Change(kind, node, "pass", lambda: ast.Pass())
    if isinstance(node, ast.AugAssign):
        yield from _operator_changes(node)
    if isinstance(node, ast.If):
        yield Change("branch", node, "its else only" if node.orelse else "pass",
                     lambda node=node: node.orelse or ast.Pass())
        if node.orelse:
            def no_else(node=node):
                node.orelse = []
                return node
            yield Change("branch", node, "without its else", no_else)
    if isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield Change("return", node, "return None", lambda: ast.Return(ast.Constant(None)))
    if isinstance(node, ast.Try):
        yield from _handler_changes(node)


def _is_push(node: ast.stmt) -> bool:
    call = node.value if isinstance(node, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in PUSHES)


def _handler_changes(node: ast.Try) -> Iterator[Change]:
    for index in range(len(node.handlers)):
        def removed(node=node, index=index):
            if len(node.handlers) > 1 or node.finalbody:
                del node.handlers[index]
                if not node.handlers and not node.finalbody:
                    return node.body + node.orelse
                if not node.handlers:
                    node.body, node.orelse = node.body + node.orelse, []
                return node
            return node.body + node.orelse
        caught = node.handlers[index].type
        what = f"except {ast.unparse(caught)}" if caught is not None else "except"
        yield Change("handler", node, f"without its `{what}`", removed)


# -- applying one change at a time -----------------------------------------------------

class _Mutator(ast.NodeTransformer):
    """Walks a function's body; the `target`-th change found is applied (None: just
    count). The docstring and f-strings are left alone."""

    def __init__(self, target: int | None):
        self.target = target
        self.count = 0
        self.applied: tuple[Change, str, str] | None = None

    def _changes(self, node: ast.AST) -> object:
        found = _statement_changes(node) if isinstance(node, ast.stmt) \
            else _expression_changes(node)
        for change in found:
            if self.count == self.target:
                before = _shown(change.node)
                result = change.apply()
                after = change.after or _shown(result)
                self.applied = (change, before, after)
                self.count += 1
                return result
            self.count += 1
        return None

    def visit(self, node: ast.AST) -> object:
        if isinstance(node, ast.JoinedStr) or self.applied is not None:
            return node   # f-strings are messages; after the one change, copy the rest
        if isinstance(node, ast.AnnAssign):   # an annotation is never evaluated
            result = self._changes(node)
            if result is None and node.value is not None:
                node.value = self.visit(node.value)
            return node if result is None else result
        result = self._changes(node)
        return self.generic_visit(node) if result is None else result


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        return body[1:]
    return body


def _mutate_body(function: ast.FunctionDef, target: int | None) -> _Mutator:
    """Apply change number `target` to the function's body (in place); count them all."""
    mutator = _Mutator(target)
    body = function.body
    docstring = body[:len(body) - len(_without_docstring(body))]
    new_body: list[ast.stmt] = []
    for statement in body[len(docstring):]:
        result = mutator.visit(statement)
        new_body += result if isinstance(result, list) else [result]
    function.body = docstring + (new_body or [ast.Pass()])
    return mutator


def function_mutants(task: str, text: str) -> list[Mutant]:
    """Every mutant of one function, given its source (indented as in its file)."""
    indent = text[:len(text) - len(text.lstrip())]
    tree = ast.parse(textwrap.dedent(text))
    function = tree.body[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError(f"{task}: the source is not a function definition")
    total = _mutate_body(copy.deepcopy(function), None).count
    mutants, keys = [], set()
    for target in range(total):
        copied = copy.deepcopy(function)
        mutator = _mutate_body(copied, target)
        change, before, after = mutator.applied
        line = getattr(change.node, "lineno", 1)
        description = f"`{before}` -> " + (after if after.startswith(("its", "without"))
                                              else f"`{after}`")
        key = f"{change.kind} line {line}: {description}"
        number = 2
        while key in keys:
            key, number = f"{change.kind} line {line}: {description} #{number}", number + 1
        keys.add(key)
        ast.fix_missing_locations(copied)
        source = textwrap.indent(ast.unparse(copied), indent) + "\n"
        mutants.append(Mutant(task, key, change.kind, line, description, source))
    return mutants


# -- a task's mutants as submissions --------------------------------------------------------

@dataclass(frozen=True)
class Submission:
    """A mutant as a student's exercise file: the solution file with one function changed."""

    mutant: Mutant
    module: str         # the package module
    file_name: str      # e.g. "bytecode_stack.py"
    text: str           # the whole exercise file


def solution_source(chapter: Chapter, task: Task) -> str:
    """The task's reference function, verbatim (what its record fingerprints)."""
    return definitions(chapter, task.module)[task.id].text


def task_submissions(chapter: Chapter, task: Task) -> list[Submission]:
    """Each mutant of `task`, spliced into the chapter's solution file for its module."""
    original = solution_source(chapter, task)
    whole = render_solution(chapter, task.module)
    if whole is None or whole.count(original) != 1:
        raise ValueError(f"{task.id}: the solution file does not hold {task.qualname} verbatim")
    return [Submission(mutant, task.module, task.file_name, whole.replace(original, mutant.source))
            for mutant in function_mutants(task.id, original)]
