"""Graph breaks and internal errors: the one way tracing says "I cannot" (chapters 2-6).

When the symbolic VM meets something it cannot model (an opcode without a handler, a
value it cannot wrap, a branch on a tensor's data), it does not guess. It raises
`Unsupported`, a *graph break*, through the single helper `graph_break(kind,
reason)`. Every break belongs to one kind of the catalogue, a constant such as
`DATA_DEPENDENT_BRANCH` listed in `CATALOGUE`: a stable id of minidynamo's own
(`MD0003`), a title, an explanation of why minidynamo cannot continue, a hint for
the user and, where torch has one, the entry of torch's registry for the same break
(`GB0170`, "Data-dependent branching"). As the exception travels out through the
translators, each one adds the user's file and line to `user_stack`, so the message
ends by pointing at the user's code, innermost frame first.

`ObservedException` is not a break at all: the traced code raised a Python
exception (a missing key, `raise ValueError(...)`), which the translator raises
*symbolically* and routes through the frame's exception table, as CPython would
(chapter 8). Only an exception that no frame catches becomes a break (MD0013), so
that the frame runs eagerly and the user sees the real exception.

`InternalError` is different: it means minidynamo itself is wrong. The frame
converter falls back to eager on it (with a warning) unless `config.strict`.

`BackendCompilerFailed` is neither: the graph was captured, but the backend
(the `(gm, example_inputs)` callable) raised while compiling it. As in
torch.compile it reaches the user, naming the backend and the frame, with the
backend's own exception chained; `config.suppress_errors` runs the frame
eagerly instead.

Compare with TorchDynamo: `torch/_dynamo/exc.py` (`Unsupported`, `unimplemented`,
`BackendCompilerFailed`) and `graph_break_registry.json`, which gives each `gb_type` an
id `GBnnnn` and a page on torch's graph-break site. minidynamo's ids start with `MD`,
so that an id is never mistaken for torch's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn


# torch's graph-break site: one page per registry id, GB0170 -> .../gb/gb0170.html
# (the pattern of torch._dynamo.exc.get_gbid_documentation_link).
TORCH_GRAPH_BREAK_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"


def torch_graph_break_url(torch_id: str) -> str:
    """The page of torch's graph-break site for a registry id such as "GB0170"."""
    return f"{TORCH_GRAPH_BREAK_SITE}gb{torch_id.removeprefix('GB')}.html"


@dataclass(frozen=True)
class BreakKind:
    """One kind of graph break: the catalogue entry a break points to."""

    id: str  # minidynamo's stable id, e.g. "MD0003"
    title: str  # a few words, e.g. "data-dependent branch"
    explanation: str  # why tracing cannot continue
    hint: str  # what the user can do about it
    torch_id: str | None = None  # torch's registry id for the same break, e.g. "GB0170"
    torch_gb_type: str | None = None  # its gb_type there, e.g. "Data-dependent branching"
    torch_note: str = ""  # how torch differs, or why it has no such entry

    @property
    def torch_url(self) -> str | None:
        """The page of torch's graph-break site for the same break, if torch has one."""
        return torch_graph_break_url(self.torch_id) if self.torch_id else None


# The kinds, one constant each: a break site names its kind by constant,
# `graph_break(DATA_DEPENDENT_BRANCH, "...")`, so a typo is a NameError at import
# time, not a kind that exists nowhere.

MISSING_BYTECODE_HANDLER = BreakKind(
    "MD0001", "missing bytecode handler",
    "The symbolic VM has no handler for this opcode, so it cannot know "
    "what the instruction does to the stack.",
    "Rewrite the code to avoid this construct, or add a handler.",
    torch_id="GB0082", torch_gb_type="Missing bytecode handler",
)

UNSUPPORTED_CALL = BreakKind(
    "MD0002", "unsupported call",
    "Calling this object cannot be traced: it is neither a tensor operation "
    "that becomes a graph node nor Python code that can be inlined.",
    "Move the call out of the compiled function, or make it a pure tensor op.",
    torch_id="GB0147", torch_gb_type="Unsupported function call",
)

DATA_DEPENDENT_BRANCH = BreakKind(
    "MD0003", "data-dependent branch",
    "The branch depends on the value inside a tensor, which is not known "
    "while tracing (tensors are FakeTensors: shapes only, no data).",
    "Use torch.where / torch.cond, or compute the condition outside.",
    torch_id="GB0170", torch_gb_type="Data-dependent branching",
)

UNSUPPORTED_OPERATOR = BreakKind(
    "MD0004", "unsupported operator",
    "This operator has no symbolic rule for these operand types.",
    "Convert the operands to tensors or Python constants first.",
    torch_id="GB0059", torch_gb_type="Failed to trace builtin operator",
)

UNSUPPORTED_ATTRIBUTE = BreakKind(
    "MD0005", "unsupported attribute",
    "Reading this attribute would run code minidynamo cannot trace "
    "(a custom __getattr__, a descriptor) or the attribute does not exist.",
    "Read the attribute outside the compiled function and pass it in.",
    torch_note="torch traces a custom __getattr__ and most descriptors as Python code",
)

DATA_DEPENDENT_VALUE = BreakKind(
    "MD0006", "data-dependent value",
    "The operation needs a tensor's data as a Python value (item(), "
    "tolist(), bool(tensor)), which a FakeTensor does not have.",
    "Keep the value as a tensor, or move the conversion out.",
    torch_id="GB0124",
    torch_gb_type="Unsupported Tensor.item() call with capture_scalar_outputs=False",
    torch_note="torch can capture item() as a symbolic scalar instead "
    "(config.capture_scalar_outputs)",
)

UNSUPPORTED_VALUE = BreakKind(
    "MD0007", "unsupported value",
    "minidynamo has no VariableTracker for this kind of Python value.",
    "Pass tensors, Python constants, containers of them, modules or functions.",
    torch_id="GB0086", torch_gb_type="Not a Python constant",
    torch_note="torch wraps any other object as a user-defined object; it breaks where "
    "a constant is needed",
)

INLINING_TOO_DEEP = BreakKind(
    "MD0008", "inlining too deep",
    "The chain of inlined calls exceeded config.inline_depth_limit "
    "(unbounded recursion cannot be unrolled).",
    "Make the recursion depth a small constant, or raise the limit.",
    torch_note="torch sets no such limit: it inlines recursion as deep as the calls go",
)

CANNOT_RECONSTRUCT = BreakKind(
    "MD0009", "cannot reconstruct",
    "The value escapes the compiled frame, but minidynamo cannot write "
    "bytecode that rebuilds it after the graph runs.",
    "Return tensors, constants or containers of them.",
    torch_id="GB0092", torch_gb_type="Reconstruction failure",
)

UNSUPPORTED_PYTHON_FEATURE = BreakKind(
    "MD0010", "unsupported Python feature",
    "This Python feature is not modelled yet (it comes in a later chapter).",
    "Move it out of the compiled function.",
    torch_note="no single counterpart: each feature has its own torch entry "
    "(a generator frame is torch's GB0003, 'Attempt to trace generator')",
)

UNDEFINED_VARIABLE = BreakKind(
    "MD0011", "undefined variable",
    "The code reads a name that has no value at this point.",
    "This is a bug in the user code: it would raise in Python too.",
    torch_id="GB0011", torch_gb_type="Attempted to read undefined local variable",
)

UNSUPPORTED_MUTATION = BreakKind(
    "MD0012", "unsupported mutation",
    "This mutation cannot be recorded and replayed after the graph.",
    "Mutate the object outside the compiled function.",
    torch_note="torch records mutations of most objects and replays them",
)

EXCEPTION_IN_TRACED_CODE = BreakKind(
    "MD0013", "exception in traced code",
    "The traced code raises an exception that no frame of the compiled function "
    "catches (or one minidynamo does not raise symbolically: a call with the wrong "
    "arguments, a tensor operation that fails on its shapes), so the frame runs "
    "eagerly and raises it there, exactly as eager Python would (chapter 8).",
    "Check the user code: the same call raises in eager Python.",
    torch_id="GB0088", torch_gb_type="Observed exception",
)

GLOBAL_SIDE_EFFECT = BreakKind(
    "MD0014", "global side effect",
    "The call changes global state (random seed, grad mode, default dtype) "
    "while tracing, which must not happen.",
    "Call it outside the compiled function.",
    torch_note="torch traces calls such as torch.manual_seed and torch.set_grad_enabled "
    "without a break",
)

# MD0015 ("missing attribute") is retired: since chapter 8 a missing attribute
# raises AttributeError symbolically, caught by hasattr, getattr or `except`.
GRAPH_BREAK_IN_LOOP = BreakKind(
    "MD0016", "graph break in loop",
    "A graph break inside a for/while loop: a resume function would have to "
    "run once per iteration, so the whole frame runs eagerly instead.",
    "Move the breaking code out of the loop, or into a function called in it.",
    torch_id="GB7000", torch_gb_type="graph break in loop",
)

BREAK_AT_A_STATEMENT_BOUNDARY = BreakKind(
    "MD0017", "break at a statement boundary",
    "An instruction that cannot be split off (not a call, not a jump on a tensor), "
    "or a break inside a try block, failed to trace. The graph captured up to the "
    "last statement boundary (an instruction before which the value stack was "
    "empty) is compiled, and the frame's own bytecode runs natively from there to "
    "its end: no resume function (TorchDynamo's step_unsupported).",
    "Read the reason: it names the instruction that failed and why.",
    torch_id="GB4636", torch_gb_type="Call to `torch._dynamo.step_unsupported()`",
    torch_note="torch has no entry for the fallback itself (its compile reason is "
    "step_unsupported); torch._dynamo.step_unsupported() triggers it on purpose",
)

USER_GRAPH_BREAK = BreakKind(
    "MD0018", "user-inserted graph break",
    "The code calls torch._dynamo.graph_break() (or a function put out of graphs with "
    "torch._dynamo.disallow_in_graph): the graph ends there on purpose, and the call "
    "runs natively.",
    "Remove the call if the graph should go on.",
    torch_id="GB0025", torch_gb_type="Call to `torch._dynamo.graph_break()`",
)

UNSUPPORTED_BUILTIN = BreakKind(
    "MD0019", "unsupported builtin call",
    "This builtin has no rule for these arguments: it is C code the trace cannot step "
    "into (or, like print(), it acts outside the graph).",
    "Call it outside the compiled function, or only on Python constants.",
    torch_id="GB0059", torch_gb_type="Failed to trace builtin operator",
)

KEYS_CHANGED_DURING_ITERATION = BreakKind(
    "MD0020", "keys changed during iteration",
    "A dict or set lost a key and gained another (so its size did not change) while an "
    "iterator walked it. Where CPython's iterator goes next then depends on memory the "
    "trace does not model (a dict's deleted slots, a set's hash table), so the whole "
    "frame runs eagerly, where CPython decides (a dict's iterator usually raises "
    "RuntimeError: dictionary keys changed during iteration).",
    "Iterate over a copy (`for k in list(d)`) when the loop changes the container.",
    torch_note="torch has no entry: it iterates a copy of a dict's keys in some of these "
    "loops (`reversed(d)`), with another result than eager",
)

GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE = BreakKind(
    "MD0021", "generator closed when dropped",
    "A generator made while tracing was left unfinished and its last reference went (a "
    "`break` out of `for x in gen()`, `next(gen())`), so CPython closes it there, running "
    "its `finally` blocks and `with` exits; that code could not be traced, and as it runs "
    "between two instructions of the frame, no graph can stop there: the whole frame runs "
    "eagerly.",
    "Exhaust or close the generator yourself (`gen.close()`) where it should end.",
    torch_note="torch has no entry: torch.compile 2.13 never closes such a generator, so "
    "its `finally` blocks do not run (a `with torch.no_grad()` in it leaks)",
)

REQUIRES_GRAD_AT_CREATION = BreakKind(
    "MD0022", "tensor created requiring grad",
    "A factory call asks for a tensor that requires grad (`torch.ones(3, requires_grad=True)`): "
    "a leaf of autograd made inside the graph, which a backend that traces the graph's "
    "autograd (aot_eager, inductor) would return without requires_grad.",
    "Create the tensor outside the compiled function, or without requires_grad.",
    torch_id="GB0225",
    torch_gb_type="Attempted to use tensor creation function with requires_grad=True",
)

REQUIRES_GRAD_RETURNED = BreakKind(
    "MD0023", "requires_grad_() intermediate returned",
    "A tensor made in the graph had requires_grad_() called on it, and it (or a tensor "
    "computed from it) leaves the graph requiring grad. A backend that traces the graph's "
    "autograd drops the requires_grad_() of a graph output, so the frame is traced again, "
    "breaking at each requires_grad_() of a tensor made in it.",
    "Call .detach() before returning if only the values are needed, or call "
    "requires_grad_() outside the compiled function.",
    torch_id="GB8985", torch_gb_type="requires_grad_() intermediate leaked as output",
)

GENERATOR_SUSPENDED_AT_A_BREAK = BreakKind(
    "MD0024", "generator suspended at a break",
    "A generator made while tracing was started and not finished where the graph breaks "
    "(`it = gen(); next(it)`, then a break). Its paused frame cannot be rebuilt for the "
    "code after the graph, and dropping it would skip its `finally` blocks, which eager "
    "Python runs when the frame's locals go: the whole frame runs eagerly.",
    "Exhaust or close the generator (`it.close()`) before the break, or move the break "
    "out of the generator's lifetime.",
    torch_note="torch has no entry: torch.compile 2.13 drops the generator at the break, "
    "so its `finally` blocks never run",
)

UNSUPPORTED_OUT_ARGUMENT = BreakKind(
    "MD0025", "unsupported out= tensor",
    "The call writes its result into an `out=` tensor that it would resize (its shape is "
    "not the result's: `out=torch.empty(0)`) or that is not contiguous. A backend that "
    "functionalizes the graph keeps neither: the result would be broadcast into the old "
    "shape, or an overlap eager rejects would be accepted. The call runs eagerly.",
    "Give `out=` a contiguous tensor of the result's shape, or use the function's "
    "result instead of `out=`.",
    torch_id="GB0247", torch_gb_type="Shape mismatch with out= tensor variant",
    torch_note="torch breaks the same way; a non-contiguous out= is its GB0242",
)

# Every kind, by title: the catalogue page and explain() list them from here.
CATALOGUE: dict[str, BreakKind] = {kind.title: kind for kind in (
    MISSING_BYTECODE_HANDLER,
    UNSUPPORTED_CALL,
    DATA_DEPENDENT_BRANCH,
    UNSUPPORTED_OPERATOR,
    UNSUPPORTED_ATTRIBUTE,
    DATA_DEPENDENT_VALUE,
    UNSUPPORTED_VALUE,
    INLINING_TOO_DEEP,
    CANNOT_RECONSTRUCT,
    UNSUPPORTED_PYTHON_FEATURE,
    UNDEFINED_VARIABLE,
    UNSUPPORTED_MUTATION,
    EXCEPTION_IN_TRACED_CODE,
    GLOBAL_SIDE_EFFECT,
    GRAPH_BREAK_IN_LOOP,
    BREAK_AT_A_STATEMENT_BOUNDARY,
    USER_GRAPH_BREAK,
    UNSUPPORTED_BUILTIN,
    KEYS_CHANGED_DURING_ITERATION,
    GENERATOR_CLOSED_BY_ITS_LAST_REFERENCE,
    REQUIRES_GRAD_AT_CREATION,
    REQUIRES_GRAD_RETURNED,
    GENERATOR_SUSPENDED_AT_A_BREAK,
    UNSUPPORTED_OUT_ARGUMENT,
)}


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
class Unsupported(RuntimeError):
    """A graph break: tracing stopped at something it cannot model (a RuntimeError, as
    torch's `Unsupported`: `fullgraph=True` raises it to the user)."""

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
        if self.kind.torch_id:
            lines.append(f"  TorchDynamo: {self.kind.torch_id} ({self.kind.torch_gb_type}), "
                         f"{self.kind.torch_url}")
        lines += [f"  User code: {frame}" for frame in self.user_stack]
        return "\n".join(lines)


class ObservedException(Exception):
    """The traced code raised a Python exception: raised through the translators and
    their exception tables, not a graph break (chapter 8).

    `value` is the exception's tracker once the translator has one (an
    `ExceptionVariable`); a tracker that finds a missing key or attribute raises it
    with the exception's type and arguments only (`raise_observed`)."""

    def __init__(self, exc_type: type[BaseException], args: tuple[Any, ...] = (),
                 value: Any = None) -> None:
        super().__init__(exc_type, args)
        self.exc_type = exc_type
        self.exc_args = args  # Python values or trackers
        self.value = value

    def __str__(self) -> str:
        return f"{self.exc_type.__name__}{self.exc_args!r}"


def raise_observed(exc_type: type[BaseException], *args: Any) -> NoReturn:
    """The traced code raises `exc_type(*args)` here (chapter 8): `d[k]` of a missing key
    is `raise_observed(KeyError, k)`. The frame's exception table decides where it goes."""
    raise ObservedException(exc_type, args)


class InternalError(Exception):
    """minidynamo itself is wrong (not the user's code): a bug to report."""


class FailOnRecompileLimitHit(RuntimeError):
    """A frame needed one more compile than `config.recompile_limit` allows, and
    `config.fail_on_recompile_limit_hit` is set (torch's exception of the same name)."""


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


def graph_break(kind: BreakKind, reason: str, *, hint: str | None = None) -> NoReturn:
    """Stop tracing with a graph break of catalogue kind `kind` (e.g. `UNSUPPORTED_CALL`).

    `reason` is one line naming the operation and why it cannot be traced;
    `hint` overrides the catalogue's generic hint when a better one is known.
    A kind that is not one of the catalogue's constants is minidynamo's own bug.
    """
    if CATALOGUE.get(getattr(kind, "title", None)) is not kind:
        raise InternalError(f"graph break of a kind not in the catalogue {kind!r}: {reason}")
    raise Unsupported(kind, reason, hint or kind.hint)


def without_frames(error: BaseException) -> BaseException:
    """`error`, and the exceptions it was raised from, without their tracebacks. A break
    kept past its trace (for the next trace, as the entry's break reason, in a log
    record) would hold the trace's frames, and through the translator every input it
    read, in a cycle only the garbage collector frees: a generator of the user's ran its
    `finally` late."""
    chained, seen = error, set()
    while chained is not None and id(chained) not in seen:
        seen.add(id(chained))
        chained.__traceback__ = None
        chained = chained.__cause__ or chained.__context__
    return error


def catalogue_markdown() -> str:
    """The graph-break catalogue as a Markdown page (chapter 6): one section per kind.

    The docs page is generated from `CATALOGUE`, so it cannot drift from the code. Each
    id links to its section (anchor `#md0003`); torch's counterpart links to its page
    on torch's graph-break site."""
    lines = ["# Graph-break catalogue", "",
             "Every graph break minidynamo reports names one of these kinds. Its id is "
             "minidynamo's own (`MD...`); the last column is the entry of torch's "
             "`graph_break_registry.json` for the same break, where torch has one.", "",
             "| id | kind | hint | TorchDynamo |", "|---|---|---|---|"]
    kinds = sorted(CATALOGUE.values(), key=lambda kind: kind.id)
    lines += [f"| [{kind.id}](#{kind.id.lower()}) | {kind.title} | {kind.hint} | "
              f"{_torch_link(kind) or '-'} |" for kind in kinds]
    for kind in kinds:
        torch_line = f"**TorchDynamo:** {_torch_link(kind)}" if kind.torch_id else (
            "**TorchDynamo:** no registry entry for this break")
        if kind.torch_note:
            torch_line += f"; {kind.torch_note}"
        lines += ["", f"## {kind.id}: {kind.title} {{#{kind.id.lower()}}}", "",
                  kind.explanation, "", f"**Hint:** {kind.hint}", "", torch_line + "."]
    return "\n".join(lines) + "\n"


def _torch_link(kind: BreakKind) -> str:
    """`[GB0170](url) Data-dependent branching`, or "" when torch has no such entry."""
    if not kind.torch_id:
        return ""
    gb_type = kind.torch_gb_type.replace("|", "&#124;")
    return f"[{kind.torch_id}]({kind.torch_url}) {gb_type}"
