"""Dynamic sizes, ints and floats that programs written to probe minidynamo found
computed wrong, each called with changing values (so that the symbol is made on the
second call) and compared with eager Python by `repr`, which tells `0.0` from `-0.0`,
`3` from `3.0` and `nan` from a number:

- a float the symbolic algebra made a number (`s * 0.0`, `s - s`, `-x.shape[0] * 0.0`:
  0 for sympy) was baked into the code; IEEE says NaN for `s = inf` and -0.0 for a
  negative size: the graph computes it now, as torch.compile's does;
- `max(n, 2.5)` with a dynamic int `n` is `n` itself (an int) when `n >= 2.5`; it came
  back a float from `torch.sym_max` (torch.compile too);
- `(n > 3) is True` for a dynamic `n` (a SymBool) was always False (torch.compile too);
- `s is s` for a size tuple or a tuple passed in was False;
- a float argument compiled as `0.0` matched `-0.0` (and `x * s` kept the first sign:
  torch.compile too): the guard compares the sign of a zero.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo

INF = float("inf")


def times_zero(x, s):
    return x + s * 0.0


def minus_itself(x, s):
    return s - s, x + 1


def over_negative_zero(x):
    return torch.ones(1) / (-x.shape[0] * 0.0)


def max_of_int_and_float(x, n):
    return x + 1, max(n, 2.5), type(max(n, 3.0)).__name__, min(n, 3.5)


def symbolic_bool_is_true(x, n):
    return x + 1, (n > 3) is True, (n > 3) is False


def size_is_itself(x):
    s = x.shape
    return x + 1, s is s


def tuple_is_itself(x, t):
    return x + 1, t is t


def times_signed_zero(x, s):
    return x * s, repr(s)


CASES = [
    (times_zero, [(torch.ones(2), 1.0), (torch.ones(2), 2.0), (torch.ones(2), INF),
                  (torch.ones(2), -3.0)]),
    (minus_itself, [(torch.ones(2), 1.0), (torch.ones(2), 2.0), (torch.ones(2), INF)]),
    (over_negative_zero, [(torch.ones(2),), (torch.ones(3),), (torch.ones(4),)]),
    (max_of_int_and_float, [(torch.ones(2), 2), (torch.ones(2), 3), (torch.ones(2), 5),
                            (torch.ones(2), 1)]),
    (symbolic_bool_is_true, [(torch.ones(2), 2), (torch.ones(2), 3), (torch.ones(2), 5)]),
    (size_is_itself, [(torch.ones(2),), (torch.ones(2),), (torch.ones(3),)]),
    (tuple_is_itself, [(torch.ones(2), (1, 2)), (torch.ones(2), (1, 2))]),
    (times_signed_zero, [(torch.ones(1), 0.0), (torch.ones(1), -0.0), (torch.ones(1), 0.0)]),
]


def shown(value):
    if isinstance(value, torch.Tensor):
        return repr(value.tolist())
    if isinstance(value, tuple):
        return tuple(shown(item) for item in value)
    return repr(value)


@pytest.mark.parametrize("fn,calls", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_values_as_eager_computes_them(fn, calls):
    minidynamo.reset()
    compiled = minidynamo.compile(fn, backend="eager")
    expected = [shown(fn(*args)) for args in calls]
    assert [shown(compiled(*args)) for args in calls] == expected


# -- found by a probe of dynamic shapes across recompiles (aot_eager and inductor) --------
#
# - `torch.tensor([x.size(0), 2])` made the symbol a number (torch.tensor's FakeTensor
#   run reads it): with the size marked dynamic, a ConstraintViolationError; without, a
#   recompile for every size. It is recorded as torch's `torch._refs.tensor` now, as
#   TorchDynamo records it, and the size stays a symbol;
# - a recompile that traced no operation (`if x.shape[0] < 2: return x`, taken once)
#   skipped the frame for good: the sizes that the first entry covers ran eagerly from
#   then on. Only a frame's first compile skips it now; a recompile gets an entry.


def compile_patterns(fn, calls, backend="eager", dynamic=None):
    """The graphs compiled after each call of `calls` (argument tuples), by torch.compile
    and by minidynamo (strict), each output checked against eager's."""
    from torch._dynamo.testing import CompileCounterWithBackend

    from minidynamo import config
    from minidynamo.testing import assert_same_value

    patterns = {}
    for name, compile_fn in (("torch", torch.compile), ("minidynamo", minidynamo.compile)):
        torch._dynamo.reset()
        minidynamo.reset()
        counter = CompileCounterWithBackend(backend)
        compiled, pattern = compile_fn(fn, backend=counter, dynamic=dynamic), []
        with config.patch(strict=name == "minidynamo"):
            for args in calls:
                assert_same_value(compiled(*args), fn(*args))
                pattern.append(counter.frame_count)
        patterns[name] = pattern
    return patterns


def tensor_of_sizes(x):
    return torch.tensor([x.size(0), 2]) + 1


def tensor_of_a_ratio(x):
    return x * torch.tensor(x.shape[0] / 3)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("fn", [tensor_of_sizes, tensor_of_a_ratio])
def test_a_tensor_made_of_sizes_keeps_them_symbols(fn, backend):
    patterns = compile_patterns(fn, [(torch.randn(n),) for n in (3, 5, 8, 4)], backend)
    assert patterns["minidynamo"] == patterns["torch"] == [1, 2, 2, 2]


def test_a_marked_size_in_a_tensor_stays_dynamic():
    minidynamo.reset()
    compiled = minidynamo.compile(tensor_of_sizes, backend="aot_eager")
    x = torch.randn(5)
    minidynamo.mark_dynamic(x, 0)
    for n, first in ((5, x), (2, None), (9, None)):
        x = first if first is not None else torch.randn(n)
        assert torch.equal(compiled(x), tensor_of_sizes(x))


def small_returned_as_is(x):
    if x.shape[0] < 2:
        return x
    return x * 2


def test_a_recompile_without_operations_does_not_skip_the_frame():
    from minidynamo import cache
    from minidynamo.convert_frame import counters

    minidynamo.reset()
    compiled = minidynamo.compile(small_returned_as_is, backend="eager", dynamic=True)
    for n in (4, 1):
        compiled(torch.randn(n, 3))
    hits = counters["cache_hits"]
    x = torch.randn(7, 3)
    assert torch.equal(compiled(x), x * 2)
    assert not cache.lookup(small_returned_as_is.__code__).skip
    assert counters["cache_hits"] == hits + 1  # the first entry, dynamic, holds n = 7


# - `x.shape == y.shape`, `x.shape == (4,)`, `x.shape != [4]` broke the graph with the
#   sizes symbols (a torch.Size compared only with another of its own tracker class, and
#   `is` asked of two symbols): the frame ran eagerly where torch.compile compiles. A
#   size compares as a tuple now, a list never equals it, and two ints are only compared.


def compares_shapes(x, y):
    out = x * 2
    if x.shape == y.shape:
        out = out + 1
    if x.shape == (4,):
        out = out + 10
    if x.shape != [4]:
        out = out + 100
    return out


@pytest.mark.parametrize("dynamic", [None, True])
def test_sizes_that_are_symbols_compare_as_tuples(dynamic):
    calls = [(torch.randn(n), torch.randn(m)) for n, m in ((4, 4), (5, 5), (4, 3), (8, 8), (4, 4))]
    patterns = compile_patterns(compares_shapes, calls, dynamic=dynamic)
    assert patterns["minidynamo"] == patterns["torch"]


# - Python asked of a size that is a symbol, where torch.compile specializes it or
#   compares it, broke the graph: `n in (1, 2)` (compared item by item now, guarded
#   `n != 1`, `n != 2`), `n.bit_length()`, `f"{n}"`, `{n: ...}` (the number, specialized).


def in_a_tuple(x):
    n = x.shape[0]
    return x + (1 if n in (1, 2) else 0)


def bit_length_of(x):
    return x + x.shape[0].bit_length()


def formatted(x):
    return x + 1, f"n={x.shape[0]}"


def keyed_by_size(x):
    return {x.shape[0]: x + 1}


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("fn", [in_a_tuple, bit_length_of, formatted, keyed_by_size])
def test_python_asked_of_a_size_symbol_compiles_as_on_torch(fn, dynamic):
    patterns = compile_patterns(fn, [(torch.randn(n),) for n in (3, 5, 8, 4)], dynamic=dynamic)
    assert patterns["minidynamo"] == patterns["torch"]
