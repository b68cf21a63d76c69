"""Minimal programs the fuzzer found, as it printed them (issue 8).

Each was a wrong output before the generated code read everything before writing
(chapter 7, "Read everything, then write"); the break-related ones are also in the
break corpus (`tests/corpus/graph_breaks.py`, last section).
"""

from minidynamo.fuzz import Program, check
from minidynamo.fuzz.grammar import PRELUDE


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
