"""Units of chapters 6-7: generic_jump, fullgraph errors, resume wiring, catalogue, show_code."""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.exc import CATALOGUE, catalogue_markdown
from minidynamo.resume import resume_cache
from minidynamo.testing import CompileCounter


def branch(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def prints(x):
    y = x + 1
    print("break")
    return y * 2


class Flag:
    def __init__(self, on):
        self.on = on

    def __bool__(self):
        return self.on


def user_bool(x, flag):
    return x + 1 if flag else x - 1


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tensor_branch_takes_the_real_branch(sign):
    x = torch.full((3,), sign)
    counter = CompileCounter()
    assert torch.equal(minidynamo.compile(branch, backend=counter)(x), branch(x))
    assert counter.frame_count == 2


def test_user_bool_is_traced_without_a_break():
    counter = CompileCounter()
    x = torch.ones(2)
    assert torch.equal(minidynamo.compile(user_bool, backend=counter)(x, Flag(False)), x - 1)
    assert counter.frame_count == 1


def test_fullgraph_raises_with_kind_reason_hint_and_line():
    with pytest.raises(minidynamo.Unsupported) as info:
        minidynamo.compile(prints, fullgraph=True)(torch.ones(2))
    error = info.value
    assert error.kind.id == "MD0019" and error.hint  # unsupported builtin call: print()
    assert error.filename == __file__ and error.lineno == prints.__code__.co_firstlineno + 2


def test_side_effects_run_once_around_a_break(capsys):
    log = []

    def fn(x):
        log.append("before")
        print("native")
        log.append("after")
        return x * 2

    minidynamo.compile(fn)(torch.ones(2))
    assert log == ["before", "after"]
    assert capsys.readouterr().out == "native\n"


def test_reset_clears_the_resume_cache():
    minidynamo.compile(prints)(torch.ones(2))
    assert len(resume_cache) > 0
    minidynamo.reset()
    assert len(resume_cache) == 0


def test_explain_exposes_code_objects_and_show_code_decompiles_them():
    minidynamo.reset()
    explained = minidynamo.explain(branch)(torch.ones(2))
    names = [code.co_name for code in explained.code_objects]
    assert names[0] == "branch" and names[1].startswith("minidynamo_resume_in_branch")
    source = minidynamo.show_code(explained.code_objects[0])
    assert "__compiled_fn" in source and "__resume_at" in source
    assert explained.compiled_break_reasons[0].kind.id == "MD0003"


def test_catalogue_markdown_lists_every_kind():
    page = catalogue_markdown()
    assert all(f"## {kind.id}: {kind.title}" in page for kind in CATALOGUE.values())



def times_two(a):
    return a * 2


def sums_a_generator_after_a_loop_break(x):
    for _ in range(3):
        if x.sum() > 1:  # a break inside a loop: the frame runs eagerly, callees compiled
            break
    return sum(times_two(x) for _ in range(2))


def test_a_generator_of_a_frame_run_eagerly_has_its_callees_compiled():
    """A generator expression is never traced (its frame suspends), but what it calls is
    compiled as its own frame, as PEP 523 gives TorchDynamo the callee's frame wherever
    it is called from: one graph, as on torch.compile."""
    from torch._dynamo.testing import CompileCounter as TorchCounter

    x = torch.tensor([0.1, 0.2, -0.5])
    minidynamo.reset()
    torch._dynamo.reset()
    ours, theirs = CompileCounter(), TorchCounter()
    out = minidynamo.compile(sums_a_generator_after_a_loop_break, backend=ours)(x)
    torch.compile(sums_a_generator_after_a_loop_break, backend=theirs)(x)
    assert torch.equal(out, sums_a_generator_after_a_loop_break(x))
    assert ours.frame_count == theirs.frame_count == 1
