"""The differential fuzzer (issues 8 and 14): a fixed-seed campaign, and proof that it can fail.

`make test` runs 120 generated programs with fixed seeds: none may give a
wrong output, an internal error, or raise eagerly (a grammar bug). The fuzzer itself is
tested against compilers with a known bug put back, each on a minimal program of it:
the generated code writing before it reads (`PyCodegen.preload` switched off), a
cache entry reused after the global it read changed (no EQUALS_MATCH guard on
globals), a global list's append never replayed. Each program is called four times,
with module state changed between calls; what it raises, the module state after each
call and the calls that compiled (its compile pattern) are compared too.
"""

from __future__ import annotations

import pytest

from minidynamo import guards, side_effects
from minidynamo.codegen import PyCodegen
from minidynamo.fuzz import (INVALID, OK, WRONG, Program, Summary, Verdict, check,
                             regression_test, run_campaign)
from minidynamo.fuzz import grammar
from minidynamo.fuzz.program import PRELUDE
from minidynamo.fuzz.runner import REGRESSION_TEST_IMPORTS, ModuleState, differences, run
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
    assert_regression_test_fails(verdict)


def assert_regression_test_fails(verdict: Verdict) -> None:
    namespace: dict = {}
    exec(REGRESSION_TEST_IMPORTS + regression_test(verdict), namespace)
    test = next(value for name, value in namespace.items() if name.startswith("test_fuzz_"))
    with pytest.raises(AssertionError):
        test()


# OFFSET changes before the second call: the entry of the first call read it
READS_A_GLOBAL = PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    return (x * OFFSET,)
'''


def test_a_stale_cache_entry_is_caught_on_the_call_after_the_change(monkeypatch):
    program = Program(READS_A_GLOBAL, change="shape", mutations=((1, "OFFSET = -1.0"),))
    verdict = check(program)
    assert verdict.kind == OK, verdict.details
    assert verdict.pattern == verdict.torch_pattern == (1, 1, 1, 0)  # the new size: one more
    equals_match = guards.GUARD_KINDS["EQUALS_MATCH"]

    def no_guards_on_globals(guard_set, source, value):
        if not source.name().startswith("G["):
            equals_match(guard_set, source, value)

    monkeypatch.setitem(guards.GUARD_KINDS, "EQUALS_MATCH", no_guards_on_globals)
    verdict = check(program)
    assert verdict.kind == WRONG, verdict.details
    assert verdict.details[0].startswith("[output] call 1:"), verdict.details
    assert verdict.pattern[1] == 0  # the first entry was reused
    assert "mutations=((1, 'OFFSET = -1.0'),)" in regression_test(verdict)
    assert_regression_test_fails(verdict)


APPENDS_TO_A_GLOBAL = PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    EVENTS.append(x.sum())
    with Recorder('r'):
        t = x + 1
    return (t,)
'''


def test_the_module_state_after_each_call_is_compared(monkeypatch):
    program = Program(APPENDS_TO_A_GLOBAL, mutations=((2, "EVENTS = []"),))
    assert check(program).kind == OK
    monkeypatch.setitem(side_effects.REPLAYS, ListVariable, lambda codegen, variable: None)
    verdict = check(program)
    assert verdict.kind == WRONG
    assert any(each.startswith("[module state] call 0: minidynamo: module['EVENTS']")
               for each in verdict.details), verdict.details


ESCAPES = PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    try:
        EVENTS.append('try')
        d['missing']
    except KeyError as error:
        EVENTS.append(type(error).__name__)
    finally:
        EVENTS.append('finally')
    if n > 2:
        raise Escaped(f'n is {n}')
    return (x + 1,)
'''


def test_an_escaping_exception_is_an_outcome_compared_with_its_message():
    program = Program(ESCAPES, change="int")  # n is 3 in the third call only
    verdict = check(program)
    assert verdict.kind == OK, verdict.details
    namespace = program.namespace("<escapes>")
    initial = ModuleState.of(namespace)
    eager = run(program, namespace, initial, "eager")
    assert [repr(outcome.error) for outcome in eager.result.outcomes] == [
        "None", "None", "Escaped('n is 3')", "None"]
    assert eager.state_after[3]["EVENTS"][-3:] == ["try", "KeyError", "finally"]
    other = run(program, namespace, initial, "other")
    assert differences(eager, other) == []
    other.result.outcomes[2].error = namespace["Escaped"]("n is 4")
    assert differences(eager, other) == [
        "[output] call 2: other raised Escaped('n is 4'), eager Escaped('n is 3')"]


def test_the_summary_counts_compile_patterns_that_differ_from_torch_compile():
    summary = Summary()
    program = Program(READS_A_GLOBAL)
    summary.record(Verdict(program, OK, [], pattern=(1, 1, 0, 0), torch_pattern=(1, 2, 0, 0),
                           torch_graphs=1, graphs=1))
    summary.record(Verdict(program, OK, [], pattern=(1, 0, 0, 0), torch_pattern=(1, 1, 0, 0),
                           torch_graphs=1, graphs=1))
    assert summary.pattern_agreement == 0.5  # counts may differ: which calls compiled
    assert summary.pattern_kinds == {"minidynamo (1, 0, 0, 0), torch.compile (1, 1, 0, 0)": 1}
    assert "pattern agreement:     50.0% (target 95%)" in summary.lines()


def test_a_program_that_raises_eagerly_is_invalid_not_a_compiler_bug():
    program = Program(PRELUDE + "\n\ndef f(x, y, n, s, flag, xs, d, obj, mod):\n"
                      "    return xs[5]\n")
    assert check(program).kind == INVALID


def test_the_campaign_shrinks_a_failure_to_a_small_program(monkeypatch):
    """With list mutations never replayed, most programs go wrong; Hypothesis shrinks
    the first to a handful of statements (the grammar writes three at least; where the
    shrinker stops depends on which smaller programs still fail, so allow five, a block
    counting as one). Between calls nothing changes: the compiler bugs that mutations
    find (the xfails of test_regressions.py) would be shrunk instead."""
    monkeypatch.setitem(side_effects.REPLAYS, ListVariable, lambda codegen, variable: None)
    monkeypatch.setattr(grammar, "MUTATIONS", ("OFFSET = 0.5",))  # OFFSET's own value
    summary = run_campaign(20, 0, max_failures=1)
    assert summary.failures, "\n".join(summary.lines())
    minimal = summary.failures[0].program.source.split("def f(", 1)[1]
    statements = [line for line in minimal.splitlines()[1:-1] if not line.startswith(" " * 5)]
    assert len(statements) <= 5, minimal
    assert "xs." in minimal or "xs[" in minimal or "EVENTS." in minimal, minimal
