"""The grammar of generated programs: what the fuzzer writes (chapter 7).

A program is Python source: the PRELUDE (`program.py`: module state, small classes
and helpers), a few generated helpers and the function
`f(x, y, n, s, flag, xs, d, obj, mod)`, whose body is drawn statement by statement
from a rule table. Each rule is a method `rule_<name>` that returns the lines of one
statement and updates the *scope*: which names hold which kind of value (tensor,
int, float, bool, list of tensors, dict of tensors, `Pair`). Only values of the right
kind are used, so every program runs eagerly without an error, except the `Escaped`
it raises on purpose:

    tensors    one shape (S,) for all of them, float dtype; S and the dtype change
               between calls (the calls are in `runner.py`)
    ints       folded while tracing; lengths and shapes are ints too
    containers `xs` (a list passed in, at least 2 items), `d` (keys 'a' and 'b'),
               lists and dicts built in the body; both indexed and mutated
    objects    `obj.w` (a tensor), `obj.k` (an int), `obj.scaled` (a property), a
               `Pair` dataclass made in the body; `mod` (an nn.Module) called
    module     `CONFIG['scale']`, `CONFIG['use_bias']` and `OFFSET` read and
               written (`global OFFSET`), `EVENTS` appended to, its length read
    exceptions `try` / `except` / `else` / `finally` around a `raise ValueError` or a
               failing lookup (in the body or one frame down), a side effect in each
               part; `raise Escaped(...)` on a condition that only some calls meet
    managers   `torch.no_grad()`, `torch.enable_grad()`, `contextlib.suppress`, the
               PRELUDE's `Recorder` (it writes entering and leaving to `EVENTS`)
    generators `ramp(u, m)` consumed by `list`, `sum` and `for`; generator expressions
    loops      over a range, a tensor, a copy of `xs`, a generator, or a list itself
               (its items may change in the body, which the loop then sees)
    breaks     `.tolist()`, `.item()`, a branch on a tensor, inside helpers too
    identity   an alias updated in place (`+=`, `mul_`, `add_`) compared with `is`

Blocks (`if`, `for`, `while`, `with`, `try`, closures) get a copy of the scope: a
name bound inside one is forgotten after it, so nothing is used that one path did
not define. Before each call but the first the program changes none, one or two
things of its module or arguments (`MUTATIONS`, drawn into `Program.mutations`). Values are drawn through
Hypothesis (`draw`), which also shrinks a failing program to a small one; simpler
choices come first in every table because Hypothesis shrinks towards the first.
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any, Callable

from hypothesis import strategies as st

from minidynamo.fuzz.program import CALLS, CHANGES, MUTATIONS, PRELUDE, Program

TENSOR, INT, FLOAT, BOOL, LIST, DICT = "tensor", "int", "float", "bool", "list", "dict"
SCALAR = "scalar"  # a 0-dim tensor (an element of a tensor): only a factor
PAIR = "pair"      # a `Pair(a=tensor, b=int)` made in the body

PARAMETERS = {"x": TENSOR, "y": TENSOR, "n": INT, "s": FLOAT, "flag": BOOL,
              "xs": LIST, "d": DICT}
OBJECT_PARAMETERS = ("obj", "mod")  # attributes are used through rules, not as values

MAX_DEPTH = 2          # blocks inside blocks
MAX_STATEMENTS = 8     # per block

# Conditions that only some calls meet: the argument change (`CHANGES`) or a mutation.
RARE_CONDITIONS = ["n > 2", "len(xs) > 2", "x.shape[0] > 3", "not flag", "s < 0.3",
                   "x.dtype == torch.float64", "obj.k > 3", "OFFSET < 0",
                   "CONFIG['scale'] > 2.5", "not CONFIG['use_bias']"]


@dataclasses.dataclass
class Scope:
    """The names bound at this point of the body, by kind, and what is known of them."""

    names: dict[str, str]
    list_lengths: dict[str, int]  # smallest length a list can have here
    dict_keys: dict[str, set[str]]  # keys surely present
    has_objects: bool = True  # `obj` and `mod` are in scope (not in a helper)
    # lists and dicts a `for` here walks itself (not a copy): the body may change their
    # items, not their length (a list's loop would never end, a dict's iterator raises)
    iterated: frozenset[str] = frozenset()

    def of(self, kind: str) -> list[str]:
        return [name for name, each in self.names.items() if each == kind]

    def copy(self) -> Scope:
        return Scope(dict(self.names), dict(self.list_lengths),
                     {name: set(keys) for name, keys in self.dict_keys.items()},
                     self.has_objects, self.iterated)

    def forget_new(self, inner: Scope) -> None:
        """After a block: what the block learnt about outer names that holds on every
        path (lists only get shorter, dicts only lose keys)."""
        for name, length in inner.list_lengths.items():
            if name in self.list_lengths:
                self.list_lengths[name] = min(self.list_lengths[name], length)
        for name, keys in inner.dict_keys.items():
            if name in self.dict_keys:
                self.dict_keys[name] &= keys


class ProgramWriter:
    """Draws one program; `draw` is Hypothesis's (from `st.composite` / `st.data()`)."""

    def __init__(self, draw: Callable[[st.SearchStrategy], Any]) -> None:
        self.draw = draw
        self.counter = 0
        self.helpers: list[str] = []
        self.depth = 0
        self.loops = 0  # inside a loop nothing may shrink: it would run more than once
        self.writes_offset = False  # the body assigns OFFSET: `global OFFSET` first

    # -- drawing ------------------------------------------------------------------

    def pick(self, options: list[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def number(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- the program ----------------------------------------------------------------

    def program(self) -> Program:
        change = self.pick(list(CHANGES))
        scope = Scope(dict(PARAMETERS), {"xs": 2}, {"d": {"a", "b"}})
        body = self.block(scope, minimum=3)
        returned = self.returned(scope)
        declaration = ["global OFFSET"] if self.writes_offset else []
        source = "\n".join([PRELUDE, *self.helpers, "",
                            "def f(x, y, n, s, flag, xs, d, obj, mod):",
                            *indent(declaration + body), f"    return {returned}", ""])
        return Program(source, change, self.mutations())

    def mutations(self) -> tuple[tuple[int, str], ...]:
        """Before each call after the first: none (what shrinking keeps), one or two of
        `MUTATIONS` (two: one may undo what would hide the other, as `EVENTS = []`)."""
        return tuple((call, self.pick(list(MUTATIONS))) for call in range(1, CALLS)
                     for _ in range(self.number(0, 2)))

    def block(self, scope: Scope, minimum: int = 1) -> list[str]:
        """Statements, each followed by a "one more?" choice (as Hypothesis draws lists:
        shrinking then deletes a statement anywhere, not only the last)."""
        lines: list[str] = []
        for count in range(1, MAX_STATEMENTS + 1):
            lines += self.statement(scope)
            # "one more" 4 times in 5 at the top, 2 in 3 inside blocks; "stop" is the
            # choice Hypothesis shrinks towards
            if count >= minimum and self.draw(st.integers(0, 2 if self.depth else 4)) == 0:
                break
        return lines

    def statement(self, scope: Scope) -> list[str]:
        rules = SIMPLE_RULES + (BLOCK_RULES if self.depth < MAX_DEPTH else [])
        if self.loops:  # a break in a loop makes both compilers run the frame eagerly
            rules = [rule for rule in rules if rule not in BREAK_RULES]
        return getattr(self, f"rule_{self.pick(rules)}")(scope)

    def inner_block(self, scope: Scope) -> tuple[list[str], Scope]:
        inner = scope.copy()
        self.depth += 1
        try:
            lines = self.block(inner)
        finally:
            self.depth -= 1
        scope.forget_new(inner)
        return lines, inner

    def returned(self, scope: Scope) -> str:
        candidates = [name for name in scope.names if name not in PARAMETERS]
        chosen = [name for name in candidates if self.draw(st.booleans())][:4]
        return "(" + ", ".join(chosen + [self.tensor(scope)]) + ",)"

    # -- expressions ------------------------------------------------------------------

    def tensor(self, scope: Scope, depth: int = 0) -> str:
        """An expression of shape (S,)."""
        kinds = ["name", "name", "scalar", "binary", "unary", "where", "item", "reduce"]
        kinds += ["attribute", "module"] if scope.has_objects else []
        kinds += ["pair"] if scope.of(PAIR) else []
        kind = self.pick(kinds if depth < 2 else ["name"])
        if kind == "name":
            return self.pick(scope.of(TENSOR))
        if kind == "scalar":
            number = self.pick(scope.of(INT) + scope.of(FLOAT) + scope.of(SCALAR)
                               + ["2", "0.5", "OFFSET", "CONFIG['scale']"])
            return f"({self.tensor(scope, depth + 1)} {self.pick(['*', '+', '-'])} {number})"
        if kind == "binary":
            return (f"({self.tensor(scope, depth + 1)} {self.pick(['+', '*', '-'])} "
                    f"{self.tensor(scope, depth + 1)})")
        if kind == "unary":
            function = self.pick(["torch.sin", "torch.relu", "torch.tanh", "torch.abs"])
            return f"{function}({self.tensor(scope, depth + 1)})"
        if kind == "where":
            condition = self.tensor(scope, depth + 1)
            return (f"torch.where({condition} > 0, {self.tensor(scope, depth + 1)}, "
                    f"{self.tensor(scope, depth + 1)})")
        if kind == "item":
            return self.container_item(scope) or self.pick(scope.of(TENSOR))
        if kind == "attribute":
            return self.pick(["obj.w", "obj.scaled"])
        if kind == "module":
            return f"mod({self.tensor(scope, depth + 1)})"
        if kind == "pair":
            pair = self.pick(scope.of(PAIR))
            return f"({pair}.a * {pair}.b)"
        return f"({self.tensor(scope, depth + 1)} * {self.tensor(scope, depth + 1)}.sum())"

    def container_item(self, scope: Scope) -> str | None:
        options = [f"{name}[{self.number(-length, length - 1)}]"
                   for name, length in scope.list_lengths.items() if length > 0]
        options += [f"{name}[{key!r}]" for name, keys in scope.dict_keys.items()
                    for key in sorted(keys)]
        return self.pick(options) if options else None

    def integer(self, scope: Scope) -> str:
        options = [*scope.of(INT), "len(xs)", f"{self.pick(scope.of(TENSOR))}.shape[0]",
                   "obj.k", "len(EVENTS)"]
        value = self.pick(options)
        return f"{value} {self.pick(['+', '*', '-'])} {self.number(1, 3)}"

    def condition(self, scope: Scope) -> tuple[str, bool]:
        """A condition, and whether it reads a tensor's values (a graph break)."""
        python = [f"{self.pick(scope.of(INT))} > 2", "flag", "len(xs) > 2", "s > 0.3",
                  "obj.k > 1", f"{self.pick(scope.of(TENSOR))}.shape[0] > 3",
                  f"{self.pick(scope.of(BOOL))}", "CONFIG['use_bias']", "OFFSET > 0"]
        tensor = [f"{self.pick(scope.of(TENSOR))}.sum() > 0",
                  f"({self.pick(scope.of(TENSOR))} > 0).any()"]
        kind = self.pick(["python", "python", "tensor"])
        return self.pick(python if kind == "python" else tensor), kind == "tensor"

    def bind(self, scope: Scope, kind: str) -> str:
        """A name to assign a value of `kind` to: a new one, or one of that kind."""
        existing = [name for name in scope.of(kind) if name not in ("xs", "d")]
        if existing and self.draw(st.booleans()):
            return self.pick(existing)
        name = self.fresh({TENSOR: "t", INT: "i", FLOAT: "v", BOOL: "b",
                           LIST: "ys", DICT: "e", PAIR: "p"}[kind])
        scope.names[name] = kind
        return name

    def failing_lookup(self, scope: Scope) -> str:
        """An expression that raises KeyError: a key no dict of the body ever has."""
        table = self.pick(sorted(scope.dict_keys))
        return self.pick([f"{table}['missing']", f"lookup({table}, 'missing')"])

    # -- simple statements --------------------------------------------------------------

    def rule_tensor(self, scope: Scope) -> list[str]:
        value = self.tensor(scope)
        return [f"{self.bind(scope, TENSOR)} = {value}"]

    def rule_integer(self, scope: Scope) -> list[str]:
        value = self.integer(scope)
        return [f"{self.bind(scope, INT)} = {value}"]

    def rule_boolean(self, scope: Scope) -> list[str]:
        value, _ = self.condition(scope)
        if "sum()" in value or "any()" in value:
            value = f"bool({value})"  # a data-dependent bool: a break in both compilers
        return [f"{self.bind(scope, BOOL)} = {value}"]

    def rule_tolist(self, scope: Scope) -> list[str]:
        return [f"{self.pick(scope.of(TENSOR))}.tolist()"]

    def rule_item(self, scope: Scope) -> list[str]:
        value = f"{self.pick(scope.of(TENSOR))}.sum().item()"
        return [f"{self.bind(scope, FLOAT)} = {value}"]

    def rule_read_item(self, scope: Scope) -> list[str]:
        """`t = xs[1]`: a local that comes from inside a container (its source)."""
        item = self.container_item(scope) or "obj.w"
        return [f"{self.bind(scope, TENSOR)} = {item}"]

    def rule_move_item(self, scope: Scope) -> list[str]:
        """An item of one container (or an attribute) stored into another."""
        item = self.pick([self.container_item(scope) or "obj.w", "obj.w"])
        lists = [name for name in scope.list_lengths if scope.list_lengths[name] > 0]
        targets = ["obj.w"] + [f"{name}[0]" for name in lists]
        targets += [f"{name}['c']" for name in scope.dict_keys  # a walked dict: no new key
                    if name not in scope.iterated or "c" in scope.dict_keys[name]]
        target = self.pick(targets)
        if target.endswith("['c']"):
            scope.dict_keys[target.split("[")[0]].add("c")
        return [f"{target} = {item}"]

    def rule_list_mutation(self, scope: Scope, name: str | None = None) -> list[str]:
        name = name or self.pick(sorted(scope.list_lengths))
        length = scope.list_lengths[name]
        operations = ["append", "insert", "setitem", "extend", "reverse"]
        if name in scope.iterated:  # a loop over it is running: its length stays
            operations = ["setitem", "reverse"] if length > 0 else ["reverse"]
        operation = self.pick(operations + (["pop"] if length > 1 and not self.loops else []))
        if operation == "pop":
            scope.list_lengths[name] = length - 1
            return [f"{name}.pop()"]
        if operation == "reverse":
            return [f"{name}.reverse()"]
        value = self.tensor(scope)  # every value before the length changes
        if operation == "setitem" and length > 0:
            return [f"{name}[{self.number(-length, length - 1)}] = {value}"]
        second = self.tensor(scope) if operation == "extend" else None
        scope.list_lengths[name] = length + (2 if operation == "extend" else 1)
        if operation == "extend":
            return [f"{name}.extend([{value}, {second}])"]
        if operation == "insert":
            return [f"{name}.insert({self.number(0, length)}, {value})"]
        return [f"{name}.append({value})"]

    def rule_new_list(self, scope: Scope) -> list[str]:
        items = [self.tensor(scope) for _ in range(self.number(1, 3))]
        name = self.fresh("ys")
        scope.names[name], scope.list_lengths[name] = LIST, len(items)
        return [f"{name} = [{', '.join(items)}]"]

    def rule_dict_mutation(self, scope: Scope, name: str | None = None) -> list[str]:
        name = name or self.pick(sorted(scope.dict_keys))
        key = self.pick(["a", "b", "c"])
        if name in scope.iterated:  # a loop over it is running: no key comes or goes
            if not scope.dict_keys[name]:
                return []
            key = self.pick(sorted(scope.dict_keys[name]))
        removable = key in scope.dict_keys[name] and len(scope.dict_keys[name]) > 1
        if removable and not self.loops and self.draw(st.booleans()):
            scope.dict_keys[name].discard(key)
            return [f"del {name}[{key!r}]"]
        value = self.tensor(scope)  # before the key is known: it cannot read itself
        scope.dict_keys[name].add(key)
        return [f"{name}[{key!r}] = {value}"]

    def rule_new_dict(self, scope: Scope) -> list[str]:
        value = self.tensor(scope)  # before the name is bound: it cannot read itself
        name = self.fresh("e")
        scope.names[name], scope.dict_keys[name] = DICT, {"a"}
        return [f"{name} = {{'a': {value}}}"]

    def rule_attribute(self, scope: Scope) -> list[str]:
        pairs = scope.of(PAIR)
        target = self.pick(["obj.w", "obj.k"] + [f"{pair}.{field}" for pair in pairs
                                                 for field in ("a", "b")])
        if target.endswith((".w", ".a")):
            return [f"{target} = {self.tensor(scope)}"]
        return [f"{target} = {target} + {self.number(1, 2)}"]

    def rule_in_place(self, scope: Scope) -> list[str]:
        """An alias updated in place, then asked whether it is still the tensor it was
        taken from (`u = x; u += 2; same = u is x`: True, as an in-place op returns its
        input; the input itself changes, and the calls compare it with eager's)."""
        source = self.pick(scope.of(TENSOR))
        alias = self.fresh("t")
        scope.names[alias] = TENSOR
        amount = self.pick(["2", "0.5"] + scope.of(INT))
        update = self.pick([f"{alias} += {amount}", f"{alias} = {alias}.mul_({amount})",
                            f"{alias}.add_({amount})"])
        same = self.bind(scope, BOOL)
        return [f"{alias} = {source}", update, f"{same} = {alias} is {source}"]

    def rule_pair(self, scope: Scope) -> list[str]:
        """`p = Pair(t, i)`: a dataclass instance made in the body."""
        value = f"Pair({self.tensor(scope)}, {self.integer(scope)})"
        return [f"{self.bind(scope, PAIR)} = {value}"]

    def rule_global(self, scope: Scope) -> list[str]:
        """A write to module state: the next call reads what this one left, or (written
        without being read) nothing guards it: the write must go to the dict of the time."""
        target = self.pick(["CONFIG['scale']", "OFFSET", "CONFIG['last']"])
        if target == "CONFIG['last']":
            return [f"CONFIG['last'] = {self.integer(scope)}"]
        self.writes_offset |= target == "OFFSET"
        return [f"{target} = {target} + {self.pick(['0.5', '0.25'])}"]

    def rule_event(self, scope: Scope) -> list[str]:
        """An item appended to the module's EVENTS list: a tag, an int or a tensor."""
        value = self.pick([repr(self.fresh("event")), self.integer(scope),
                           f"{self.tensor(scope)}.sum()"])
        return [f"EVENTS.append({value})"]

    def rule_generator(self, scope: Scope) -> list[str]:
        """A generator consumed whole: `sum(ramp(t, 2))`, `list(...)`, `sum(... for ...)`."""
        length, shortest = self.pick([("1", 1), ("2", 2), ("3", 3), ("len(xs)", 2)])
        generator = f"ramp({self.tensor(scope)}, {length})"
        consumer = self.pick(["sum", "list", "expression"])
        if consumer == "list":
            name = self.fresh("ys")
            scope.names[name], scope.list_lengths[name] = LIST, shortest
            return [f"{name} = list({generator})"]
        if consumer == "expression":
            variable = self.fresh("g")
            inner = scope.copy()
            inner.names[variable] = TENSOR
            generator = f"{self.tensor(inner)} for {variable} in {self.pick(['xs', generator])}"
        return [f"{self.bind(scope, TENSOR)} = sum({generator})"]

    def rule_escape(self, scope: Scope) -> list[str]:
        """`raise Escaped(...)` when a rare condition holds: the call's outcome."""
        tag = self.fresh("escape")
        message = self.pick([repr(tag), f"f'{tag}: {{{self.integer(scope)}}}'"])
        return [f"if {self.pick(RARE_CONDITIONS)}:", f"    raise Escaped({message})"]

    def rule_helper(self, scope: Scope) -> list[str]:
        """A module-level helper, inlined (or broken inside) when it is called."""
        name = self.fresh("helper")
        inner = Scope({"u": TENSOR, "w": TENSOR, "m": INT}, {}, {}, has_objects=False)
        body = [f"r = {self.tensor(inner)}"]
        extra = self.pick(["none", "tolist", "branch"])
        if extra == "tolist":
            body.insert(0, "u.tolist()")
        if extra == "branch":
            body += ["if r.sum() > 0:", "    r = r + 1"]
        self.helpers += ["", f"def {name}(u, w, m=2):", *indent(body), "    return r"]
        arguments = [self.tensor(scope), self.tensor(scope)]
        if self.draw(st.booleans()):
            arguments.append(f"m={self.pick(scope.of(INT))}")
        return [f"{self.bind(scope, TENSOR)} = {name}({', '.join(arguments)})"]

    def rule_lambda(self, scope: Scope) -> list[str]:
        value = self.pick(scope.of(TENSOR))
        return [f"{self.bind(scope, TENSOR)} = (lambda: {value} * 2)()"]

    # -- statements with a block ----------------------------------------------------------

    def rule_if(self, scope: Scope) -> list[str]:
        condition, _ = self.condition(scope)
        then, _ = self.inner_block(scope)
        lines = [f"if {condition}:", *indent(then)]
        if self.draw(st.booleans()):
            otherwise, _ = self.inner_block(scope)
            lines += ["else:", *indent(otherwise)]
        return lines

    def rule_for(self, scope: Scope) -> list[str]:
        tensor = self.pick(scope.of(TENSOR))
        walked = sorted(scope.list_lengths)  # a list walked itself: the body's item
        # a dict's values walked, forwards or backwards: its writes are seen by the loop
        walked_dicts = {}
        for name in sorted(scope.dict_keys):
            if scope.dict_keys[name]:
                walked_dicts[f"{name}.values()"] = walked_dicts[f"reversed({name}.values())"] = name
        iterable = self.pick([f"range({self.number(1, 3)})", "range(n)", tensor, "list(xs)",
                              f"ramp({tensor}, 2)", *walked, *walked_dicts])
        variable = self.fresh("k")
        inner = scope.copy()
        kinds = {"range": INT, "list(": TENSOR, "ramp(": TENSOR}
        inner.names[variable] = next((kind for start, kind in kinds.items()
                                      if iterable.startswith(start)), SCALAR)
        if iterable in walked or iterable in walked_dicts:
            inner.names[variable] = TENSOR
            inner.iterated |= {walked_dicts.get(iterable, iterable)}
        if iterable == "range(n)":
            iterable = "range(min(n, 3))"
        self.depth, self.loops = self.depth + 1, self.loops + 1
        try:
            # walking a list or a dict: the body writes one of its items, which later
            # steps read
            first = (self.rule_list_mutation(inner, iterable) if iterable in walked else
                     self.rule_dict_mutation(inner, walked_dicts[iterable])
                     if iterable in walked_dicts else [])
            body = first + self.block(inner)
        finally:
            self.depth, self.loops = self.depth - 1, self.loops - 1
        scope.forget_new(inner)
        return [f"for {variable} in {iterable}:", *indent(body)]

    def rule_while(self, scope: Scope) -> list[str]:
        counter = self.fresh("c")
        self.loops += 1
        try:
            body, _ = self.inner_block(scope)
        finally:
            self.loops -= 1
        return [f"{counter} = 0", f"while {counter} < {self.number(1, 3)}:", *indent(body),
                f"    {counter} += 1"]

    def rule_with(self, scope: Scope) -> list[str]:
        """A context manager around a block: grad modes, `Recorder`, `suppress` (the
        block then ends in a failing lookup, which it swallows)."""
        manager = self.pick(["torch.no_grad()", "torch.enable_grad()",
                             f"Recorder({self.fresh('r')!r})", "contextlib.suppress(KeyError)"])
        body, _ = self.inner_block(scope)
        if manager.startswith("contextlib") and self.draw(st.booleans()):
            body.append(self.failing_lookup(scope))
        return [f"with {manager}:", *indent(body)]

    def rule_try(self, scope: Scope) -> list[str]:
        """`try` around a raise or a failing lookup, with `except`, maybe `else` and
        `finally`; each part appends to EVENTS."""
        tag = self.fresh("")
        caught = self.pick(["ValueError", "KeyError"])
        if caught == "ValueError":
            raising = [f"raise ValueError('bad {tag}')"]
            clause = self.pick(["ValueError", "(KeyError, ValueError)"])
        else:
            raising = [self.failing_lookup(scope)]
            clause = self.pick(["KeyError", "LookupError", "(KeyError, ValueError)"])
        if self.draw(st.booleans()):  # only on some paths
            condition, _ = self.condition(scope)
            raising = [f"if {condition}:", *indent(raising)]
        body, _ = self.inner_block(scope)
        lines = ["try:", f"    EVENTS.append('try{tag}')", *indent(body + raising)]
        name = f"error{tag}"
        handler, _ = self.inner_block(scope)
        noted = self.pick([repr(f"except{tag}"), f"str({name})", f"type({name}).__name__"])
        lines += [f"except {clause} as {name}:", f"    EVENTS.append({noted})", *indent(handler)]
        if self.draw(st.booleans()):
            lines += ["else:", f"    EVENTS.append('else{tag}')"]
        if self.draw(st.booleans()):
            cleanup, _ = self.inner_block(scope)
            lines += ["finally:", f"    EVENTS.append('finally{tag}')", *indent(cleanup)]
        return lines

    def rule_closure(self, scope: Scope) -> list[str]:
        """An inner function that reads (or rebinds, with `nonlocal`) a local: a cell."""
        name = self.fresh("inner")
        captured = self.pick([each for each in scope.of(TENSOR) if each not in ("x", "y")]
                             or scope.of(TENSOR))
        if captured in PARAMETERS or not self.draw(st.booleans()):
            body = [f"return {captured} * 2"]
        else:
            body = [f"nonlocal {captured}", f"{captured} = {captured} + 1", f"return {captured}"]
        return [f"def {name}():", *indent(body), f"{self.bind(scope, TENSOR)} = {name}()"]


# Weights are repetitions: values moving through containers before a break are where
# the generated code is most easily wrong (chapter 7, "Read everything, then write").
SIMPLE_RULES = ["tensor", "tensor", "integer", "tolist", "item", "read_item", "move_item",
                "list_mutation", "new_list", "dict_mutation", "new_dict", "attribute", "helper",
                "lambda", "boolean", "tolist", "read_item", "move_item", "list_mutation",
                "pair", "global", "event", "generator", "escape", "in_place"]
BREAK_RULES = {"tolist", "item", "helper", "boolean"}  # may break the graph
BLOCK_RULES = ["if", "if", "for", "while", "with", "with", "closure", "try", "try"]


def indent(lines: list[str]) -> list[str]:
    return [textwrap.indent(line, "    ") for line in lines]


@st.composite
def programs(draw: Callable[[st.SearchStrategy], Any]) -> Program:
    """The Hypothesis strategy of generated programs."""
    return ProgramWriter(draw).program()
