"""Lab notebooks are generated from the chapters, deterministically, and checked for staleness."""
import textwrap

import nbformat

from course import notebooks

CHAPTER = textwrap.dedent(
    """\
    # Chapter 3: Things

    Prose that the notebook leaves to the site.

    ## First section

    ```python
    not_an_example = True
    ```

    ## Second section

    ### Detail

    ```python exec
    x = 1
    ```

    ```python exec
    print(x)
    ```

    ## Closing words
    """
)


def make_repo(tmp_path, text=CHAPTER):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "ch03-some-things.md").write_text(text)
    (tmp_path / "chapters" / "index.md").write_text("# Home\n")
    return tmp_path


def test_cells_are_title_headings_examples_and_tests():
    nb = notebooks.build_notebook(CHAPTER, "ch03", "chapters/ch03-some-things.md")
    kinds = [(cell.cell_type, cell.source.splitlines()[0]) for cell in nb.cells]
    assert kinds == [
        ("markdown", "# Chapter 3: Things"),
        ("markdown", "## Second section"),
        ("code", "x = 1"),
        ("code", "print(x)"),
        ("markdown", "## Run the graded tests"),
        ("code", "# Run this chapter's graded tests on your code in exercises/ch03/."),
    ]
    assert nb.cells[1].source == "## Second section\n### Detail"
    assert [cell.id for cell in nb.cells] == [f"ch03-{n:03d}" for n in range(6)]
    assert nb.metadata.kernelspec.name == "python3"


def test_tests_cell_is_valid_python_guarded_and_uses_the_impl_variable():
    nb = notebooks.build_notebook(CHAPTER, "ch03", "chapters/ch03-some-things.md")
    source = nb.cells[-1].source
    compile(source, "cell", "exec")
    assert '"exercises/ch03"' in source and "manifest.toml" in source
    assert notebooks.IMPL_VARIABLE in source and "check=True" not in source


def test_tests_cell_prints_and_does_not_raise_without_exercises(tmp_path, capsys, monkeypatch):
    (tmp_path / "exercises").mkdir()
    monkeypatch.chdir(tmp_path)
    nb = notebooks.build_notebook(CHAPTER, "ch03", "chapters/ch03-some-things.md")
    exec(nb.cells[-1].source, {})
    assert capsys.readouterr().out == "ch03 has no graded exercises yet.\n"


def test_generate_is_deterministic_and_check_detects_staleness(tmp_path):
    root = make_repo(tmp_path)
    assert notebooks.main(["--root", str(root), "--check"]) == 1
    assert notebooks.main(["--root", str(root)]) == 0
    path = root / "notebooks" / "ch03_some_things.ipynb"
    first = path.read_text()
    nbformat.validate(nbformat.reads(first, as_version=4))
    assert notebooks.main(["--root", str(root), "--check"]) == 0
    assert notebooks.main(["--root", str(root)]) == 0 and path.read_text() == first
    (root / "chapters" / "ch03-some-things.md").write_text(CHAPTER + "\n```python exec\ny = 2\n```\n")
    assert notebooks.main(["--root", str(root), "--check"]) == 1
    assert path.read_text() == first  # --check writes nothing
