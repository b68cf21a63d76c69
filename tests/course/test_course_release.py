"""release: a student edition with no answers, whose tests pass once the answers are back."""

import ast
import os
import shutil
import subprocess
import sys

import pytest

from course.generate import is_stub
from course.manifest import DEFAULT_ROOT, load_chapters
from course.release import release, round_trip, stub_package
from course.source import read_module
from course_helpers import course, pytest_in


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    from course_helpers import make_repo
    root = make_repo(tmp_path_factory.mktemp("source") / "repo")
    out = tmp_path_factory.mktemp("release") / "student"
    assert release(root, out) == 0
    return root, out


def test_the_release_has_no_solutions_and_no_answers(edition):
    root, out = edition
    assert not (out / "solutions").exists() and not (out / "tests/course").exists()
    assert (out / "exercises/ch01/ops.py").read_text() == (root / "exercises/ch01/ops.py").read_text()
    ops = (out / "toydynamo/ops.py").read_text()
    ast.parse(ops)
    assert "operator.add(a, b)" not in ops and "self.count += by" not in ops
    assert "def apply(" in ops and "self.count = 0" in ops             # the rest is kept
    for chapter in load_chapters(out):
        for task in chapter.tasks:
            definition = read_module(out, task.module).definition(task.qualname)
            assert is_stub(definition, task), task.id


def test_the_release_is_fresh_and_generates_no_solutions(edition):
    _, out = edition
    assert course(out, "check").returncode == 0
    run = course(out, "generate")
    assert run.returncode == 0 and not (out / "solutions").exists()


def test_tests_fail_as_shipped_and_pass_with_the_solutions_put_back(edition):
    root, out = edition
    assert round_trip(root, out) == []


def test_an_edition_plugs_every_chapter_together(edition, tmp_path):
    root, out = edition
    copy = tmp_path / "edition"
    shutil.copytree(out, copy)
    shutil.copy(root / "solutions/ch01/ops.py", copy / "exercises/ch01/ops.py")
    shutil.copy(root / "solutions/ch02/pipeline.py", copy / "exercises/ch02/pipeline.py")
    run = pytest_in(copy, "exercises/ch02")
    assert "all tasks together (the package has no answers)" in run.stdout
    assert run.returncode == 0, run.stdout    # ch02 goes through the student's ch01 throughout


def test_the_round_trip_notices_a_leak(edition, tmp_path):
    root, out = edition
    leaky = tmp_path / "leaky"
    shutil.copytree(out, leaky)
    shutil.copy(root / "toydynamo/ops.py", leaky / "toydynamo/ops.py")   # answers shipped
    (leaky / "exercises/ch02/pipeline.py").write_text(
        (root / "solutions/ch02/pipeline.py").read_text())                # and a stub answered
    problems = round_trip(root, leaky)
    assert "the release's package still answers ch01.1 (toydynamo.ops:add)" in problems
    assert "passes as shipped: exercises/ch02/test_pipeline.py::test_total" in problems


def test_release_refuses_stale_files_and_a_used_directory(repo, tmp_path, capsys):
    (tmp_path / "used").mkdir()
    (tmp_path / "used/file").write_text("")
    assert release(repo, tmp_path / "used") == 1
    (repo / "solutions/ch01/ops.py").unlink()
    assert release(repo, tmp_path / "new") == 1
    assert "generated files are stale" in capsys.readouterr().out


def test_the_check_prints_each_chapters_score_both_ways(edition, capsys):
    root, out = edition
    assert round_trip(root, out, ["ch01"]) == []
    printed = capsys.readouterr().out
    assert "release: ch01 as shipped: 0.00 / 8.00" in printed
    assert "release: ch01 with the solutions put back: 8.00 / 8.00" in printed
    assert "ch02" not in printed                                     # only the named chapter


def test_an_exercise_called_while_the_package_imports_fails_the_check(repo, tmp_path):
    ops = repo / "toydynamo/ops.py"
    ops.write_text(ops.read_text() + "\nTWO = add(1, 1)  # runs at import: a stub raises\n")
    out = tmp_path / "student"
    assert release(repo, out) == 0
    problems = round_trip(repo, out)
    assert any(p.startswith("ch01 as shipped: pytest stopped before running any test")
               for p in problems), problems
    assert any(p.startswith("ch02 with the solutions put back: pytest stopped") for p in problems)
    assert "ch01 with the solutions put back: its tests carry 0 of the manifest's 8 points" \
        in problems


def test_the_real_editions_package_imports_with_every_exercise_stubbed(tmp_path):
    """No exercise of the real course is called while minidynamo is imported (a class
    body that made handlers with `generic_jump` once stopped the edition dead)."""
    out = tmp_path / "student"
    chapters = load_chapters(DEFAULT_ROOT)
    shutil.copytree(DEFAULT_ROOT / "minidynamo", out / "minidynamo",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert stub_package(DEFAULT_ROOT, out, chapters) == sum(len(c.tasks) for c in chapters)
    code = ("import importlib, pkgutil, minidynamo\n"
            "assert minidynamo.__file__.startswith(%r), minidynamo.__file__\n"
            "for module in pkgutil.walk_packages(minidynamo.__path__, 'minidynamo.'):\n"
            "    importlib.import_module(module.name)\n"
            "from minidynamo.translator import InstructionTranslator\n"
            "try:\n"
            "    InstructionTranslator.dispatch_table\n"
            "except NotImplementedError as error:\n"
            "    print('stubbed:', error)\n" % str(out))
    run = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(out)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "stubbed: ch02.1" in run.stdout          # the table is built on first use, not before
