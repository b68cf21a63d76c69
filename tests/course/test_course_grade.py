"""grade: scores in every format, tampering reported, crashes and hangs contained."""

import json
import shutil
import xml.etree.ElementTree as ElementTree

import pytest

from course_helpers import course


def grade(repo, *args):
    run = course(repo, "grade", "--out", str(repo / "grades"), *args)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((repo / "grades/results.json").read_text())
    return run, results


def test_solutions_score_full_marks_in_every_format(shared_repo, tmp_path):
    run = course(shared_repo, "grade", "--impl", "solution", "--out", str(tmp_path))
    assert run.returncode == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert (results["score"], results["max_score"]) == (11.0, 11.0)
    assert [t["number"] for t in results["tests"]] == ["1.1", "1.2", "1.3", "1.4", "1.5", "1.6",
                                                      "1.7", "2.1", "2.2"]
    first = results["tests"][0]
    assert first == {"name": "[ch01.1] test_ops.py::test_add", "number": "1.1", "score": 1.0,
                     "max_score": 1.0, "status": "passed", "output": "", "visibility": "visible"}
    suites = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert [s.get("name") for s in suites] == ["ch01", "ch02"]
    assert suites.find("testsuite/testcase").get("classname") == "exercises.ch01.test_ops"
    assert "ch01.3       1/1    2.00 / 2.00    Bump a counter" in (tmp_path / "report.txt").read_text()
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# Grade: 11.00 / 11.00 (100.0%)")
    assert "| ch01.3 | Bump a counter | 1 / 1 | 2.00 / 2.00 |" in summary
    assert "None: every graded test file matches its checksum" in summary


def test_partial_submission_scores_per_test(repo):
    shutil.copy(repo / "tests/course/bad/wrong_add/ops.py", repo / "exercises/ch01/ops.py")
    _, results = grade(repo, "ch01")
    assert (results["score"], results["max_score"]) == (5.0, 8.0)
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert [t["name"] for t in failed] == ["[ch01.1] test_ops.py::test_add",
                                           "[ch01.1] test_ops.py::test_add_through_table_and_reexport",
                                           "[ch01.1] test_ops.py::test_add_in_strict_mode"]
    assert "assert -1 == 5" in failed[0]["output"]


def test_stubs_score_zero_with_the_reason(shared_repo, tmp_path):
    run = course(shared_repo, "grade", "--impl", "stub", "ch02", "--out", str(tmp_path))
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"] == 0 and results["max_score"] == 3
    assert results["tests"][0]["output"] == "ch02.1 is not implemented yet: Sum with add"
    assert "2.1   [ch02.1] test_pipeline.py::test_total: ch02.1 is not implemented yet" in run.stdout


def test_modified_graded_tests_are_reported_everywhere(repo):
    tests = repo / "exercises/ch01/test_ops.py"
    tests.write_text(tests.read_text().replace("assert add(2, 3) == 5", "assert True"))
    (repo / "exercises/ch02/conftest.py").write_text("")
    run, results = grade(repo)
    warning = "graded test exercises/ch01/test_ops.py was MODIFIED since generation"
    assert warning in run.stdout.splitlines()[2]                  # near the top of the table
    assert results["output"].startswith(f"WARNING: {warning}")
    assert "exercises/ch02/conftest.py is not part of the course" in results["output"]
    assert warning in (repo / "grades/summary.md").read_text().split("## ch01")[0]
    junit = (repo / "grades/junit.xml").read_text()
    assert 'name="warning"' in junit and "MODIFIED" in junit


@pytest.mark.timeout(120)
def test_a_hang_costs_its_test_and_a_crash_its_chapter(repo):
    exercise = repo / "exercises/ch01/ops.py"
    exercise.write_text(exercise.read_text()
                        .replace('raise NotImplementedError("ch01.2: Scale and clamp")',
                                 "while True:\n        pass")
                        .replace('raise NotImplementedError("ch01.3: Bump a counter")',
                                 "import os\n        os.abort()"))
    shutil.copy(repo / "solutions/ch02/pipeline.py", repo / "exercises/ch02/pipeline.py")
    run, results = grade(repo, "--timeout", "1")
    outcome = {t["name"]: (t["status"], (t["output"] + "\n").splitlines()[0]) for t in results["tests"]}
    assert outcome["[ch01.2] test_ops.py::test_scaled_double[1-20]"] == (
        "failed", "Failed: Timeout (>1.0s) from pytest-timeout.")
    crashed = "the test process died (SIGABRT) while running exercises/ch01/test_ops.py::test_bump"
    assert outcome["[ch01.3] test_ops.py::test_bump"] == ("failed", f"no result: {crashed}")
    assert outcome["[ch01.4] test_ops.py::test_zero"][0] == "failed"      # after the crash
    assert results["score"] == 3.0 and results["max_score"] == 11.0      # ch02 is untouched
    assert f"WARNING: ch01: {crashed}" in run.stdout


def test_a_chapter_that_cannot_start_scores_zero_with_the_reason(repo):
    (repo / "exercises/ch02/test_pipeline.py").write_text("import no_such_module\n")
    run, results = grade(repo, "ch02")
    assert results["max_score"] == 3.0 and results["score"] == 0
    assert [t["name"] for t in results["tests"]] == ["[ch02.1] ch02::ch02.1", "[ch02.2] ch02::ch02.2"]
    assert "collecting the graded tests failed: exercises/ch02/test_pipeline.py" in results["tests"][0]["output"]
    assert "No module named 'no_such_module'" in results["tests"][0]["output"]
