"""Programs of chapter 8's graded tests: raised, caught, re-raised and `with`-blocks.

Each is compiled by minidynamo (your functions plugged in) and by torch.compile, and
run eagerly; `check` compares the three (graphs, values, the exception that reaches
the caller: its type and message, side effects) and checks the symbolic stack depth
against CPython's at every instruction (the stack oracle).
"""

from __future__ import annotations

import contextlib

import torch

from minidynamo.stack_oracle import assert_stack_depths_match_cpython
from minidynamo.testing import compare_with_eager, compare_with_torch


def check(fn, *args, graphs: int | None = None):
    """minidynamo == torch.compile == eager on `fn(*args)`; returns the comparison."""
    comparison = compare_with_torch(fn, *args)
    assert comparison.ok, comparison.report()
    eager = comparison.eager.outcomes[0]
    mine = comparison.minidynamo.outcomes[0]
    if eager.error is not None:
        assert (type(mine.error), str(mine.error)) == (type(eager.error), str(eager.error))
    if graphs is not None:
        assert comparison.minidynamo.graph_count == graphs
    assert_stack_depths_match_cpython(fn, *args)
    return comparison


def check_beyond_torch(fn, *args):
    """A program torch.compile 2.13 runs eagerly and minidynamo captures: eager's values,
    at least one graph, CPython's stack depths."""
    comparison = compare_with_torch(fn, *args)
    assert comparison.torch.graph_count == 0
    assert comparison.minidynamo.graph_count >= 1
    assert not compare_with_eager(comparison.eager, comparison.minidynamo)
    assert_stack_depths_match_cpython(fn, *args)
    return comparison


def x3():
    return torch.tensor([1.0, -2.0, 3.0])


class AppError(Exception):
    pass


class NotFound(AppError):
    pass


## Unwinding (ch08.1) #####################################################################


def context_of_a_failed_lookup(x):
    """`{}['k']` fails inside an `except` block: CPython gives the new KeyError the
    ValueError being handled as its `__context__`, as a `raise` there would."""
    try:
        try:
            raise ValueError("first")
        except ValueError:
            {}["k"]
    except KeyError as error:
        return x + 1, repr(error.__context__)


def caught_with_values_on_the_stack(x):
    try:
        pair = (x, x + 1, {"a": 1}["b"])  # two values on the stack when KeyError is raised
    except KeyError:
        pair = (x, x - 1, 0)
    return pair[0] * pair[1] + pair[2]


def caught_inside_call_arguments(x):
    try:
        y = torch.add(x, [1, 2][5])
    except IndexError:
        y = x * 2
    return y


def except_as_cleanup(x):
    try:
        raise ValueError("v", 2)
    except ValueError as e:
        x = x + e.args[1]
    return x


def nested_try_inner_handler(x):
    try:
        try:
            raise KeyError("k")
        except KeyError:
            x = x + 1
        x = x * 2
    except KeyError:
        x = x - 100
    return x


def helper_raises(v):
    raise AppError("from helper", v)


def caught_from_inlined_helper(x):
    try:
        helper_raises(3)
    except AppError as e:
        return x + e.args[1]


def helper_with_finally(log):
    try:
        raise KeyError("inner")
    finally:
        log.append("finally")


def finally_on_the_way_out_of_a_helper(x):
    log = []
    try:
        helper_with_finally(log)
    except KeyError:
        log.append("caught")
    return x + len(log), log


def finally_after_a_caught_exception(x):
    log = []
    try:
        raise ValueError
    except ValueError:
        log.append(1)
    finally:
        log.append(2)
    return x + sum(log)


def uncaught_after_a_graph_op(x):
    y = x + 1
    return y * {"a": 2}["missing"]


def loop_of_raises(x):
    total = x
    for i in range(3):
        try:
            if i != 1:
                raise ValueError(i)
            total = total * 2
        except ValueError as e:
            total = total + e.args[0]
    return total


## Matching (ch08.2) ########################################################################


def except_tuple(x):
    try:
        raise IndexError("i")
    except (KeyError, IndexError):
        return x + 1


def except_base_class(x):
    try:
        raise NotFound("n")
    except AppError:
        return x + 2


def except_wrong_type_goes_outward(x):
    try:
        try:
            raise KeyError("k")
        except (ValueError, IndexError):
            return x
    except KeyError:
        return x + 3


def except_order_first_match(x):
    try:
        raise NotFound("n")
    except ValueError:
        x = x + 100
    except NotFound:
        x = x + 1
    except AppError:
        x = x + 10
    return x


def except_non_exception_class(x):
    try:
        try:
            raise KeyError("k")
        except int:  # CPython: TypeError at the match
            return x
    except TypeError:
        return x + 4


def except_user_subclass_not_matching_sibling(x):
    class_ = AppError
    try:
        raise class_("a")
    except NotFound:
        return x + 100
    except Exception:
        return x + 5


## Raising (ch08.3) ##########################################################################


def raise_instance(x):
    try:
        raise ValueError("bad", 3)
    except ValueError as e:
        return x + e.args[1]


def raise_class(x):
    try:
        raise KeyError
    except KeyError as e:
        return x + len(e.args)


def bare_reraise(x):
    try:
        try:
            raise ValueError("v")
        except ValueError:
            x = x + 1
            raise
    except ValueError as e:
        return x + len(e.args[0])


def raise_from_cause(x):
    try:
        try:
            raise KeyError(1)
        except KeyError as e:
            raise ValueError(2) from e
    except ValueError as e2:
        return x + e2.args[0] + e2.__cause__.args[0], e2.__suppress_context__


def raise_from_class_cause(x):
    try:
        raise ValueError(1) from KeyError
    except ValueError as e:
        return x + e.args[0], type(e.__cause__) is KeyError


def raise_from_none(x):
    try:
        try:
            raise KeyError(1)
        except KeyError:
            raise ValueError(2) from None
    except ValueError as e:
        return x + e.args[0], e.__cause__ is None, e.__suppress_context__


def raise_sets_context(x):
    try:
        try:
            raise KeyError(1)
        except KeyError:
            raise ValueError(2)
    except ValueError as e:
        return x + e.__context__.args[0], e.__cause__ is None, e.__suppress_context__


def raise_non_exception(x):
    try:
        raise 5
    except TypeError:
        return x + 1


def bare_raise_without_exception(x):
    try:
        raise
    except RuntimeError as e:
        return x + len(e.args[0])


def uncaught_raise(x):
    y = x * 2
    raise AppError("left the frame", y.shape[0])


## The exception being handled (ch08.4) #######################################################


def reraise_outer_after_inner_handled(x):
    try:
        try:
            raise KeyError("outer")
        except KeyError:
            try:
                raise ValueError("inner")
            except ValueError:
                x = x + 1
            raise  # the outer KeyError again: the inner one was restored away
    except KeyError as e:
        return x + len(e.args[0])


def context_is_the_handled_exception(x):
    try:
        try:
            raise KeyError("a")
        except KeyError:
            try:
                raise IndexError("b")
            except IndexError:
                pass
            raise ValueError("c")
    except ValueError as e:
        return x + len(e.__context__.args[0]), type(e.__context__) is KeyError


def reraise_in_helper():
    raise


def bare_raise_in_helper(x):
    try:
        try:
            raise KeyError("k")
        except KeyError:
            reraise_in_helper()
    except KeyError as e:
        return x + len(e.args[0])


def handled_twice_in_a_row(x):
    for kind in (KeyError, ValueError):
        try:
            raise kind("k")
        except (KeyError, ValueError):
            x = x + 1
    try:
        raise
    except RuntimeError:
        x = x * 2
    return x


## with blocks (ch08.5, ch08.6) ###############################################################


class Recorder:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return len(self.log)

    def __exit__(self, exc_type, exc, tb):
        # a raised exception has a traceback: `tb is None` only when nothing was raised
        self.log.append("exit" if exc_type is None
                        else f"exit {exc_type.__name__} {exc.args} traceback={tb is not None}")
        return False


class Suppress:
    def __init__(self, *kinds):
        self.kinds = kinds

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return exc_type is not None and issubclass(exc_type, self.kinds)


class Scale:
    def __init__(self, factor):
        self.factor = factor

    def __enter__(self):
        return self.factor

    def __exit__(self, *exc_info):
        return None


@contextlib.contextmanager
def logged(log):
    log.append("start")
    try:
        yield len(log)
    finally:
        log.append("end")


@contextlib.contextmanager
def swallowing(kind):
    try:
        yield
    except kind:
        pass


def with_user_manager(x):
    log = []
    with Recorder(log) as n:
        x = x + n
    return x, log


def with_manager_sees_exception(x):
    log = []
    try:
        with Recorder(log):
            raise KeyError("k")
    except KeyError:
        log.append("caught")
    return x + len(log), log


def with_suppressing_manager(x):
    with Suppress(ValueError):
        x = x + 1
        raise ValueError
    return x * 2


def with_not_suppressing_other(x):
    try:
        with Suppress(ValueError):
            raise KeyError("k")
    except KeyError:
        x = x - 1
    return x


def with_two_managers(x):
    log = []
    with Recorder(log) as a, Scale(2) as b:
        x = x * b + a
    return x, log


def with_contextmanager(x):
    log = []
    with logged(log) as n:
        x = x + n
    return x, log


def with_contextmanager_exception(x):
    log = []
    try:
        with logged(log):
            raise ValueError("v")
    except ValueError:
        log.append("caught")
    return x + len(log), log


def with_contextmanager_swallowing(x):
    with swallowing(KeyError):
        x = x + 1
        raise KeyError
    return x * 3


def with_no_grad_still_graph_state(x):
    with torch.no_grad():
        y = x * 2
    return y, y.requires_grad


def with_non_manager(x):
    try:
        with 5:
            pass
    except TypeError as e:
        return x + len(e.args)
    return x


class FailingEnter:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        raise AppError("cannot enter")

    def __exit__(self, *exc_info):
        self.log.append("exit")  # never runs: the block was not entered
        return True


def with_enter_raises(x):
    log = []
    try:
        with FailingEnter(log):
            x = x + 100
    except AppError:
        log.append("caught")
    return x + 1, log


def with_return_inside(x):
    log = []
    with Recorder(log):
        return x + 1, log


def bare_raise_reraises_the_innermost(x):
    try:
        try:
            raise KeyError("outer")
        except KeyError:
            try:
                raise ValueError("inner")
            except ValueError:
                raise  # the ValueError: the innermost exception being handled
    except ValueError as e:
        return x + len(e.args[0])


class Lazy:
    @property
    def value(self):
        try:
            raise AttributeError("not computed")
        except AttributeError:
            raise  # re-raised: hasattr must see an AttributeError


def hasattr_through_a_reraising_property(x):
    return x + hasattr(Lazy(), "value") + 10 * getattr(Lazy(), "value", 2)


class EnterOnly:
    def __enter__(self):
        return 1


class ExitOnly:
    def __exit__(self, *exc_info):
        return False


def with_half_a_manager(x):
    messages = []
    for manager in (EnterOnly(), ExitOnly()):
        try:
            with manager:
                x = x + 100
        except TypeError as e:
            messages.append(e.args[0])
    return x + len(messages), messages
