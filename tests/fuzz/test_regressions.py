"""Minimal programs the fuzzer found, as it printed them (issues 8 and 14).

The first ones were wrong outputs before the generated code read everything before
writing (chapter 7, "Read everything, then write"); the break-related ones are also in
the break corpus (`tests/corpus/graph_breaks.py`, last section). A compiler bug not
fixed yet is a strict xfail, so that it starts failing, as a reminder to drop its mark,
the day its bug is fixed. The last ones are compile patterns (issue 14): each program
must compile in the same calls, with the same graph counts, as torch.compile.
"""

from minidynamo.fuzz import Program, check
from minidynamo.fuzz.program import PRELUDE


# [side effects] minidynamo: args[7].__dict__['w']: tensors differ
# (no break: the return path replayed `xs[:] = ...` before it read `xs[1]` for `obj.w`)
def test_fuzz_855270a6ed():
    program = Program(PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    x = x
    xs.reverse()
    obj.w = xs[0]
    return (x,)
''', change='shape')
    verdict = check(program)
    assert not verdict.failed, verdict.details


# [side effects] minidynamo: args[5][0]: tensors differ (found unshrunk, kept as found)
def test_fuzz_38862b9f01():
    program = Program(PRELUDE + '''

def helper1(u, w, m=2):
    u.tolist()
    r = torch.where(w > 0, torch.relu(u), torch.relu(w))
    return r

def f(x, y, n, s, flag, xs, d, obj, mod):
    x = xs[-2]
    xs.reverse()
    if flag:
        xs[0] = obj.w
        obj.w = xs[-2]
    t2 = helper1(d['b'], torch.relu(d['a']))
    b3 = bool((y > 0).any())
    xs[0] = obj.w
    t4 = d['b']
    with torch.no_grad():
        b5 = obj.k > 1
        obj.w = (t2 + (y - 0.5))
    return (t2, t4, obj.w,)
''', change='dtype')
    verdict = check(program)
    assert not verdict.failed, verdict.details


# [output] call 3: minidynamo result[0]: tensors differ (the entry compiled for size 4,
# where `size()[0]` is a symbol, unrolled the loop four times and does not guard the
# size: it is reused for size 3)
def test_fuzz_f428c6b510():
    program = Program(PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    c1 = 0
    while c1 < 1:
        t2 = x
        c1 += 1
    t3 = x
    c4 = 0
    while c4 < 1:
        t5 = x
        c4 += 1
    for k6 in x:
        x = (x * n)
    return (x,)
''', change='shape')
    verdict = check(program)
    assert not verdict.failed, verdict.details


# [output] call 3: minidynamo result[0]: tensors differ (`obj.scaled`, a property, is
# read without a guard on the property object of `type(obj)`: replaced, the old getter's
# graph is reused)
def test_fuzz_680309924a():
    program = Program(PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    t1 = x
    t2 = x
    t3 = x
    return (obj.scaled,)
''', change='shape', mutations=((3, 'Obj.scaled = Obj.tripled'),))
    verdict = check(program)
    assert not verdict.failed, verdict.details


# [module state] call 1: minidynamo: module['EVENTS'][0][0]: expected 'ENTER', got 'enter'
# (`Recorder.__enter__` was inlined without a guard on the function the class holds:
# replaced, the old one's side effects were replayed. An object made while tracing now
# keeps where its class was read (`class_source`, `user_defined.type_source`), so the
# guard reads `G['Recorder'].__enter__`; torch.compile 2.13 is still wrong here.
# Written by hand from the fuzzer's parts: EVENTS emptied in the same call, or the
# length guard on EVENTS makes a new entry and hides it)
def test_replaced_enter_of_a_context_manager():
    program = Program(PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    with Recorder('r1'):
        t = x + 1
    return (t,)
''', mutations=((1, 'EVENTS = []'), (1, 'Recorder.__enter__ = Recorder.enter_loudly')))
    verdict = check(program)
    assert not verdict.failed, verdict.details


# Compile patterns (issue 14): where minidynamo compiled in other calls than
# torch.compile; each minimal program here now compiles exactly as torch.compile does.

def assert_same_compile_pattern(program):
    verdict = check(program)
    assert not verdict.failed, verdict.details
    assert verdict.torch_pattern is not None, "torch.compile disagrees with eager"
    assert verdict.pattern == verdict.torch_pattern, (verdict.pattern, verdict.torch_pattern)


# minidynamo (0, 0, 0, 0), torch.compile (2, 0, 0, 0): the break in `try` runs `f`
# eagerly, and torch compiles the frames it calls, `mod`'s forward and the lambda, as
# frames of their own (the eager frame's calls of locals and of new functions were
# not routed through `compile_frame`, only those of globals and methods)
def test_a_frame_run_eagerly_has_its_lambda_and_module_compiled():
    assert_same_compile_pattern(Program(PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    try:
        EVENTS.append('try1')
        flag = bool((x > 0).any())
        lookup(d, 'missing')
    except (KeyError, ValueError) as error1:
        EVENTS.append('except1')
        t3 = mod(torch.abs(x))
    def inner2():
        return y * 2
    y = inner2()
    t4 = (lambda: x * 2)()
    return (t4,)
''', change='bool'))


# minidynamo (2, 0, 0, 0), torch.compile (2, 1, 0, 0): `.item()`'s float reaches the
# resume function as `___stack0` and is returned before a tensor; torch's codegen asks
# the returned tuple whether it is a constant, which reads (and guards) the float, so a
# new value recompiles once (then the float is a symbol)
def test_a_float_returned_before_a_tensor_is_guarded_as_torch_guards_it():
    assert_same_compile_pattern(Program(PRELUDE + '''

def f(x, y, n, s, flag, xs, d, obj, mod):
    v3 = y.sum().item()
    return (v3, torch.sin(x),)
''', change='bool'))


# [side effects] calls 0-2: minidynamo: args[5][0]: tensors differ
# (the list iterators copied the list at iter(): the inner loop never saw its
# reverse(), the outer one never saw `xs[0] = k2`; they hold the list now)
def test_fuzz_5d2660a377():
    program = Program(PRELUDE + '''\


def f(x, y, n, s, flag, xs, d, obj, mod):
    t1 = x
    obj.w = xs[0]
    for k2 in xs:
        xs[0] = x
        t3 = (x * n)
        for k4 in xs:
            xs.reverse()
            xs[0] = k2
    return (x,)
''', change='shape')
    verdict = check(program)
    assert not verdict.failed, verdict.details
