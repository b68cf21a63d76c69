"""Running a generated program three ways and judging the result (chapter 7).

`check(program)` calls the program's `f` three times, each time on fresh copies of
its arguments: twice with new values of the same shapes, then once with one thing
changed (`Program.change`: the tensors' size or dtype, the int `n`, the float `s`,
the bool `flag`, or the length of the list `xs`). Eager PyTorch gives the values
and the state the inputs are left in; minidynamo (strict mode, so an internal error
raises) must give the same. torch.compile runs the first call too: its graph count
is the one minidynamo's is compared with (a difference is reported, not a failure:
it is not a wrong answer), and a torch.compile that disagrees with eager marks the
program as one that is no fair test of graphs.

The verdicts, worst first: `wrong` (a value, an exception or an input after the call
differs from eager's), `internal` (minidynamo itself failed), `invalid` (eager raised:
a bug of the grammar, never of the compiler), `ok`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import torch

from minidynamo.fuzz.grammar import Program
from minidynamo.testing import Call, compare_with_eager, run_eager, run_minidynamo, run_torch

WRONG, INTERNAL, INVALID, OK = "wrong", "internal", "invalid", "ok"


@dataclasses.dataclass
class Verdict:
    """What one program did under minidynamo, against eager and torch.compile."""

    program: Program
    kind: str                      # WRONG, INTERNAL, INVALID or OK
    details: list[str]             # what differed
    graphs: int = 0                # minidynamo's graphs on the first call
    torch_graphs: int | None = None  # torch.compile's (None: it failed or disagreed with eager)
    frames_run_eagerly: int = 0    # over the three calls

    @property
    def failed(self) -> bool:
        return self.kind in (WRONG, INTERNAL)


def arguments(namespace: dict[str, Any], change: str | None, seed: int) -> Call:
    """The arguments of one call; `change` None for the first two calls' shapes."""
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


def program_name(program: Program) -> str:
    """A short stable name: the hash of the source and the change."""
    digest = hashlib.sha1(f"{program.change}\n{program.source}".encode()).hexdigest()
    return f"fuzz_{digest[:10]}"


def check(program: Program, *, reference: bool = True) -> Verdict:
    """Run `program` eagerly, under minidynamo and (with `reference`) under
    torch.compile; the verdict. Shrinking skips torch.compile: it judges values only."""
    name = program_name(program)
    fn = program.namespace(f"<{name}>")[program.entry]
    namespace = fn.__globals__
    calls = [arguments(namespace, None, 1), arguments(namespace, None, 2),
             arguments(namespace, program.change, 3)]
    eager = [run_eager(fn, calls[:1]), run_eager(fn, calls[1:])]
    errors = [outcome.error for run in eager for outcome in run.outcomes if outcome.error]
    if errors:
        return Verdict(program, INVALID, [f"eager raised {errors[0]!r}"])
    import minidynamo.convert_frame as convert_frame

    mine, run_eagerly = [], 0
    for part, eager_part in zip((calls[:1], calls[1:]), eager):
        mine.append(run_minidynamo(fn, part, strict=True))
        run_eagerly += convert_frame.counters["frames_run_eagerly"]
    verdict = judge(program, eager, mine)
    verdict.frames_run_eagerly = run_eagerly
    verdict.graphs = mine[0].graph_count
    if reference:
        torch_run = run_torch(fn, calls[:1])
        if not compare_with_eager(eager[0], torch_run):
            verdict.torch_graphs = torch_run.graph_count
    return verdict


def judge(program: Program, eager: list, mine: list) -> Verdict:
    """Compare minidynamo's runs with eager's: wrong, internal or ok."""
    from minidynamo.exc import InternalError

    details: list[str] = []
    internal = False
    for eager_run, run in zip(eager, mine):
        if run.error is not None:
            internal = True
            details.append(f"compiling failed: {run.error!r}")
            continue
        internal |= any(isinstance(each.error, InternalError) for each in run.outcomes)
        details += [str(difference) for difference in compare_with_eager(eager_run, run)]
    if internal:
        return Verdict(program, INTERNAL, details)
    return Verdict(program, WRONG if details else OK, details)


def regression_test(verdict: Verdict) -> str:
    """A ready-to-paste pytest function that fails while the bug is there."""
    source = verdict.program.source.replace("\\", "\\\\").replace("'''", "\\'\\'\\'")
    detail = "\n".join(f"# {line}" for line in "\n".join(verdict.details[:3]).splitlines())
    return (f"{detail}\n"
            f"def test_{program_name(verdict.program)}():\n"
            f"    program = Program('''\\\n{source}''', change={verdict.program.change!r})\n"
            f"    verdict = check(program)\n"
            f"    assert not verdict.failed, verdict.details\n")
