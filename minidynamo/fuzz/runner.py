"""Running a generated program three ways over four calls, and judging it (chapter 7).

`check(program)` calls the program's `f` four times, each time on new arguments
(`arguments`): the first two calls differ in values only, the third changes one thing
(`Program.change`: the tensors' size or dtype, the int `n`, the float `s`, the bool
`flag`, or the length of the list `xs`), the fourth is like the first two again.
Before a call, the program's `mutations` for it change what `f` reads besides its
arguments (`program.MUTATIONS`: `OFFSET`, an entry of `CONFIG`, `obj.k`,
`mod.shift`, a class's property or method). Every run uses the program's one module
(so its classes are the same objects in every run), put back into the state the
PRELUDE left it in (`ModuleState`), and compiles afresh; the same mutations come
before the same calls.

Eager PyTorch gives the values, the exceptions (type and message), the inputs after
each call and the module state after it (`program.STATE`); minidynamo (strict mode,
so an internal error raises) must give the same on every call: a cache entry reused
after a change it should have been guarded against is a wrong value here.
torch.compile runs the same calls. Its *compile pattern* (the graphs compiled in
each call, e.g. (1, 0, 1, 0)) and its first-call graph count are compared with
minidynamo's (a difference is reported, not a failure: it is not a wrong answer);
a torch.compile that disagrees with eager marks the program as no fair test of graphs.

The verdicts, worst first: `wrong` (a value, an exception, an input or the module
state after a call differs from eager's), `internal` (minidynamo itself failed),
`invalid` (eager raised something other than the `Escaped` the program raises on
purpose: a bug of the grammar, never of the compiler), `ok`.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from typing import Any, Callable

import torch

from minidynamo.fuzz.program import CALLS, PRELUDE, STATE, Program
from minidynamo.testing import (Call, Outcome, RecordingBackend, RunResult, compare_with_eager,
                                describe_difference, strict_mode)

WRONG, INTERNAL, INVALID, OK = "wrong", "internal", "invalid", "ok"
CHANGED_CALL = 2  # the call with the program's argument change


@dataclasses.dataclass
class Verdict:
    """What one program did under minidynamo, against eager and torch.compile."""

    program: Program
    kind: str                      # WRONG, INTERNAL, INVALID or OK
    details: list[str]             # what differed
    graphs: int = 0                # minidynamo's graphs on the first call
    torch_graphs: int | None = None  # torch.compile's (None: it failed or disagreed with eager)
    frames_run_eagerly: int = 0    # over the four calls
    pattern: tuple[int, ...] = ()  # minidynamo's graphs compiled in each call
    torch_pattern: tuple[int, ...] | None = None  # torch.compile's (None as torch_graphs)

    @property
    def failed(self) -> bool:
        return self.kind in (WRONG, INTERNAL)

    @property
    def same_pattern(self) -> bool:
        """minidynamo compiled in the same calls as torch.compile (the counts may differ)."""
        compiled = [bool(count) for count in self.pattern]
        return compiled == [bool(count) for count in self.torch_pattern or ()]


@dataclasses.dataclass
class ModuleState:
    """What a run may change in the program's module, as the PRELUDE left it: the values
    of `STATE`, and the attributes of the module's classes (a mutation may replace one)."""

    values: dict[str, Any]
    classes: dict[type, dict[str, Any]]

    @classmethod
    def of(cls, namespace: dict[str, Any]) -> ModuleState:
        classes = [each for each in namespace.values()
                   if isinstance(each, type) and each.__module__ == namespace["__name__"]]
        return cls(copy.deepcopy({name: namespace[name] for name in STATE}),
                   {each: dict(vars(each)) for each in classes})

    def restore(self, namespace: dict[str, Any]) -> None:
        namespace.update(copy.deepcopy(self.values))
        for each, attributes in self.classes.items():
            for name, value in attributes.items():
                if vars(each).get(name) is not value:
                    setattr(each, name, value)


@dataclasses.dataclass
class Run:
    """One way of running a program over its calls: what `testing` compares (outcomes,
    inputs after, graphs), the module state after each call, the graphs of each call."""

    result: RunResult
    state_after: list[dict[str, Any]]
    pattern: tuple[int, ...]


def arguments(namespace: dict[str, Any], change: str | None, seed: int) -> Call:
    """The arguments of one call; `change` None for the calls without the change."""
    generator = torch.Generator().manual_seed(seed)
    size = 4 if change == "shape" else 3
    dtype = torch.float64 if change == "dtype" else torch.float32

    def tensor() -> torch.Tensor:
        return torch.randn(size, generator=generator, dtype=dtype)

    x, y = tensor(), tensor()
    xs = [tensor() for _ in range(3 if change == "length" else 2)]
    d = {"a": tensor(), "b": tensor()}
    obj = namespace["Obj"](tensor(), 2 if change == "int" else 1)
    mod = namespace["Scale"]()
    n = 3 if change == "int" else 2
    s = 0.25 if change == "float" else 0.5
    return Call((x, y, n, s, change != "bool", xs, d, obj, mod))


def mutate(namespace: dict[str, Any], statement: str, call: Call) -> None:
    """Run one of `MUTATIONS` in the program's module, `obj` and `mod` being the call's."""
    namespace.update(obj=call.args[7], mod=call.args[8])
    try:
        exec(statement, namespace)  # noqa: S102 - one of program.MUTATIONS
    finally:
        del namespace["obj"], namespace["mod"]


def run(program: Program, namespace: dict[str, Any], initial: ModuleState, name: str,
        compile_it: Callable[[Callable, RecordingBackend], Callable] | None = None) -> Run:
    """Call the program's `f` (compiled by `compile_it`, or eagerly) on its four calls,
    from the module state `initial`, with its mutations before their calls."""
    initial.restore(namespace)
    fn = namespace[program.entry]
    recorder = RecordingBackend()
    compiled = fn if compile_it is None else compile_it(fn, recorder)
    outcomes, inputs_after, state_after, pattern = [], [], [], []
    for number in range(CALLS):
        call = arguments(namespace, program.change if number == CHANGED_CALL else None, number + 1)
        for before, statement in program.mutations:
            if before == number:
                mutate(namespace, statement, call)
        graphs = len(recorder.graphs)
        torch.manual_seed(0)  # random ops draw the same numbers in every run
        try:
            outcomes.append(Outcome(value=compiled(*call.args)))
        except Exception as error:  # noqa: BLE001 - an exception is an outcome too
            outcomes.append(Outcome(error=error))
        pattern.append(len(recorder.graphs) - graphs)
        inputs_after.append((fn, call.args, call.kwargs))
        state_after.append({each: copy.copy(namespace[each]) for each in STATE})
    result = RunResult(name, outcomes, inputs_after, recorder.graphs, recorder.example_inputs)
    return Run(result, state_after, tuple(pattern))


def with_minidynamo(fn: Callable, backend: RecordingBackend) -> Callable:
    from minidynamo import api

    api.reset()
    compiled = api.compile(fn, backend=backend)

    def strictly(*args: Any) -> Any:  # an internal error raises instead of running eagerly
        with strict_mode():
            return compiled(*args)

    return strictly


def with_torch(fn: Callable, backend: RecordingBackend) -> Callable:
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend)


def program_name(program: Program) -> str:
    """A short stable name: the hash of the source, the change and the mutations."""
    text = f"{program.change}\n{program.mutations or ''}\n{program.source}"
    return f"fuzz_{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def check(program: Program, *, reference: bool = True) -> Verdict:
    """Run `program` eagerly, under minidynamo and (with `reference`) under
    torch.compile; the verdict. Shrinking skips torch.compile: it judges values only."""
    import minidynamo.convert_frame as convert_frame

    namespace = program.namespace(f"<{program_name(program)}>")
    initial = ModuleState.of(namespace)
    eager = run(program, namespace, initial, "eager")
    errors = [outcome.error for outcome in eager.result.outcomes if outcome.error is not None]
    unexpected = [error for error in errors if not isinstance(error, namespace["Escaped"])]
    if unexpected:
        return Verdict(program, INVALID, [f"eager raised {unexpected[0]!r}"])
    mine = run(program, namespace, initial, "minidynamo", with_minidynamo)
    verdict = judge(program, eager, mine)
    verdict.frames_run_eagerly = convert_frame.counters["frames_run_eagerly"]
    verdict.graphs, verdict.pattern = mine.pattern[0], mine.pattern
    if reference:
        theirs = run(program, namespace, initial, "torch.compile", with_torch)
        if not differences(eager, theirs):
            verdict.torch_graphs, verdict.torch_pattern = theirs.pattern[0], theirs.pattern
    return verdict


def differences(eager: Run, other: Run) -> list[str]:
    """Where `other` differs from eager: values, exceptions (type and message), the
    inputs and the module state after each call."""
    found = [str(each) for each in compare_with_eager(eager.result, other.result)]
    for number, (expected, actual) in enumerate(zip(eager.result.outcomes, other.result.outcomes)):
        same_type = expected.error is not None and type(expected.error) is type(actual.error)
        if same_type and str(expected.error) != str(actual.error):
            found.append(f"[output] call {number}: {other.result.name} raised "
                         f"{actual.error!r}, eager {expected.error!r}")
    for number, (expected, actual) in enumerate(zip(eager.state_after, other.state_after)):
        difference = describe_difference(expected, actual, "module")
        if difference is not None:
            found.append(f"[module state] call {number}: {other.result.name}: {difference}")
    return found


def judge(program: Program, eager: Run, mine: Run) -> Verdict:
    """Compare minidynamo's run with eager's: wrong, internal or ok."""
    from minidynamo.exc import InternalError

    details = differences(eager, mine)
    if any(isinstance(outcome.error, InternalError) for outcome in mine.result.outcomes):
        return Verdict(program, INTERNAL, details)
    return Verdict(program, WRONG if details else OK, details)


REGRESSION_TEST_IMPORTS = ("from minidynamo.fuzz import Program, check\n"
                           "from minidynamo.fuzz.program import PRELUDE\n")  # what it needs


def regression_test(verdict: Verdict) -> str:
    """A ready-to-paste pytest function that fails while the bug is there (it needs
    `REGRESSION_TEST_IMPORTS`, as `tests/fuzz/test_regressions.py` has them)."""
    program = verdict.program
    prelude, body = "", program.source
    if body.startswith(PRELUDE):  # written as tests/fuzz/test_regressions.py writes them
        prelude, body = "PRELUDE + ", body[len(PRELUDE):]
    body = body.replace("\\", "\\\\").replace("'''", "\\'\\'\\'")
    detail = "\n".join(f"# {line}" for line in "\n".join(verdict.details[:3]).splitlines())
    mutations = f", mutations={program.mutations!r}" if program.mutations else ""
    return (f"{detail}\n"
            f"def test_{program_name(program)}():\n"
            f"    program = Program({prelude}'''\\\n{body}''', change={program.change!r}{mutations})\n"
            f"    verdict = check(program)\n"
            f"    assert not verdict.failed, verdict.details\n")
