"""The pytest plugin, run as a student runs it: `pytest exercises/chNN [options]`."""

import json
import shutil

from course_helpers import pytest_in


def test_solutions_pass_with_points_per_task(shared_repo):
    run = pytest_in(shared_repo, "exercises/ch01", "--impl=solution")
    assert run.returncode == 0, run.stdout
    assert "course: ch01 with impl=solution, one task at a time" in run.stdout   # the header
    assert "points (impl=solution, one task at a time)" in run.stdout
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
    assert "points (impl=student, cumulative, all tasks together)" in run.stdout


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


COUPLED = """import pytest

import toydynamo
from toydynamo import ops


def plugged(function):
    return function.__globals__ is not vars(ops)


@pytest.mark.task("ch01.3")
def test_bump_by_a_sum():
    assert ops.Counter().bump(ops.add(1, 2)) == 3     # goes through ch01.1's add


@pytest.mark.task("ch01.3")
def test_only_its_own_task_is_plugged():
    assert plugged(vars(ops.Counter)["bump"])
    assert not plugged(ops.add) and not plugged(ops.scaled_double)
    assert ops.HANDLERS["add"] is ops.add is toydynamo.add


@pytest.mark.task("ch01.1", "ch01.3")
def test_both_tasks_are_plugged():
    assert plugged(ops.add) and plugged(vars(ops.Counter)["bump"])
    assert not plugged(ops.scaled_double)
    assert ops.Counter().bump(ops.add(1, 2)) == 3
"""


def coupled_repo(repo):
    """ch01 with a test of ch01.3 that goes through ch01.1, and a student who did only
    ch01.3 (the other tasks are the generated stubs)."""
    (repo / "exercises/ch01/test_coupled.py").write_text(COUPLED)
    exercise = repo / "exercises/ch01/ops.py"
    exercise.write_text(exercise.read_text().replace(
        'raise NotImplementedError("ch01.3: Bump a counter")',
        "self.count += by\n        return self.count"))
    return repo


def test_each_test_gets_only_its_own_task_plugged(repo):
    coupled_repo(repo)
    run = pytest_in(repo, "exercises/ch01/test_coupled.py")
    assert "course: ch01 with impl=student, one task at a time" in run.stdout
    assert "test_bump_by_a_sum" not in run.stdout                   # ch01.1 is the reference
    assert "test_only_its_own_task_is_plugged" not in run.stdout
    assert "test_both_tasks_are_plugged - ch01.1 is not implemented yet" in run.stdout
    assert "1 failed, 2 passed" in run.stdout
    ran = pytest_in(repo, "exercises/ch01", "-q")                  # the whole chapter
    assert "ch01.3     1.50 / 2.00    3/4 tests  Bump a counter" in ran.stdout
    assert "ch01.1     0.00 / 3.00    0/4 tests" in ran.stdout


def test_together_plugs_every_task_for_the_whole_run(repo):
    coupled_repo(repo)
    run = pytest_in(repo, "exercises/ch01/test_coupled.py", "--together")
    assert "course: ch01 with impl=student, all tasks together" in run.stdout
    assert "test_bump_by_a_sum - ch01.1 is not implemented yet" in run.stdout
    assert "test_only_its_own_task_is_plugged - assert (not True)" in run.stdout
    assert "3 failed" in run.stdout
    assert "ch01.3     0.00 / 2.00    0/3 tests  Bump a counter" in run.stdout
    stubbed = pytest_in(repo, "exercises/ch01/test_coupled.py", "--stub-task=ch01.1",
                        "--all-tests", "--together", "-q")       # verify's view, together
    assert "test_bump_by_a_sum - ch01.1 is not implemented yet" in stubbed.stdout


def test_stubs_fail_each_test_for_its_own_task_only(repo):
    coupled_repo(repo)
    run = pytest_in(repo, "exercises/ch01", "--impl=stub", "-q")
    own = {"test_add": "ch01.1", "test_add_through_table_and_reexport": "ch01.1",
           "test_add_in_strict_mode": "ch01.1", "test_scaled_double": "ch01.2",
           "test_bump": "ch01.3", "test_zero": "ch01.4",
           "test_bump_by_a_sum": "ch01.3",                 # not ch01.1, called first
           "test_both_tasks_are_plugged": "ch01.1"}
    failures = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failures) == 9, run.stdout                # all but the one that calls nothing
    for line in failures:
        name = line.split("::")[1].split(" ")[0].split("[")[0]
        assert f" - {own[name]} is not implemented yet" in line, line


def test_no_graded_test_leaves_its_task_plugged(repo):
    (repo / "exercises/ch01/test_zz_after.py").write_text(
        "import pytest\nfrom toydynamo import ops\n\n\n"
        "@pytest.mark.task('ch01.2')\ndef test_add_is_the_reference_again():\n"
        "    assert ops.add.__globals__ is vars(ops) and ops.add(1, 1) == 2\n")
    run = pytest_in(repo, "exercises/ch01", "--impl=stub", "-q")
    assert "test_add_is_the_reference_again" not in run.stdout
    assert "1 passed" in run.stdout
