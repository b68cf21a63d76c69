"""The pytest plugin, run as a student runs it: `pytest exercises/chNN [options]`."""

import json
import shutil

from course_helpers import pytest_in


def test_solutions_pass_with_points_per_task(shared_repo):
    run = pytest_in(shared_repo, "exercises/ch01", "--impl=solution")
    assert run.returncode == 0, run.stdout
    assert "course: ch01 with impl=solution" in run.stdout            # the header
    assert "ch01.1     3.00 / 3.00    3/3 tests  Add two numbers" in run.stdout
    assert "total      8.00 / 8.00" in run.stdout


def test_stubs_fail_with_one_line_naming_the_task(shared_repo):
    run = pytest_in(shared_repo, "exercises/ch01", "--impl=stub", "-q")
    assert run.returncode == 1
    assert "FAILED exercises/ch01/test_ops.py::test_bump - ch01.3 is not implemented yet" in run.stdout
    assert "Traceback" not in run.stdout and "raise NotImplementedError" not in run.stdout
    assert "total      0.00 / 8.00" in run.stdout


def test_student_files_are_the_default(repo):
    shutil.copy(repo / "solutions/ch01/ops.py", repo / "exercises/ch01/ops.py")
    exercise = repo / "exercises/ch01/ops.py"
    exercise.write_text(exercise.read_text().replace("return 0", "return 1"))
    run = pytest_in(repo, "exercises/ch01", "-q")
    assert "ch01.4     0.00 / 1.00    0/1 tests" in run.stdout
    assert "total      7.00 / 8.00" in run.stdout


def test_cumulative_plugs_earlier_chapters_too(repo):
    shutil.copy(repo / "solutions/ch02/pipeline.py", repo / "exercises/ch02/pipeline.py")
    assert pytest_in(repo, "exercises/ch02").returncode == 0       # ch01 is the reference
    run = pytest_in(repo, "exercises/ch02", "--cumulative", "-q")  # ch01 is the student's stubs
    assert run.returncode == 1
    assert "test_total - ch01.1 is not implemented yet" in run.stdout


def test_internal_options_stub_one_task_and_log(shared_repo, tmp_path):
    log = tmp_path / "log.jsonl"
    run = pytest_in(shared_repo, "exercises/ch01", "--stub-task=ch01.2", f"--course-log={log}", "-q")
    assert "2 failed, 5 deselected" in run.stdout
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["collected", "start", "result", "start", "result", "finished"]
    assert [t["shares"] for t in events[0]["tests"]] == [{"ch01.2": 1.0}, {"ch01.2": 1.0}]
    assert events[2]["outcome"] == "failed"
    assert pytest_in(shared_repo, "exercises/ch01", "--stub-task=ch09.1").returncode == 4


def test_a_known_bad_directory_replaces_only_its_files(shared_repo):
    run = pytest_in(shared_repo, "exercises/ch01", "--impl-dir=tests/course/bad/wrong_add", "-q")
    assert "3 failed, 4 passed" in run.stdout


def test_bad_markers_fail_the_test(repo):
    with open(repo / "exercises/ch01/test_ops.py", "a") as handle:
        handle.write("\n\n@pytest.mark.task('ch01.9')\ndef test_unknown():\n    pass\n\n\n"
                     "def test_unmarked():\n    pass\n")
    run = pytest_in(repo, "exercises/ch01", "--impl=solution", "-q")
    assert "test_unknown - Failed: @pytest.mark.task('ch01.9'): not a task of" in run.stdout
    assert 'test_unmarked - Failed: a graded test needs @pytest.mark.task("chNN.K")' in run.stdout


def test_graded_tests_run_in_strict_mode(repo):
    (repo / "exercises/ch01/test_strict.py").write_text(
        "import pytest\nfrom toydynamo import config\n\n\n"
        "@pytest.mark.task('ch01.1')\ndef test_strict_inside():\n    assert config.strict\n\n\n"
        "@pytest.mark.task('ch01.1')\ndef test_fixture(strict_mode):\n    assert config.strict\n")
    run = pytest_in(repo, "exercises/ch01/test_strict.py", "--impl=solution", "-q")
    assert "2 passed" in run.stdout


def test_strict_mode_is_tolerant_of_a_package_without_config(repo):
    (repo / "toydynamo/config.py").unlink()
    run = pytest_in(repo, "exercises/ch02", "--impl=solution", "-q")
    assert run.returncode == 0, run.stdout


def test_other_test_directories_are_left_alone(repo):
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests/test_plain.py").write_text("def test_plain():\n    assert True\n")
    run = pytest_in(repo, "tests/test_plain.py")
    assert run.returncode == 0 and "course:" not in run.stdout and "points" not in run.stdout


def test_the_chapters_follow_the_arguments(shared_repo):
    inside = pytest_in(shared_repo / "exercises/ch02", "--impl=solution")
    assert "course: ch02 with impl=solution" in inside.stdout and inside.returncode == 0
    everything = pytest_in(shared_repo, "exercises", "--impl=solution", "-q")
    assert "9 passed" in everything.stdout and "total     11.00 / 11.00" in everything.stdout
