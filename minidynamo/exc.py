"""Graph breaks and internal errors: the one way tracing says "I cannot" (chapters 2-6).

When the symbolic VM meets something it cannot model (an opcode without a
handler, a value it cannot wrap, a branch on a tensor's data), it does not guess.
It raises `Unsupported`, a *graph break*, through the single helper
`graph_break(kind, reason)`. Every break belongs to a kind in `CATALOGUE`: a
stable id (`GB0003`), a title, an explanation of why minidynamo cannot continue
and a hint for the user. As the exception travels out through the translators,
each one adds the user's file and line to `user_stack`, so the message ends by
pointing at the user's code, innermost frame first.

`InternalError` is different: it means minidynamo itself is wrong. The frame
converter falls back to eager on it (with a warning) unless `config.strict`.

`BackendCompilerFailed` is neither: the graph was captured, but the backend
(the `(gm, example_inputs)` callable) raised while compiling it. As in
torch.compile it reaches the user, naming the backend and the frame, with the
backend's own exception chained; `config.suppress_errors` runs the frame
eagerly instead.

Compare with TorchDynamo: `torch/_dynamo/exc.py` (`Unsupported`, `unimplemented`,
`BackendCompilerFailed`) and `graph_break_registry.json`, whose `gb_type` ids play the role of ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn


@dataclass(frozen=True)
class BreakKind:
    """One kind of graph break: the catalogue entry a break points to."""

    id: str  # stable, e.g. "GB0003"
    title: str  # a few words, e.g. "data-dependent branch"
    explanation: str  # why tracing cannot continue
    hint: str  # what the user can do about it


CATALOGUE: dict[str, BreakKind] = {
    kind.title: kind
    for kind in (
        BreakKind(
            "GB0001", "missing bytecode handler",
            "The symbolic VM has no handler for this opcode, so it cannot know "
            "what the instruction does to the stack.",
            "Rewrite the code to avoid this construct, or add a handler.",
        ),
        BreakKind(
            "GB0002", "unsupported call",
            "Calling this object cannot be traced: it is neither a tensor operation "
            "that becomes a graph node nor Python code that can be inlined.",
            "Move the call out of the compiled function, or make it a pure tensor op.",
        ),
        BreakKind(
            "GB0003", "data-dependent branch",
            "The branch depends on the value inside a tensor, which is not known "
            "while tracing (tensors are FakeTensors: shapes only, no data).",
            "Use torch.where / torch.cond, or compute the condition outside.",
        ),
        BreakKind(
            "GB0004", "unsupported operator",
            "This operator has no symbolic rule for these operand types.",
            "Convert the operands to tensors or Python constants first.",
        ),
        BreakKind(
            "GB0005", "unsupported attribute",
            "Reading this attribute would run code minidynamo cannot trace "
            "(a custom __getattr__, a descriptor) or the attribute does not exist.",
            "Read the attribute outside the compiled function and pass it in.",
        ),
        BreakKind(
            "GB0006", "data-dependent value",
            "The operation needs a tensor's data as a Python value (item(), "
            "tolist(), bool(tensor)), which a FakeTensor does not have.",
            "Keep the value as a tensor, or move the conversion out.",
        ),
        BreakKind(
            "GB0007", "unsupported value",
            "minidynamo has no VariableTracker for this kind of Python value.",
            "Pass tensors, Python constants, containers of them, modules or functions.",
        ),
        BreakKind(
            "GB0008", "inlining too deep",
            "The chain of inlined calls exceeded config.inline_depth_limit "
            "(unbounded recursion cannot be unrolled).",
            "Make the recursion depth a small constant, or raise the limit.",
        ),
        BreakKind(
            "GB0009", "cannot reconstruct",
            "The value escapes the compiled frame, but minidynamo cannot write "
            "bytecode that rebuilds it after the graph runs.",
            "Return tensors, constants or containers of them.",
        ),
        BreakKind(
            "GB0010", "unsupported Python feature",
            "This Python feature is not modelled yet (it comes in a later chapter).",
            "Move it out of the compiled function.",
        ),
        BreakKind(
            "GB0011", "undefined variable",
            "The code reads a name that has no value at this point.",
            "This is a bug in the user code: it would raise in Python too.",
        ),
        BreakKind(
            "GB0012", "unsupported mutation",
            "This mutation cannot be recorded and replayed after the graph.",
            "Mutate the object outside the compiled function.",
        ),
        BreakKind(
            "GB0013", "exception in traced code",
            "The traced code raised an exception; catching exceptions symbolically "
            "is chapter 8's subject.",
            "Check the user code: the same call raises in eager Python.",
        ),
        BreakKind(
            "GB0014", "global side effect",
            "The call changes global state (random seed, grad mode, default dtype) "
            "while tracing, which must not happen.",
            "Call it outside the compiled function.",
        ),
        BreakKind(
            "GB0015", "missing attribute",
            "The attribute does not exist, so Python would raise AttributeError; "
            "catching exceptions while tracing is chapter 8's subject.",
            "Check the attribute name, or use getattr(obj, name, default).",
        ),
        BreakKind(
            "GB0016", "graph break in loop",
            "A graph break inside a for/while loop: a resume function would have to "
            "run once per iteration, so the whole frame runs eagerly instead.",
            "Move the breaking code out of the loop, or into a function called in it.",
        ),
        BreakKind(
            "GB0017", "break at a statement boundary",
            "An instruction that cannot be split off (not a call, not a jump on a tensor), "
            "or a break inside a try block, failed to trace. The graph captured up to the "
            "last statement boundary (an instruction before which the value stack was "
            "empty) is compiled, and the frame's own bytecode runs natively from there to "
            "its end: no resume function (TorchDynamo's step_unsupported).",
            "Read the reason: it names the instruction that failed and why.",
        ),
    )
}


@dataclass(frozen=True)
class UserFrame:
    """Where the user's code was when a break happened: one line of the user stack."""

    filename: str
    lineno: int | None
    function: str
    line: str = ""  # the source line, when it can be read

    def __str__(self) -> str:
        text = f"{self.filename}:{self.lineno} in {self.function}"
        return f"{text}: {self.line}" if self.line else text


@dataclass(eq=False)
class Unsupported(Exception):
    """A graph break: tracing stopped at something it cannot model."""

    kind: BreakKind
    reason: str  # one line naming the operation and why it fails
    hint: str
    user_stack: list[UserFrame] = field(default_factory=list)  # innermost first
    compiled_graph: bool = False  # a partial graph was compiled at this break (chapter 7)

    def __post_init__(self) -> None:
        super().__init__(self.reason)

    @property
    def filename(self) -> str | None:
        return self.user_stack[0].filename if self.user_stack else None

    @property
    def lineno(self) -> int | None:
        return self.user_stack[0].lineno if self.user_stack else None

    def add_user_frame(self, frame: UserFrame) -> None:
        """Called by each translator the exception passes through, innermost first."""
        self.user_stack.append(frame)

    def __str__(self) -> str:
        lines = [
            f"Graph break {self.kind.id} ({self.kind.title}): {self.reason}",
            f"  Explanation: {self.kind.explanation}",
            f"  Hint: {self.hint}",
        ]
        lines += [f"  User code: {frame}" for frame in self.user_stack]
        return "\n".join(lines)


class InternalError(Exception):
    """minidynamo itself is wrong (not the user's code): a bug to report."""


class BackendCompilerFailed(RuntimeError):
    """The backend raised while compiling a captured graph (a RuntimeError, as torch's).

    The backend's exception is chained (`__cause__`) and kept as `inner_exception`."""

    def __init__(self, backend: Any, frame_name: str, inner_exception: Exception) -> None:
        self.backend_name = getattr(backend, "__name__", repr(backend))
        self.frame_name = frame_name
        self.inner_exception = inner_exception
        super().__init__(
            f"backend={self.backend_name!r} raised:\n"  # torch's first line, word for word
            f"{type(inner_exception).__name__}: {inner_exception}\n"
            f"while compiling the graph captured from {frame_name}"
        )


def graph_break(kind: str, reason: str, *, hint: str | None = None) -> NoReturn:
    """Stop tracing with a graph break of catalogue kind `kind` (e.g. "unsupported call").

    `reason` is one line naming the operation and why it cannot be traced;
    `hint` overrides the catalogue's generic hint when a better one is known.
    """
    if kind not in CATALOGUE:
        raise InternalError(f"graph break of unknown kind {kind!r}: {reason}")
    entry = CATALOGUE[kind]
    raise Unsupported(entry, reason, hint or entry.hint)


def catalogue_markdown() -> str:
    """The graph-break catalogue as a Markdown page (chapter 6): one section per kind.

    The docs page is generated from `CATALOGUE`, so it cannot drift from the code."""
    lines = ["# Graph-break catalogue", "",
             "Every graph break minidynamo reports names one of these kinds.", "",
             "| id | kind | hint |", "|---|---|---|"]
    kinds = sorted(CATALOGUE.values(), key=lambda kind: kind.id)
    lines += [f"| {kind.id} | {kind.title} | {kind.hint} |" for kind in kinds]
    for kind in kinds:
        lines += ["", f"## {kind.id}: {kind.title}", "", kind.explanation, "",
                  f"**Hint:** {kind.hint}"]
    return "\n".join(lines) + "\n"
