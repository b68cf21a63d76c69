"""Plugging, in this process: every reference swapped in, every original put back, one
task at a time or all together."""

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
    board.load(choose(chapters, "solution"))
    board.plug()
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
        board.close()
    after = originals(ops, pipeline)
    assert all(a is b for a, b in zip(before, after))
    assert namespace["add"] is before[0]


def test_stubs_raise_not_implemented_naming_the_task(toy, shared_repo):
    ops, _, chapters = toy
    board = Plugboard(shared_repo)
    board.load(choose(chapters[:1], "stub"))
    board.plug()
    try:
        with pytest.raises(NotImplementedError, match="ch01.1: Add two numbers"):
            ops.apply("add", 1, 2)
        with pytest.raises(NotImplementedError, match="ch01.4: The starting count"):
            ops.Counter.zero()
    finally:
        board.close()
    assert ops.add(1, 2) == 3


def test_stub_task_stubs_exactly_one_task_everywhere(toy, shared_repo):
    ops, pipeline, chapters = toy
    board = Plugboard(shared_repo)
    board.load(choose(chapters, "solution", stub_task="ch01.1"))
    board.plug()
    try:
        with pytest.raises(NotImplementedError):
            pipeline.total([1, 2])       # the solution of ch02.1 reaches the stubbed add
        assert ops.scaled_double(1) == 20
    finally:
        board.close()


def student_board(shared_repo, chapters, text):
    chapter = chapters[0]
    choices = [(task, ImplFile("exercises/ch01/ops.py", "toydynamo.ops", text)) for task in chapter.tasks]
    board = Plugboard(shared_repo)
    board.load(choices)
    board.plug()
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
        board.close()
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
        board.close()


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
        board.close()


def test_an_exception_at_load_time_names_the_line(toy, shared_repo):
    ops, _, chapters = toy
    board = student_board(shared_repo, chapters, "x = 1\ny = 1 / 0\n")
    try:
        assert board.errors["ch01.2"].endswith("ZeroDivisionError: division by zero (line 2)")
    finally:
        board.close()


def test_a_package_imported_from_elsewhere_is_refused(toy, tmp_path):
    _, _, chapters = toy
    with pytest.raises(PlugError, match="not from the repository"):
        Plugboard(tmp_path).load(choose(chapters[:1], "stub"))


def test_loading_twice_or_plugging_an_unknown_task_is_refused(toy, shared_repo):
    _, _, chapters = toy
    board = Plugboard(shared_repo)
    board.load(choose(chapters[:1], "solution"))
    try:
        with pytest.raises(PlugError, match="already loaded"):
            board.load(choose(chapters[:1], "solution"))
        with pytest.raises(PlugError, match="cannot plug ch02.1: not loaded"):
            board.plug(["ch02.1"])
    finally:
        board.close()


def plugged(function, module) -> bool:
    """Whether `function` is a plugged version (it runs in a loaded file's namespace)."""
    return getattr(function, "__globals__", vars(module)) is not vars(module)


def test_one_task_at_a_time_leaves_every_other_function_the_reference(toy, shared_repo):
    ops, pipeline, chapters = toy
    import toydynamo
    before = originals(ops, pipeline)
    namespace = {"add": ops.add, "table": {"zero": ops.Counter.zero}}   # a test module
    board = Plugboard(shared_repo)
    board.load(choose(chapters, "stub"))
    try:
        assert not board.active and originals(ops, pipeline) == before     # loading plugs nothing
        board.patch(namespace)
        board.plug(["ch01.1"])
        assert plugged(ops.add, ops) and toydynamo.add is ops.add is ops.HANDLERS["add"]
        assert pipeline.add is ops.add and namespace["add"] is ops.add
        assert ops.Counter().bump(2) == 2 and ops.Counter.zero() == 0     # the reference
        assert pipeline.LoudCounter().bump() == 10 and pipeline.total.__globals__ is vars(pipeline)
        board.plug(["ch01.4"])                                            # switch: only ch01.4
        assert ops.add(1, 2) == 3 and namespace["add"] is before[0]
        with pytest.raises(NotImplementedError, match="ch01.4"):
            namespace["table"]["zero"]()             # the bare function a test took, too
        assert isinstance(vars(ops.Counter)["zero"], staticmethod)
        board.plug(["ch01.4", "ch02.1"])
        with pytest.raises(NotImplementedError, match="ch02.1"):
            pipeline.total([1])
        board.unplug()
        assert originals(ops, pipeline) == before and namespace["add"] is before[0]
        assert namespace["table"]["zero"] is before[5].__func__
        board.plug(["ch02.1"])                       # loaded once, plugged again and again
        assert plugged(pipeline.total, pipeline)
    finally:
        board.close()
    assert all(a is b for a, b in zip(before, originals(ops, pipeline)))


def test_a_student_function_sees_other_tasks_only_while_they_are_plugged(toy, shared_repo):
    ops, _, chapters = toy
    text = '''
def add(a, b):
    return "student"

def scaled_double(x, *, limit=100):
    return add(x, 0)                    # another task of the same file

class Counter:
    def bump(self, by=1):
        return add(self.count, by)
    @staticmethod
    def zero():
        return 0
'''
    board = Plugboard(shared_repo)
    board.load([(task, ImplFile("exercises/ch01/ops.py", "toydynamo.ops", text))
                for task in chapters[0].tasks])
    try:
        board.plug(["ch01.2"])
        assert ops.scaled_double(4) == 4                 # the reference add, not the student's
        assert ops.Counter().bump(3) == 3
        board.plug(["ch01.1", "ch01.2"])
        assert ops.scaled_double(4) == "student" and ops.Counter().bump() == 1
        board.plug()                                     # everything: the student's own add
        assert ops.Counter().bump() == "student"
    finally:
        board.close()


def test_a_stand_in_for_a_static_method_swaps_back_cleanly(toy, shared_repo):
    ops, _, chapters = toy
    zero = vars(ops.Counter)["zero"]
    table = {"zero": ops.Counter.zero}
    board = student_board(shared_repo, chapters, "def add(a, b):\n    return a + b\n")
    try:
        board.patch(table)
        assert isinstance(vars(ops.Counter)["zero"], staticmethod)
        with pytest.raises(ExerciseError, match="defines no method Counter.zero"):
            table["zero"]()
    finally:
        board.close()
    assert vars(ops.Counter)["zero"] is zero and table["zero"] is zero.__func__
