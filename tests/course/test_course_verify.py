"""verify: it passes on a sound chapter and names each kind of unsound one."""

from course.manifest import load_chapters
from course.runner import ChapterRun, RunConfig, TestResult
from course.verify import _needing_own_run
from course_helpers import course


def test_verify_passes_on_the_fixture(repo):
    run = course(repo, "verify")
    assert run.returncode == 0, run.stdout + run.stderr
    for line in ["ok    generated files are fresh", "ok    the solutions pass all 7 graded tests",
                 "ok    every task has graded tests", "ok    ch01.3 stubbed: its 1 test(s) fail",
                 "ok    bad submission wrong_add loses exactly ch01.1",
                 "verify: all checks hold (2 chapter(s), 5 pytest runs"]:
        assert line in run.stdout


def test_verify_names_every_problem(repo):
    tests = repo / "exercises/ch01/test_ops.py"
    tests.write_text(tests.read_text() + '''

@pytest.mark.task("ch01.2")
def test_that_grades_nothing():
    assert True
''')
    manifest = repo / "exercises/ch02/manifest.toml"
    manifest.write_text(manifest.read_text() + '''
[[task]]
id = "ch02.3"
target = "toydynamo.ops:apply"
points = 1
title = "Untested"
''')
    (repo / "tests/course/bad/wrong_add/expect.toml").write_text(
        'chapter = 1\nlose = ["ch01.2"]\n')
    solution = repo / "solutions/ch01/ops.py"
    solution.write_text(solution.read_text().replace("return 0", "return 7"))
    run = course(repo, "verify")
    assert run.returncode == 1
    for line in [
        "FAIL  stale   solutions/ch01/ops.py",
        "FAIL  stale   exercises/ch01/.checksums.json",
        "FAIL  missing exercises/ch02/ops.py",
        "FAIL  the solutions fail exercises/ch01/test_ops.py::test_zero: AssertionError: assert 7 == 0\n",
        "FAIL  ch01.2 stubbed: a stub passes test exercises/ch01/test_ops.py::test_that_grades_nothing",
        "FAIL  no graded test is marked with ch02.3",
        "FAIL  bad submission wrong_add should lose ch01.2 but scores full points on it",
        "FAIL  bad submission wrong_add also loses ch01.1",
    ]:
        assert line in run.stdout, line
    assert "problem(s)" in run.stdout


def test_verify_one_chapter_without_forking(repo):
    run = course(repo, "verify", "ch02", "--jobs", "1", "--no-fork")
    assert run.returncode == 0
    assert "ch01" not in run.stdout and "2 pytest runs" in run.stdout


def test_a_test_of_two_tasks_must_fail_with_each_stubbed_alone(repo):
    tests = repo / "exercises/ch01/test_ops.py"
    tests.write_text(tests.read_text() + '''

@pytest.mark.task("ch01.1", "ch01.4")
def test_zero_whatever_add_does():
    assert ops.Counter.zero() == 0
''')
    run = course(repo, "verify", "ch01")
    assert run.returncode == 1
    # one run with every stub loaded stubs both tasks of that test, so each of them gets a
    # run of its own: ch01.1's stub alone passes the test
    assert ("FAIL  ch01.1 stubbed: a stub passes test "
            "exercises/ch01/test_ops.py::test_zero_whatever_add_does") in run.stdout
    assert "ok    ch01.4 stubbed: its 2 test(s) fail" in run.stdout
    assert "ok    ch01.3 stubbed: its 1 test(s) fail" in run.stdout
    assert "(1 chapter(s), 5 pytest runs" in run.stdout


def test_a_stub_run_that_did_not_finish_is_run_again_task_by_task(shared_repo):
    chapter, = load_chapters(shared_repo, ["ch01"])
    tests = [TestResult("t.py::one", ["ch01.1"], {"ch01.1": 3.0}),
             TestResult("t.py::two", ["ch01.2"], {"ch01.2": 2.0})]
    finished = ChapterRun(RunConfig(chapter, impl="stub"), tests=tests)
    assert _needing_own_run(chapter, finished) == []
    crashed = ChapterRun(RunConfig(chapter, impl="stub"), tests=tests,
                         problem="the test process died (SIGSEGV)")
    assert _needing_own_run(chapter, crashed) == list(chapter.tasks)


def test_coupling_reports_tests_of_other_tasks_that_a_stub_breaks(repo):
    tests = repo / "exercises/ch01/test_ops.py"
    tests.write_text(tests.read_text() + '''

@pytest.mark.task("ch01.3")
def test_bump_by_a_sum():
    assert ops.Counter().bump(ops.add(1, 2)) == 3   # ch01.1's add is the reference here


REMEMBERED = {}


@pytest.mark.task("ch01.1")
def test_add_and_remember():
    REMEMBERED["sum"] = ops.add(1, 2)


@pytest.mark.task("ch01.3")
def test_bump_by_what_another_test_left():
    assert ops.Counter().bump(REMEMBERED["sum"]) == 3
''')
    assert course(repo, "generate").returncode == 0
    course(repo, "mutants", "ch01")                            # the tests changed: re-record
    record = repo / "exercises/ch01/mutants.toml"               # (survivors: not graded here)
    record.write_text(record.read_text().replace('reason = ""', 'reason = "not this test"'))
    expect = repo / "tests/course/bad/wrong_add/expect.toml"   # it now loses ch01.3 too
    expect.write_text(expect.read_text() + "exact = false\n")
    quiet = course(repo, "verify", "ch01")
    assert quiet.returncode == 0 and "warn" not in quiet.stdout
    run = course(repo, "verify", "ch01", "--coupling")
    assert run.returncode == 0
    # one task at a time, a test that calls another task's function is not coupled to it;
    # a test that depends on what another task's test left behind is
    assert ("warn  ch01.1 stubbed: also fails tests of other tasks (1 of ch01.3); "
            "a student who skips ch01.1 loses those too") in run.stdout
    assert "ok    ch01.2 stubbed: no test of another task fails (8 ran)" in run.stdout
    assert run.stdout.count("warn") == 1
