"""The Gradescope autograder: its zip, and a whole run as Gradescope would make it."""

import json
import os
import subprocess
import sys
import zipfile

from course.package import (
    build_gradescope,
    check_gradescope,
    import_submission,
    requirements,
    results_problems,
)
from course_helpers import course


def test_the_zip_has_the_scripts_and_what_grading_needs(shared_repo, tmp_path):
    path = build_gradescope(shared_repo, tmp_path / "autograder.zip")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        setup = archive.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "pyproject.toml", "toydynamo/ops.py",
            "course/grade.py", "exercises/conftest.py", "exercises/ch01/test_ops.py",
            "exercises/ch01/.checksums.json", "exercises/ch01/ops.py"} <= set(names)
    assert not any(n.startswith(("solutions/", "tests/")) or "__pycache__" in n for n in names)
    assert modes["run_autograder"] == modes["setup.sh"] == 0o755
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in setup
    assert "'pytest>=8' 'pytest-timeout>=2.3'" in setup and "nbformat" not in setup
    again = build_gradescope(shared_repo, tmp_path / "again.zip")
    assert again.read_bytes() == path.read_bytes()                     # reproducible


def test_requirements_come_from_pyproject(shared_repo):
    assert requirements(shared_repo) == ("torch==2.13.0", ["pytest>=8", "pytest-timeout>=2.3"])


def test_import_submission_takes_only_exercise_files(repo, tmp_path, capsys):
    submission = tmp_path / "submission"
    (submission / "repo-main/exercises/ch01").mkdir(parents=True)
    (submission / "repo-main/exercises/ch01/ops.py").write_text("# mine\n")
    (submission / "pipeline.py").write_text("# mine too\n")
    (submission / "test_ops.py").write_text("# not taken\n")
    assert import_submission(repo, submission) == 0
    assert (repo / "exercises/ch01/ops.py").read_text() == "# mine\n"
    assert (repo / "exercises/ch02/pipeline.py").read_text() == "# mine too\n"
    assert "ignored  test_ops.py" in capsys.readouterr().out
    assert "# not taken" not in (repo / "exercises/ch01/test_ops.py").read_text()


def test_run_autograder_end_to_end(shared_repo, tmp_path):
    archive = build_gradescope(shared_repo, tmp_path / "autograder.zip")
    source = tmp_path / "autograder/source"
    zipfile.ZipFile(archive).extractall(source)
    submission = tmp_path / "autograder/submission"
    submission.mkdir()
    (submission / "ops.py").write_text((shared_repo / "solutions/ch01/ops.py").read_text())
    env = {**os.environ, "AUTOGRADER_ROOT": str(tmp_path / "autograder"),
           "AUTOGRADER_PYTHON": sys.executable}
    run = subprocess.run(["bash", str(source / "run_autograder")], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((tmp_path / "autograder/results/results.json").read_text())
    assert (results["score"], results["max_score"]) == (8.0, 11.0)   # ch02 not submitted
    assert "not submitted: exercises/ch02/pipeline.py" in run.stdout


def test_the_check_runs_the_zip_on_the_solutions_and_the_stubs(shared_repo, tmp_path, capsys):
    archive = build_gradescope(shared_repo, tmp_path / "autograder.zip")
    assert check_gradescope(shared_repo, archive) == []
    printed = capsys.readouterr().out
    assert "the solutions score 11 / 11" in printed and "the stubs score 0 / 11" in printed


def test_the_check_fails_when_the_solutions_lose_points(repo, tmp_path):
    solution = repo / "solutions/ch01/ops.py"
    solution.write_text(solution.read_text().replace("operator.add(a, b)", "a - b"))
    run = course(repo, "package", "gradescope", "ch01", "--out", str(tmp_path / "ag.zip"),
                 "--check")
    assert run.returncode == 1, run.stdout
    assert "gradescope on the solutions: scored 5 / 8, expected 8 / 8" in run.stdout
    assert "[ch01.1] test_ops.py::test_add failed" in run.stdout


def test_results_problems_checks_the_total_and_the_shares():
    tests = [{"name": "a", "max_score": 0.43, "status": "failed"}] * 6 \
        + [{"name": "b", "max_score": 0.42, "status": "failed"}]
    results = {"score": 0, "max_score": 3.0, "output": "Score: 0.00 / 3.00", "tests": tests}
    assert results_problems(results, "stub", 0, 3.0) == []
    tests[-1] = {"name": "b", "max_score": 0.4286, "status": "passed"}
    results["max_score"] = 3.0002
    assert results_problems(results, "stub", 0, 3.0) == [
        "gradescope on the stubs: scored 0 / 3.0002, expected 0 / 3",
        "gradescope on the stubs: the tests' max_score add up to 3.0086, not the manifests' 3",
        "gradescope on the stubs: b passed"]
