"""The chapter macros: every expansion is checked against the thing it claims to show."""
import dis
import inspect
import textwrap

import pytest

from course import mkdocs_hooks
from course.mkdocs_hooks import DocsError, expand, split_blocks


def page(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_code_includes_the_real_source_with_its_file_and_lines():
    out = expand('{{ code("course.mkdocs_hooks:exec_info") }}\n', "p.md")
    lines, first = inspect.getsourcelines(mkdocs_hooks.exec_info)
    last = first + len(lines) - 1
    assert out.startswith(f'```python linenums="{first}" title="course/mkdocs_hooks.py, lines {first}-{last}"\n')
    assert "".join(lines).strip() in out


def test_code_of_a_method_is_dedented_and_a_module_is_whole():
    out = expand('{{ code("course.mkdocs_hooks:Text") }}\n', "p.md")
    assert "\n@dataclass\nclass Text:\n" in "\n" + out
    whole = expand('{{ code("course.notebooks") }}\n', "p.md")
    assert whole.startswith('```python linenums="1" title="course/notebooks.py"\n')
    assert inspect.getsource(__import__("course.notebooks").notebooks).strip() in whole


@pytest.mark.parametrize(
    "target, message",
    [
        ("course.no_such_module:f", "no module 'course.no_such_module'"),
        ("course.mkdocs_hooks:no_such_function", "course.mkdocs_hooks has no attribute 'no_such_function'"),
        ("course.mkdocs_hooks:Text.no_such_method", "course.mkdocs_hooks.Text has no attribute 'no_such_method'"),
        ("course.mkdocs_hooks:ROOT", "no Python source to show"),
    ],
)
def test_a_missing_target_fails_and_names_page_and_target(target, message):
    with pytest.raises(DocsError) as error:
        expand(f'Intro.\n\n{{{{ code("{target}") }}}}\n', "chapters/ch42-x.md")
    assert str(error.value).startswith("chapters/ch42-x.md:3: ")
    assert message in str(error.value)


def test_dis_is_generated_from_the_function():
    out = expand('{{ dis("course.mkdocs_hooks:exec_info") }}\n', "p.md")
    assert dis.Bytecode(mkdocs_hooks.exec_info).dis().rstrip() in out
    assert out.startswith('```text title="dis of course.mkdocs_hooks:exec_info"\n')


@pytest.fixture
def toy_repo(tmp_path, monkeypatch):
    """A repository root with a two-function package `toypkg` and a chapter-3 manifest."""
    (tmp_path / "toypkg").mkdir()
    (tmp_path / "toypkg" / "__init__.py").write_text("")
    (tmp_path / "toypkg" / "ops.py").write_text(
        "def double(x):\n    return 2 * x\n\n\nclass Stack:\n    def push(self, v):\n        self.v = v\n"
    )
    (tmp_path / "exercises" / "ch03").mkdir(parents=True)
    (tmp_path / "exercises" / "ch03" / "manifest.toml").write_text(
        page(
            """
            chapter = 3
            title = "Toy operations"

            [[task]]
            id = "ch03.1"
            target = "toypkg.ops:double"
            points = 3
            title = "Double a value"

            [[task]]
            id = "ch03.2"
            target = "toypkg.ops:Stack.push"
            points = 2
            title = "Push"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_exercises_box_lists_the_manifest(toy_repo):
    out = expand('{{ exercises("ch03") }}\n', "p.md", root=toy_repo)
    assert out.startswith('!!! example "Exercises: Toy operations"\n')
    assert "| `ch03.1` | Double a value | 3 | `toypkg.ops:double` | `exercises/ch03/ops.py` |" in out
    assert "| `ch03.2` | Push | 2 | `toypkg.ops:Stack.push` | `exercises/ch03/ops.py` |" in out
    assert "2 tasks, 5 points." in out
    assert "pytest exercises/ch03 --impl=solution" in out
    assert all(line == "" or line.startswith("    ") for line in out.splitlines()[1:])


def test_a_broken_manifest_fails_with_the_manifests_own_message(toy_repo):
    manifest = toy_repo / "exercises" / "ch03" / "manifest.toml"
    manifest.write_text(manifest.read_text().replace("toypkg.ops:double", "toypkg.ops:triple"))
    with pytest.raises(DocsError, match=r"p\.md:1: .*unknown target toypkg\.ops:triple"):
        expand('{{ exercises("ch03") }}\n', "p.md", root=toy_repo)


def test_a_missing_manifest_fails(tmp_path):
    with pytest.raises(DocsError, match=r"p\.md:1: .*exercises/ch07/manifest\.toml does not exist"):
        expand('{{ exercises("ch07") }}\n', "p.md", root=tmp_path)


@pytest.mark.parametrize("line", ["{{ include('x') }}", "{{ code(x) }}", "{{ code('a', 'b') }}", "Hi {{ code('x') }}"])
def test_anything_else_in_braces_fails(line):
    with pytest.raises(DocsError, match=r"p\.md:1: "):
        expand(line + "\n", "p.md")


def test_code_spans_and_fenced_code_are_never_expanded():
    text = page(
        """
        Write `{{ code("module:name") }}` to include code.

        ```python
        print(f"{{x}}")  # {{ code("nothing") }}
        ```
        """
    )
    assert expand(text, "p.md") == text


def test_examples_run_in_order_in_one_namespace_and_show_their_output():
    text = page(
        """
        ```python exec
        x = 20
        print("first")
        ```

        Prose.

        ```python exec
        print(x + 22)
        ```

        ```python exec
        y = 1  # prints nothing, so no output block
        ```
        """
    )
    out = expand(text, "p.md")
    assert "```python exec" not in out
    assert out.count("```{.python .exec-example}\n") == 2  # marked for the browser test
    assert out.count("```{.python .exec-example .exec-silent}\n") == 1
    assert '```{.text .exec-output title="Output"}\nfirst\n```' in out
    assert '```{.text .exec-output title="Output"}\n42\n```' in out
    assert out.count("Output") == 2


def test_an_example_inside_an_admonition_keeps_its_indentation():
    text = page(
        """
        !!! tip "Try it"

            ```python exec
            print("inside")
            ```
        """
    )
    out = expand(text, "p.md")
    assert (
        '    ```{.python .exec-example}\n    print("inside")\n    ```\n\n'
        '    ```{.text .exec-output title="Output"}\n    inside\n    ```'
    ) in out


def test_a_failing_example_names_page_block_and_line():
    text = page(
        """
        ```python exec
        ok = 1
        ```

        ```python exec
        def broken():
            return 1 / 0
        broken()
        ```
        """
    )
    with pytest.raises(DocsError) as error:
        expand(text, "chapters/ch09-guards.md")
    message = str(error.value)
    assert message.startswith("chapters/ch09-guards.md: example 2 (the python exec block at line 5) raised ZeroDivisionError")
    assert 'File "chapters/ch09-guards.md", line 7, in broken' in message  # the page's own line


def test_examples_have_inspectable_source_and_page_line_numbers():
    text = page(
        """
        Some prose.

        ```python exec
        import inspect

        def f(x, y):
            return x * y

        print(f.__code__.co_firstlineno)
        print(inspect.getsource(f).strip().splitlines()[0])
        ```
        """
    )
    assert '```{.text .exec-output title="Output"}\n6\ndef f(x, y):\n```' in expand(text, "p.md")


def test_split_blocks_round_trips_lines():
    text = page(
        """
        # Title
        ~~~~text
        a ``` inside
        ~~~~
        end
        """
    )
    blocks = split_blocks(text)
    assert [type(b).__name__ for b in blocks] == ["Text", "Fence", "Text"]
    assert blocks[1].info == "text" and blocks[1].body == "a ``` inside\n" and blocks[1].line == 2
    assert blocks[2].line == 5


def test_examples_do_not_inherit_the_hooks_future_imports():
    text = "```python exec\ndef f(x: int): pass\nprint(f.__annotations__)\n```\n"
    assert "{'x': <class 'int'>}" in expand(text, "p.md")


def test_code_of_an_exercise_is_folded_behind_a_spoiler(toy_repo):
    out = expand('{{ code("toypkg.ops:double") }}\n', "p.md", root=toy_repo)
    assert out.startswith('??? success "Exercise ch03.1 (Double a value): the package\'s code. Try it first!"\n\n    ```python')
    assert "    def double(x):\n        return 2 * x\n    ```" in out
    method = expand('{{ code("toypkg.ops:Stack.push") }}\n', "p.md", root=toy_repo)
    assert method.startswith('??? success "Exercise ch03.2 (Push)')
    plain = expand('{{ code("toypkg.ops:Stack") }}\n', "p.md", root=toy_repo)
    assert plain.startswith('```python linenums="5"')


def test_a_code_span_with_longer_backtick_runs_inside_is_skipped_whole():
    text = "Open a block with `` ```python exec `` and `{{ code(\"x\") }}`.\n"
    assert expand(text, "p.md") == text
    with pytest.raises(DocsError):
        expand("`` a ` b `` {{ code('x') }}\n", "p.md")


def test_an_example_that_reaches_an_exercise_stub_is_marked_not_run(tmp_path):
    """In a student edition the package's exercise bodies are stubs; the site still builds."""
    text = page(
        """
        ```python exec
        print("before")
        ```

        ```python exec
        raise NotImplementedError("ch01.1: Resolve jump targets to instructions")
        ```

        ```python exec
        print("after")  # not run: the page's namespace is incomplete from here on
        ```
        """
    )
    out = expand(text, "p.md")
    assert '```{.text .exec-output title="Output"}\nbefore\n```' in out
    assert out.count('!!! warning "Not run: exercise ch01.1 (Resolve jump targets to instructions)') == 2
    assert out.rstrip().endswith("They run once the package has its code back.")
    assert '```{.text .exec-output title="Output"}\nafter' not in out


def test_any_other_not_implemented_error_fails_the_build():
    with pytest.raises(DocsError, match="NotImplementedError: later"):
        expand("```python exec\nraise NotImplementedError('later')\n```\n", "p.md")
