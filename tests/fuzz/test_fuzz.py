"""The differential fuzzer (issue 8): a fixed-seed campaign, and proof that it can fail.

`make test` runs 120 generated programs with fixed seeds: none may give a
wrong output, an internal error, or raise eagerly (a grammar bug). The fuzzer itself is
tested against a compiler with a known bug put back (the generated code writing before
it reads: `PyCodegen.preload` switched off), on a minimal program of that bug.
"""

from __future__ import annotations

import pytest

from minidynamo import side_effects
from minidynamo.codegen import PyCodegen
from minidynamo.fuzz import INVALID, OK, WRONG, Program, check, regression_test, run_campaign
from minidynamo.fuzz.grammar import PRELUDE
from minidynamo.variables import ListVariable

SEEDS = [0, 1]  # 2 x PROGRAMS programs in `make test`; `make fuzz` runs 10,000
PROGRAMS = 60

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_seed_campaign_finds_no_wrong_output(seed):
    summary = run_campaign(PROGRAMS, seed)
    report = "\n".join(summary.lines() + [regression_test(each) for each in summary.failures])
    assert summary.programs == PROGRAMS, report
    assert summary.verdicts[WRONG] == summary.verdicts["internal"] == 0, report
    assert summary.verdicts[INVALID] == 0, report
    assert summary.verdicts[OK] == PROGRAMS


# `xs` is replayed first (`xs[:] = ...`); `d`'s new item is the old `xs[0]`, which must
# be read before that write
READ_AFTER_WRITE = PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    first = xs[0]
    xs.reverse()
    d['c'] = first
    x.tolist()
    return (y,)
'''


def test_a_wrong_compiler_is_caught_and_its_test_reproduces_it(monkeypatch):
    program = Program(READ_AFTER_WRITE, change="length")
    assert check(program).kind == OK
    monkeypatch.setattr(PyCodegen, "preload_sources", lambda self, sources: None)
    verdict = check(program)
    assert verdict.kind == WRONG and any("side effects" in each for each in verdict.details)
    namespace: dict = {}
    exec("from minidynamo.fuzz import Program, check\n" + regression_test(verdict), namespace)
    test = next(value for name, value in namespace.items() if name.startswith("test_fuzz_"))
    with pytest.raises(AssertionError):
        test()


def test_a_program_that_raises_eagerly_is_invalid_not_a_compiler_bug():
    program = Program(PRELUDE + "\n\ndef f(x, y, n, s, flag, xs, d, obj, mod):\n"
                      "    return xs[5]\n")
    assert check(program).kind == INVALID


def test_the_campaign_shrinks_a_failure_to_a_small_program(monkeypatch):
    """With list mutations never replayed, most programs go wrong; Hypothesis shrinks
    the first to a handful of statements (the grammar writes three at least; where the
    shrinker stops depends on which smaller programs still fail, so allow five)."""
    monkeypatch.setitem(side_effects.REPLAYS, ListVariable, lambda codegen, variable: None)
    summary = run_campaign(20, 0, max_failures=1)
    assert summary.failures, "\n".join(summary.lines())
    minimal = summary.failures[0].program.source.split("def f(", 1)[1]
    # the signature, at most five statements, the return
    assert minimal.count("\n") <= 7, minimal
    assert "xs." in minimal or "xs[" in minimal, minimal
