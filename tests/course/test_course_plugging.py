"""Plugging, in this process: every reference swapped in, every original put back."""

import importlib
import sys

import pytest

from course.manifest import load_chapters
from course.plugging import ExerciseError, ImplFile, Plugboard, PlugError, choose


@pytest.fixture
def toy(shared_repo):
    """The fixture's package, imported from the shared copy, and its chapters."""
    sys.path.insert(0, str(shared_repo))
    try:
        ops = importlib.import_module("toydynamo.ops")
        pipeline = importlib.import_module("toydynamo.pipeline")
        yield ops, pipeline, load_chapters(shared_repo)
    finally:
        sys.path.remove(str(shared_repo))


def originals(ops, pipeline):
    import toydynamo
    return [ops.add, toydynamo.add, ops.HANDLERS["add"], pipeline.add, vars(ops.Counter)["bump"],
            vars(ops.Counter)["zero"], ops.scaled_double, vars(pipeline.LoudCounter)["bump"]]


def test_solution_is_swapped_into_every_reference_and_taken_out_again(toy, shared_repo):
    ops, pipeline, chapters = toy
    import toydynamo
    before = originals(ops, pipeline)
    namespace = {"add": ops.add}          # a test module that imported add before plugging
    board = Plugboard(shared_repo)
    board.plug(choose(chapters, "solution"))
    try:
        board.patch(namespace)
        plugged = ops.add
        assert plugged is not before[0] and plugged.__globals__ is not vars(ops)
        assert toydynamo.add is plugged and ops.HANDLERS["add"] is plugged
        assert pipeline.add is plugged and namespace["add"] is plugged
        assert isinstance(vars(ops.Counter)["zero"], staticmethod)
        assert ops.Counter.zero() == 0 and ops.apply("add", 2, 3) == 5
        assert pipeline.LoudCounter().bump(2) == 20   # super() inside the plugged method
        assert board.sources["ch01.1"] == "solutions/ch01/ops.py"
    finally:
        board.unplug()
    after = originals(ops, pipeline)
    assert all(a is b for a, b in zip(before, after))
    assert namespace["add"] is before[0]


def test_stubs_raise_not_implemented_naming_the_task(toy, shared_repo):
    ops, _, chapters = toy
    board = Plugboard(shared_repo)
    board.plug(choose(chapters[:1], "stub"))
    try:
        with pytest.raises(NotImplementedError, match="ch01.1: Add two numbers"):
            ops.apply("add", 1, 2)
        with pytest.raises(NotImplementedError, match="ch01.4: The starting count"):
            ops.Counter.zero()
    finally:
        board.unplug()
    assert ops.add(1, 2) == 3


def test_stub_task_stubs_exactly_one_task_everywhere(toy, shared_repo):
    ops, pipeline, chapters = toy
    board = Plugboard(shared_repo)
    board.plug(choose(chapters, "solution", stub_task="ch01.1"))
    try:
        with pytest.raises(NotImplementedError):
            pipeline.total([1, 2])       # the solution of ch02.1 reaches the stubbed add
        assert ops.scaled_double(1) == 20
    finally:
        board.unplug()


def student_board(shared_repo, chapters, text):
    chapter = chapters[0]
    choices = [(task, ImplFile("exercises/ch01/ops.py", "toydynamo.ops", text)) for task in chapter.tasks]
    board = Plugboard(shared_repo)
    board.plug(choices)
    return board


def test_student_helpers_and_package_globals_work(toy, shared_repo):
    ops, _, chapters = toy
    text = '''
def _helper(a, b):
    return operator.add(a, b)           # a name the package module imported

def add(a, b):
    return _helper(a, b)

def scaled_double(x, *, limit=100):
    return clamp(SCALE * _double(x), limit)

class Counter:
    def _step(self, by):                # a helper method, new to the class
        self.count += by
    def bump(self, by=1):
        self._step(by)
        return self.count
    @staticmethod
    def zero():
        return Counter.__name__ and 0   # the name is the real class again
'''
    board = student_board(shared_repo, chapters, text)
    try:
        assert ops.add(2, 2) == 4 and ops.scaled_double(3) == 60
        counter = ops.Counter()
        assert counter.bump(3) == 3 and ops.Counter.zero() == 0
        assert hasattr(ops.Counter, "_step")
    finally:
        board.unplug()
    assert not hasattr(ops.Counter, "_step")


def test_a_broken_file_costs_only_its_tasks(toy, shared_repo):
    ops, _, chapters = toy
    board = student_board(shared_repo, chapters, "def add(a, b):\n    return a +\n")
    try:
        with pytest.raises(ExerciseError, match=r"ch01.1 could not be loaded: exercises/ch01/ops.py: "
                                                r"SyntaxError: .* \(line 2\)"):
            ops.add(1, 1)
        assert "could not be loaded" in board.errors["ch01.3"]
    finally:
        board.unplug()


def test_a_missing_function_gets_a_stand_in_not_the_reference(toy, shared_repo):
    ops, _, chapters = toy
    text = "from toydynamo.ops import add   # the reference, smuggled in\n"
    board = student_board(shared_repo, chapters, text)
    try:
        with pytest.raises(ExerciseError, match="ch01.1 is missing: exercises/ch01/ops.py defines "
                                                "no function add"):
            ops.add(1, 1)
        with pytest.raises(ExerciseError, match="defines no method Counter.bump"):
            ops.Counter().bump()
    finally:
        board.unplug()


def test_an_exception_at_load_time_names_the_line(toy, shared_repo):
    ops, _, chapters = toy
    board = student_board(shared_repo, chapters, "x = 1\ny = 1 / 0\n")
    try:
        assert board.errors["ch01.2"].endswith("ZeroDivisionError: division by zero (line 2)")
    finally:
        board.unplug()


def test_a_package_imported_from_elsewhere_is_refused(toy, tmp_path):
    _, _, chapters = toy
    with pytest.raises(PlugError, match="not from the repository"):
        Plugboard(tmp_path).plug(choose(chapters[:1], "stub"))


def test_plugging_twice_is_refused(toy, shared_repo):
    _, _, chapters = toy
    board = Plugboard(shared_repo)
    board.plug(choose(chapters, "solution"))
    try:
        with pytest.raises(PlugError, match="already plugged"):
            board.plug(choose(chapters, "solution"))
    finally:
        board.unplug()
