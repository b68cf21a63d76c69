"""The generator: stub and solution files, determinism, check mode, keeping a student's edits."""

import ast
import json

from course.__main__ import main
from course.generate import check, generate, render_chapter, sha256
from course.manifest import load_chapters
from course_helpers import FIXTURE, make_repo


def read(repo, name):
    return (repo / name).read_text()


def test_stub_file_keeps_signatures_and_docstrings_and_raises(shared_repo):
    stub = read(shared_repo, "exercises/ch01/ops.py")
    ast.parse(stub)
    assert "def scaled_double(x: int,\n                  *, limit: int = 100) -> int:\n" \
           '    """SCALE times double `x`, clamped to `limit`."""\n' \
           '    raise NotImplementedError("ch01.2: Scale and clamp")\n' in stub
    assert "class Counter:\n" in stub and "    @staticmethod\n    def zero() -> int:\n" in stub
    assert 'raise NotImplementedError("ch01.4: The starting count")' in stub
    assert "__init__" not in stub and "def apply" not in stub     # only the exercises
    assert "from toydynamo.util import clamp" in stub               # relative import made absolute
    assert "pytest exercises/ch01" in stub and "ch01.3  (2 points)  Counter.bump" in stub
    assert "self.count" not in stub and "operator.add" not in stub  # no answer in a stub


def test_solution_file_is_the_package_code_verbatim(shared_repo):
    solution = read(shared_repo, "solutions/ch01/ops.py")
    package = read(shared_repo, "toydynamo/ops.py")
    for piece in ["def scaled_double(x: int,\n                  *, limit: int = 100) -> int:"
                  "  # a signature over two lines\n",
                  "    def bump(self, by: int = 1) -> int:\n"
                  '        """Add `by` to the count and return the new count."""\n'
                  "        self.count += by\n        return self.count\n"]:
        assert piece in package and piece in solution
    assert "from toydynamo.ops import SCALE, _double" in solution   # helpers the bodies use
    assert "import SCALE" not in read(shared_repo, "exercises/ch01/ops.py")  # stubs do not hint


def test_generation_is_deterministic(tmp_path):
    first, second = make_repo(tmp_path / "a"), make_repo(tmp_path / "b")
    names = ["exercises/ch01/ops.py", "solutions/ch01/ops.py", "exercises/ch01/.checksums.json",
             "exercises/ch02/pipeline.py", "solutions/ch02/pipeline.py"]
    assert [read(first, n) for n in names] == [read(second, n) for n in names]
    assert main(["generate", "--root", str(first)]) == 0
    assert [read(first, n) for n in names] == [read(second, n) for n in names]


def test_checksums_record_tests_and_stubs(shared_repo):
    record = json.loads(read(shared_repo, "exercises/ch01/.checksums.json"))
    assert record["tests"] == {"test_ops.py": sha256((FIXTURE / "exercises/ch01/test_ops.py").read_bytes())}
    assert record["stubs"] == {"ops.py": sha256(read(shared_repo, "exercises/ch01/ops.py"))}


def test_check_lists_every_stale_or_missing_file(repo, capsys):
    assert main(["check", "--root", str(repo)]) == 0
    (repo / "solutions/ch01/ops.py").unlink()
    (repo / "exercises/ch02/pipeline.py").unlink()
    with open(repo / "exercises/ch01/test_ops.py", "a") as handle:
        handle.write("\n# an edited graded test\n")
    capsys.readouterr()
    assert main(["check", "--root", str(repo)]) == 1
    out = capsys.readouterr().out
    assert "missing solutions/ch01/ops.py: run `python -m course generate ch01`" in out
    assert "missing exercises/ch02/pipeline.py" in out
    assert "stale   exercises/ch01/.checksums.json" in out
    assert "check: 3 generated file(s) stale or missing" in out


def test_a_package_change_makes_stubs_and_solutions_stale_and_generate_updates_them(repo):
    ops = repo / "toydynamo/ops.py"
    ops.write_text(ops.read_text().replace('"""Return a + b."""', '"""Return the sum a + b."""'))
    chapters = load_chapters(repo)
    report = check(chapters)
    assert report.failed and any("stale   exercises/ch01/ops.py: the package changed" in line
                                 for line in report.lines)
    report = generate(chapters)   # the old stub was never edited: replaced without --force
    assert not report.failed
    assert '"""Return the sum a + b."""' in read(repo, "exercises/ch01/ops.py")
    assert not check(chapters).failed


def test_generate_never_overwrites_a_students_edits_without_force(repo, capsys):
    exercise = repo / "exercises/ch01/ops.py"
    edited = exercise.read_text().replace('raise NotImplementedError("ch01.1: Add two numbers")',
                                          "return a + b")
    exercise.write_text(edited)
    capsys.readouterr()
    assert main(["generate", "--root", str(repo)]) == 1
    assert "kept    exercises/ch01/ops.py" in capsys.readouterr().out
    assert exercise.read_text() == edited
    assert main(["check", "--root", str(repo)]) == 1      # CI would catch the edit
    assert main(["generate", "--force", "--root", str(repo), "ch01"]) == 0
    assert "return a + b" not in exercise.read_text()


def test_generate_removes_files_no_longer_asked_for(repo):
    manifest = repo / "exercises/ch02/manifest.toml"
    manifest.write_text(manifest.read_text()
                        .replace("toydynamo.pipeline:total", "toydynamo.ops:apply")
                        .replace("toydynamo.pipeline:LoudCounter.bump", "toydynamo.ops:Counter.__init__"))
    assert main(["check", "--root", str(repo)]) == 1
    assert main(["generate", "--root", str(repo)]) == 0
    assert "def apply(" in read(repo, "exercises/ch02/ops.py")
    assert not (repo / "exercises/ch02/pipeline.py").exists()      # pristine: removed
    assert not (repo / "solutions/ch02/pipeline.py").exists()
    assert main(["check", "--root", str(repo)]) == 0


def test_render_has_one_stub_and_solution_per_module(shared_repo):
    outputs = render_chapter(load_chapters(shared_repo, ["ch02"])[0])
    assert list(outputs.stubs) == list(outputs.solutions) == ["pipeline.py"]
    assert "super().bump(10 * by)" in outputs.solutions["pipeline.py"]
