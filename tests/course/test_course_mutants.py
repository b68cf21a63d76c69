"""mutants: the AST mutator, the mutant runner on the fixture, and the records' freshness."""

from __future__ import annotations

import ast
import textwrap

from course.manifest import load_chapters
from course.mutant_records import read_record, record_path, record_problems
from course.mutants import KINDS, function_mutants, task_submissions

from course_helpers import course

SAMPLE = '''\
def sample(self, items, limit=3):
    """Docstring: never mutated."""
    total: int = 0
    for item in items:
        if item is self.skip and not item:
            continue
        elif item < limit:
            total += item * 2
        else:
            self.push(item)
    try:
        value = int(total)
    except ValueError:
        value = None
    result = sorted(items, key=abs, reverse=True)
    print(f"{total + 1} items")
    return pick(value, result) if value else False
'''


def _changed_nodes(before: str, after: str) -> int:
    """How many statements of the function body differ."""
    old, new = ast.parse(before).body[0].body, ast.parse(after).body[0].body
    return sum(ast.dump(a) != ast.dump(b) for a, b in zip(old, new)) + abs(len(old) - len(new))


def test_every_kind_of_mutant_is_made():
    mutants = function_mutants("ch09.1", SAMPLE)
    assert {mutant.kind for mutant in mutants} == set(KINDS)
    assert len({mutant.key for mutant in mutants}) == len(mutants)
    for mutant in mutants:
        tree = ast.parse(mutant.source)          # every mutant is valid Python
        assert ast.get_docstring(tree.body[0]) == "Docstring: never mutated."
        assert ast.dump(tree) != ast.dump(ast.parse(SAMPLE)), mutant.key
        assert _changed_nodes(SAMPLE, mutant.source) >= 1
        removed = mutant.kind == "statement"
        assert "{total + 1} items" in mutant.source or removed   # f-strings: left alone
        assert "total: int = 0" in mutant.source or removed or mutant.kind == "constant"


def test_each_mutant_makes_one_change():
    keys = [mutant.key for mutant in function_mutants("ch09.1", SAMPLE)]
    assert "operator line 8: `total += item * 2` -> `total -= item * 2`" in keys
    assert "compare line 7: `item < limit` -> `item <= limit`" in keys
    assert "identity line 5: `item is self.skip` -> `item == self.skip`" in keys
    assert "boolean line 5: `item is self.skip and (not item)` -> " \
           "`item is self.skip or not item`" in keys
    assert "not line 5: `not item` -> `item`" in keys
    assert "constant line 3: `0` -> `1`" in keys and "constant line 3: `0` -> `-1`" in keys
    assert "push line 10: `self.push(item)` -> `pass`" in keys
    assert "arguments line 17: `pick(value, result)` -> `pick(result, value)`" in keys
    assert "keyword line 15: `sorted(items, key=abs, reverse=True)` -> " \
           "`sorted(items, reverse=True)`" in keys
    assert "return line 17: `return pick(value, result) if value else False` -> " \
           "`return None`" in keys
    assert "handler line 11: `try:` -> without its `except ValueError`" in keys
    assert "branch line 7: `if item < limit:` -> its else only" in keys
    assert "branch line 7: `if item < limit:` -> without its else" in keys
    assert "branch line 17: `pick(value, result) if value else False` -> `False`" in keys
    assert not any("-> `total is" in key or "== None" in key for key in keys)


def test_a_method_keeps_its_indentation():
    method = textwrap.indent(SAMPLE, "    ")
    for mutant in function_mutants("ch09.1", method)[:5]:
        assert mutant.source.startswith("    def sample(")
        ast.parse("class Owner:\n" + mutant.source)


def test_mutants_are_spliced_into_the_solution_file(shared_repo):
    chapter = load_chapters(shared_repo, ["ch01"])[0]
    task = chapter.task("ch01.3")
    submissions = task_submissions(chapter, task)
    assert submissions and all(s.file_name == "ops.py" for s in submissions)
    solution = (chapter.solution_directory / "ops.py").read_text(encoding="utf-8")
    for submission in submissions:
        assert submission.text != solution
        assert "def add(a: int, b: int) -> int:" in submission.text   # other tasks intact
        compile(submission.text, "ops.py", "exec")


def test_mutants_command_reports_and_keeps_the_record(repo):
    before = record_path(load_chapters(repo, ["ch01"])[0]).read_text(encoding="utf-8")
    run = course(repo, "mutants", "ch01", "--jobs", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ch01.1" in run.stdout and "kill rate 86.7% (13 of 15 mutants killed" in run.stdout
    assert "0 unexplained" in run.stdout
    after = record_path(load_chapters(repo, ["ch01"])[0]).read_text(encoding="utf-8")
    assert after == before                     # reasons kept, fingerprints unchanged


def test_a_hanging_mutant_times_out_and_counts_as_killed(repo):
    pipeline = repo / "toydynamo" / "pipeline.py"
    text = pipeline.read_text(encoding="utf-8")
    pipeline.write_text(text.replace(
        "    for value in values:\n        result = add(result, value)\n",
        "    index = 0\n    while index < len(values):\n"
        "        result = add(result, values[index])\n        index += 1\n"), encoding="utf-8")
    assert course(repo, "generate").returncode == 0
    run = course(repo, "mutants", "ch02", "--task", "ch02.1", "--timeout", "3", "--no-record")
    assert "SURVIVED: statement line 8: `index += 1` -> `pass`" not in run.stdout
    line = next(line for line in run.stdout.splitlines() if line.strip().startswith("ch02.1"))
    assert "killed (" in line and "(0 timed out)" not in line, run.stdout


def test_a_record_goes_stale_when_the_solution_or_tests_change(repo):
    chapter = load_chapters(repo, ["ch01"])[0]
    assert record_problems(chapter) == []
    ops = repo / "toydynamo" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8").replace(
        "return operator.add(a, b)", "return a + b"), encoding="utf-8")
    assert record_problems(chapter) == [
        "exercises/ch01/mutants.toml: ch01.1 is stale: its solution changed since it was "
        "recorded; run `python -m course mutants ch01`"]
    tests = chapter.directory / "test_ops.py"
    tests.write_text(tests.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    problems = record_problems(chapter)
    assert len(problems) == 5 and all("stale" in problem for problem in problems)
    assert sum("its graded tests changed" in problem for problem in problems) == 4


def test_a_record_must_explain_every_survivor(repo):
    chapter = load_chapters(repo, ["ch01"])[0]
    path = record_path(chapter)
    text = path.read_text(encoding="utf-8")
    reason = read_record(chapter)["ch01.1"]["equivalent"][0]["reason"]
    path.write_text(text.replace(f'reason = "{reason}"', 'reason = ""'), encoding="utf-8")
    [problem] = record_problems(chapter)
    assert "ch01.1: unexplained survivor" in problem and "operator.add(b, a)" in problem
    path.unlink()
    assert record_problems(chapter) == [
        "exercises/ch01/mutants.toml is missing; run `python -m course mutants ch01`"]


def test_verify_fails_on_a_stale_record(repo):
    ops = repo / "toydynamo" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8").replace(
        '    """The count a fresh counter starts at."""\n        return 0',
        '    """The count a fresh counter starts at."""\n        return 0 * 1'), encoding="utf-8")
    assert course(repo, "generate").returncode == 0
    run = course(repo, "verify", "ch01")
    assert run.returncode == 1
    assert "FAIL  exercises/ch01/mutants.toml: ch01.4 is stale: its solution changed" in run.stdout
