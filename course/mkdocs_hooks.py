"""Chapter macros for the course site: the text includes real code and is executed.

A chapter is Markdown plus the things this hook expands before mkdocs renders it:

    {{ code("module:qualname") }}   the object's source from the package, with its file
    {{ code("module") }}            and line numbers (a whole module without ":")
    {{ dis("module:qualname") }}    the function's `dis` listing, generated at build time
    {{ exercises("chNN") }}         the chapter's tasks, read from exercises/chNN/manifest.toml
    {{ catalogue() }}               the graph-break catalogue, from minidynamo.exc (chapter 6)
    ```python exec                  a runnable example: shown as Python, executed at build
    ...                             time (one namespace per page, in order), its output
    ```                             appended below it

A macro stands alone on its line (it may be indented, e.g. inside an admonition) and
outside code: fenced blocks and `inline code` are never expanded. Any other `{{ ... }}`,
a missing module or name, a missing manifest, or an example that raises fails the build
and names the page. Two courtesies to students: code() folds an exercise's code into a
collapsed box, and an example that reaches an exercise stub (in a student edition, where
the package's exercise bodies are stubs) is shown as "not run" instead of failing.
`course.notebooks` reuses `split_blocks` and `exec_info`, so that the lab notebooks run
exactly the code the site runs. An example and its output are marked with the classes
`exec-example` (plus `exec-silent` when it prints nothing) and `exec-output`, which
the browser test (`tests/docs/test_browser.py`) checks on every page. The site also
serves its own copy of mermaid (`course/mermaid.py`), so diagrams draw offline.
"""
from __future__ import annotations

import ast
import contextlib
import dis
import hashlib
import importlib
import inspect
import io
import linecache
import re
import textwrap
import traceback
from dataclasses import dataclass
from pathlib import Path

from mkdocs.exceptions import PluginError

from course import mermaid
from course.manifest import ManifestError, load_chapter, load_chapters

ROOT = Path(__file__).resolve().parents[1]  # the repository: course/ lives at its top

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MACRO_LINE = re.compile(r"^(?P<indent>[ \t]*)\{\{(?P<call>.*?)\}\}[ \t]*$")
# A code span is skipped, a `{{` outside one is a macro; scanned left to right.
SPAN_OR_BRACES = re.compile(r"(?<!`)(?P<ticks>`+)(?!`).*?(?<!`)(?P=ticks)(?!`)|\{\{")


class DocsError(PluginError):
    """A chapter refers to something that does not exist, or one of its examples failed."""


class StubReached(Exception):
    """An example called an exercise stub: a student edition, where the package is stubbed."""


# How a generated exercise stub announces itself: NotImplementedError("ch01.1: <title>").
STUB_MESSAGE = re.compile(r"(?P<task>ch\d\d\.\d+): (?P<title>.*)")


# ## Splitting a page into prose and fenced blocks


@dataclass
class Text:
    lines: list[str]
    line: int  # 1-based line number of the first line in the page


@dataclass
class Fence:
    indent: str  # the opening fence's indentation, removed from every body line
    fence: str  # ``` or ~~~ (or longer)
    info: str  # the info string after the fence, e.g. "python exec"
    body: str  # the block's content, dedented, ending in a newline
    line: int  # 1-based line number of the opening fence


def split_blocks(markdown: str) -> list[Text | Fence]:
    """Cut a page into runs of prose lines and fenced code blocks, in order."""
    blocks: list[Text | Fence] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE_OPEN.match(lines[i])
        if opening is None:
            if not blocks or not isinstance(blocks[-1], Text):
                blocks.append(Text([], i + 1))
            blocks[-1].lines.append(lines[i])
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body, j = [], i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        text = "\n".join(body) + "\n" if body else ""
        blocks.append(Fence(indent, fence, opening["info"].strip(), text, i + 1))
        i = j + 1  # an unclosed fence runs to the end of the page, as in CommonMark
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def exec_info(info: str) -> str | None:
    """For a ```python exec fence, the info string to render it with; else None."""
    words = info.split()
    if len(words) >= 2 and words[0] in ("python", "py") and "exec" in words[1:]:
        words.remove("exec")
        return " ".join(words)
    return None


# ## The macros


def code(target: str, root: Path = ROOT) -> str:
    """The source of `module:qualname` (or a whole module) as a titled Python block.

    If the target is an exercise in some chapter's manifest, the block is folded into a
    collapsed box, so that a student reading the chapter can try the exercise first.
    """
    obj = resolve(target)
    if isinstance(obj, property):
        obj = obj.fget
    try:
        lines, first = inspect.getsourcelines(obj)
        path = Path(inspect.getsourcefile(obj)).resolve()
    except (OSError, TypeError) as error:
        raise DocsError(f"code({target!r}): no Python source to show ({error})") from None
    first = max(first, 1)  # a module reports line 0
    last = first + len(lines) - 1
    shown = _relative(path)
    source = textwrap.dedent("".join(lines)).rstrip("\n")
    title = f"{shown}, lines {first}-{last}" if ":" in target else shown
    block = f'```python linenums="{first}" title="{title}"\n{source}\n```\n'
    task = exercise_tasks(root).get(target)
    if task is None:
        return block
    task_title = task.title.replace('"', "'")
    summary = f"Exercise {task.id} ({task_title}): the package's code. Try it first!"
    return f'??? success "{summary}"\n\n' + textwrap.indent(block, "    ")


def exercise_tasks(root: Path = ROOT) -> dict:
    """Every exercise task of every chapter's manifest, by its `module:qualname` target."""
    try:
        return {task.target: task for chapter in load_chapters(root) for task in chapter.tasks}
    except ManifestError as error:
        raise DocsError(str(error)) from None


def dis_listing(target: str, root: Path = ROOT) -> str:
    """The `dis` listing of a package function, as CPython prints it for this build."""
    obj = inspect.unwrap(resolve(target))
    try:
        listing = dis.Bytecode(obj).dis()
    except TypeError as error:
        raise DocsError(f"dis({target!r}): {error}") from None
    return f'```text title="dis of {target}"\n{listing.rstrip()}\n```\n'


def exercises(chapter: str, root: Path = ROOT) -> str:
    """An admonition listing the tasks of `exercises/chNN/manifest.toml`."""
    if not re.fullmatch(r"ch\d\d", chapter):
        raise DocsError(f"exercises({chapter!r}): a chapter is written chNN, e.g. 'ch01'")
    manifest_path = root / "exercises" / chapter / "manifest.toml"
    if not manifest_path.is_file():
        raise DocsError(f"exercises({chapter!r}): {_relative(manifest_path, root)} does not exist")
    try:
        manifest = load_chapter(root, chapter)
    except ManifestError as error:
        raise DocsError(f"exercises({chapter!r}): {error}") from None
    tasks = manifest.tasks
    rows = [
        f"| `{task.id}` | {task.title.replace('|', '&#124;')} | {task.points:g} | "
        f"`{task.target}` | `exercises/{chapter}/{task.file_name}` |"
        for task in tasks
    ]
    title = manifest.title.replace('"', "'")
    body = "\n".join(
        [
            "| task | what you write | points | package function | your file |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"{len(tasks)} tasks, {manifest.points:g} points. Write each function in your file;",
            "the graded tests plug it into the real package and compare the results with the",
            "real thing (`dis`, CPython, `torch.compile`):",
            "",
            "```bash",
            f"pytest exercises/{chapter}                    # your code, one task at a time",
            f"pytest exercises/{chapter} --impl=solution    # the reference, to see green",
            f"pytest exercises/{chapter} --together         # all of this chapter's tasks at once",
            f"pytest exercises/{chapter} --cumulative       # your code from every chapter up to this one",
            "```",
        ]
    )
    return f'!!! example "Exercises: {title}"\n\n' + textwrap.indent(body, "    ") + "\n"


def catalogue(root: Path = ROOT) -> str:
    """The graph-break catalogue page (chapter 6), generated from `minidynamo.exc.CATALOGUE`.

    The package's own `catalogue_markdown()` writes it when the package has one; else
    the page is rendered here from the catalogue's entries. Either way it is the data
    the breaks are raised with, so the page cannot drift from the code."""
    try:
        exc = importlib.import_module("minidynamo.exc")
    except ImportError as error:
        raise DocsError(f"catalogue(): cannot import minidynamo.exc ({error})") from None
    if not getattr(exc, "CATALOGUE", None):
        raise DocsError("catalogue(): minidynamo.exc has no CATALOGUE")
    generate = getattr(exc, "catalogue_markdown", None)
    text = generate() if callable(generate) else _catalogue_from_entries(exc.CATALOGUE)
    if not text.lstrip().startswith("# "):
        text = "# Graph-break catalogue\n\n" + text
    return text.rstrip("\n") + "\n"


def _catalogue_from_entries(entries: dict) -> str:
    """The page without the package's generator: ids, kinds, hints and torch's entries."""
    kinds = sorted(entries.values(), key=lambda kind: kind.id)
    cell = lambda text: str(text).replace("|", "&#124;")  # noqa: E731

    def torch_entry(kind) -> str:  # the package's BreakKind.torch_url keeps the link pattern
        url = getattr(kind, "torch_url", None)
        return f"[{kind.torch_id}]({url}) {cell(kind.torch_gb_type)}" if url else "-"

    lines = ["| id | kind | hint | TorchDynamo |", "|---|---|---|---|"]
    lines += [f"| {kind.id} | {cell(kind.title)} | {cell(kind.hint)} | {torch_entry(kind)} |"
              for kind in kinds]
    for kind in kinds:
        lines += ["", f"## {kind.id}: {kind.title}", "", kind.explanation, "",
                  f"**Hint:** {kind.hint}", "", f"**TorchDynamo:** {torch_entry(kind)}"]
    return "\n".join(lines) + "\n"


MACROS = {"code": code, "dis": dis_listing, "exercises": exercises, "catalogue": catalogue}
NO_ARGUMENT_MACROS = {"catalogue"}  # written `{{ catalogue() }}`


def resolve(target: str) -> object:
    """Import `module` and walk `qualname` (dotted) from it; say what is missing."""
    module_name, _, qualname = target.partition(":")
    try:
        obj = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise DocsError(f"{target!r}: no module {error.name!r}") from None
    for depth, part in enumerate(qualname.split(".") if qualname else []):
        if not hasattr(obj, part):
            owner = ".".join([module_name, *qualname.split(".")[:depth]])
            raise DocsError(f"{target!r}: {owner} has no attribute {part!r}")
        obj = getattr(obj, part)
    return obj


def call_macro(call: str, root: Path = ROOT) -> str:
    """Evaluate one macro call such as `code("minidynamo.bytecode:scan")`."""
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except SyntaxError:
        node = None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in NO_ARGUMENT_MACROS
        and not node.args
        and not node.keywords
    ):
        return MACROS[node.func.id](root)
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in MACROS
        and node.func.id not in NO_ARGUMENT_MACROS
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        names = ", ".join(f'{name}()' if name in NO_ARGUMENT_MACROS else f'{name}("...")'
                          for name in MACROS)
        raise DocsError(f"unknown macro {{{{{call}}}}}; the macros are {names}")
    return MACROS[node.func.id](node.args[0].value, root)


# ## Expanding a page


def expand(markdown: str, page: str, *, filename: str | None = None, root: Path = ROOT) -> str:
    """Expand every macro and run every `python exec` block of one page.

    `page` names the page in error messages; `filename` is the file name the examples
    are compiled under (their line numbers are the page's own line numbers).
    """
    filename = filename or page
    linecache.cache[filename] = (len(markdown), None, markdown.splitlines(True), filename)
    namespace: dict[str, object] = {"__name__": "__main__", "__file__": filename}
    out: list[str] = []
    example = 0
    stub = None  # the exercise stub an example ran into; later examples are not run
    for block in split_blocks(markdown):
        if isinstance(block, Text):
            out.extend(_expand_text(block, page, root))
            continue
        opener = block.indent + block.fence
        info = exec_info(block.info)
        body = textwrap.indent(block.body, block.indent, lambda line: True)
        if info is None:
            out.append(f"{opener}{block.info}\n{body}{opener}")
            continue
        example += 1
        output = ""
        if stub is None:
            try:
                output = run_example(block, example, namespace, page, filename)
            except StubReached as reached:
                stub = STUB_MESSAGE.fullmatch(str(reached))
        silent = not output and stub is None
        out.append(f"{opener}{_marked(info, 'exec-example', silent=silent)}\n{body}{opener}")
        if stub is not None:
            output = (
                f'!!! warning "Not run: exercise {stub["task"]} ({stub["title"]}) is a stub '
                'in this copy of the package"\n\n    This example, and the ones after it on '
                "this page, need it. They run once the package has its code back."
            )
        elif output:
            fence = "```" + _marked('text title="Output"', "exec-output")
            output = f"{fence}\n{output.rstrip()}\n```"
        if output:
            out.append("")
            out.append(textwrap.indent(output, block.indent, lambda line: True))
    return "\n".join(out) + "\n"


def _marked(info: str, css_class: str, *, silent: bool = False) -> str:
    """`python` -> `{.python .exec-example}`: superfences' attribute form of an info string."""
    language, _, options = info.partition(" ")
    classes = f".{language} .{css_class}" + (" .exec-silent" if silent else "")
    return "{" + " ".join(filter(None, [classes, options.strip()])) + "}"


def _expand_text(block: Text, page: str, root: Path) -> list[str]:
    out: list[str] = []
    for offset, line in enumerate(block.lines):
        where = f"{page}:{block.line + offset}"
        macro = MACRO_LINE.match(line)
        if macro is not None:
            try:
                expanded = call_macro(macro["call"], root)
            except DocsError as error:
                raise DocsError(f"{where}: {error}") from None
            out.append(textwrap.indent(expanded.rstrip("\n"), macro["indent"], lambda line: True))
            continue
        for found in SPAN_OR_BRACES.finditer(line):
            if found.group("ticks") is None:
                raise DocsError(f"{where}: a macro must stand alone on its line: {line.strip()!r}")
        out.append(line)
    return out


def run_example(block: Fence, number: int, namespace: dict, page: str, filename: str) -> str:
    """Execute one example in the page's namespace and return what it printed."""
    # Padding with newlines makes line numbers in tracebacks and `dis` the page's own.
    source = "\n" * block.line + block.body
    buffer = io.StringIO()
    try:
        compiled = compile(source, filename, "exec", dont_inherit=True)  # not this file's __future__
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            exec(compiled, namespace)
    except BaseException as error:  # noqa: BLE001  (a SystemExit in an example is a failure too)
        if isinstance(error, NotImplementedError) and STUB_MESSAGE.fullmatch(str(error)):
            raise StubReached(str(error)) from None
        frames = traceback.format_exception(type(error), error, error.__traceback__.tb_next)
        raise DocsError(
            f"{page}: example {number} (the python exec block at line {block.line}) raised "
            f"{type(error).__name__}: {error}\n{''.join(frames)}"
        ) from None
    return buffer.getvalue()


# ## mkdocs hook


_cache: dict[str, str] = {}  # page fingerprint -> expanded Markdown, for `mkdocs serve`


def _fingerprint(markdown: str, page: str) -> str:
    """The page's text plus the state of everything a macro or example may read."""
    digest = hashlib.sha256(page.encode() + b"\0" + markdown.encode())
    for path in sorted([*ROOT.glob("minidynamo/**/*.py"), *ROOT.glob("exercises/*/manifest.toml")]):
        digest.update(f"{path}:{path.stat().st_mtime_ns}".encode())
    return digest.hexdigest()


def on_config(config):
    """Serve mermaid from the site: its script is loaded before material draws diagrams."""
    if mermaid.SITE_PATH not in config.extra_javascript:
        config.extra_javascript.append(mermaid.SITE_PATH)
    return config


def on_files(files, config):
    """Add the pinned mermaid script (fetched once into .cache/) and its licence to the site."""
    from mkdocs.structure.files import File

    script = mermaid.mermaid_js()
    for site_path, source in [(mermaid.SITE_PATH, script),
                              (mermaid.SITE_LICENSE_PATH, script.parent / mermaid.LICENSE)]:
        files.append(File.generated(config, site_path, abs_src_path=str(source)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = Path(page.file.abs_src_path)
    page_name = _relative(src)
    key = _fingerprint(markdown, page_name)
    if key not in _cache:
        _cache[key] = expand(markdown, page_name, filename=page_name)
    return _cache[key]


def _relative(path: Path, root: Path = ROOT) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
