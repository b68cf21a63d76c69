"""The NPU path without an NPU: the clear error, and the hand-off checked on the CPU.

torch_npu 2.13.0 does not import on these machines (its `_C` needs CANN's
`libhccl.so`), so `backend="npu"` must fail at `compile` with a message naming what to
install. `fake_npu` makes torchair's call to AOTAutograd with a recording compiler:
what it records must be what torchair's GE compiler would be given, the same ATen
graphs as torch.compile hands the same backend.
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo.backends import FakeNpuBackend, NpuUnavailable, torchair_problems
from minidynamo.testing import normalize_graph, strict_mode


def block(x, w):
    return torch.nn.functional.gelu(x @ w).softmax(-1) * 2


def inputs(rows=3, requires_grad=False):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(rows, 4, generator=generator)
    w = torch.randn(4, 4, generator=generator, requires_grad=requires_grad)
    return x, w


def test_npu_without_torch_npu_fails_early_saying_what_to_install():
    with pytest.raises(NpuUnavailable) as raised:
        minidynamo.compile(block, backend="npu")
    message = str(raised.value)
    assert "torch_npu" in message and "CANN" in message and "fake_npu" in message
    with pytest.raises(NpuUnavailable):
        minidynamo.backends.npu_backend(mode="reduce-overhead")
    with pytest.raises(ValueError, match="unknown NPU mode"):
        minidynamo.backends.npu_backend(mode="fast")


def run_both(fn, args, **options):
    """The handoffs fake_npu records under minidynamo and under torch.compile."""
    ours, theirs = FakeNpuBackend(**options.pop("npu", {})), FakeNpuBackend()
    minidynamo.reset()
    with strict_mode():
        got = minidynamo.compile(fn, backend=ours, **options)(*args)
    torch._dynamo.reset()
    want = torch.compile(fn, backend=theirs, **options)(*args)
    return ours, theirs, got, want


def test_inference_hands_torchair_one_aten_graph_as_torch_compile_does():
    ours, theirs, got, want = run_both(block, inputs())
    torch.testing.assert_close(got, block(*inputs()))
    [handoff] = ours.handoffs
    assert handoff.kind == "inference"
    assert handoff.devices == [torch.device("cpu")] * 2
    assert all(isinstance(node.target, torch._ops.OpOverload)
               for node in handoff.graph.graph.nodes if node.op == "call_function")
    assert normalize_graph(handoff.graph) == normalize_graph(theirs.handoffs[0].graph)


def test_training_hands_over_a_forward_and_later_a_backward():
    x, w = inputs(requires_grad=True)
    ours, theirs, got, want = run_both(block, (x, w))
    assert [each.kind for each in ours.handoffs] == ["forward"]  # backward: when it runs
    got.sum().backward()
    assert [each.kind for each in ours.handoffs] == ["forward", "backward"]
    expected_grad = w.grad.clone()
    w.grad = None
    block(x, w).sum().backward()
    torch.testing.assert_close(expected_grad, w.grad)
    want.sum().backward()
    assert [normalize_graph(each.graph) for each in ours.handoffs] == [
        normalize_graph(each.graph) for each in theirs.handoffs]


def test_an_input_updated_in_place_stays_in_the_inference_graph():
    """torchair asks AOTAutograd to keep input mutations in the graph
    (keep_inference_input_mutations): the graph writes the input itself."""

    def accumulate(total, x):
        total.add_(x.relu())
        return total * 2

    total, x = torch.zeros(3), torch.tensor([1.0, -2.0, 3.0])
    npu = FakeNpuBackend()
    result = minidynamo.compile(accumulate, backend=npu)(total, x)
    assert total.tolist() == [1.0, 0.0, 3.0] and result.tolist() == [2.0, 0.0, 6.0]
    targets = [str(node.target) for node in npu.handoffs[0].graph.graph.nodes
               if node.op == "call_function"]
    assert "aten.copy_.default" in targets


def test_reduce_overhead_refuses_symbolic_shapes_as_an_acl_graph_must():
    npu = FakeNpuBackend(mode="reduce-overhead")
    compiled = minidynamo.compile(block, backend=npu, dynamic=True)
    with pytest.raises(minidynamo.BackendCompilerFailed, match="ACL graph needs static shapes"):
        compiled(*inputs())
    static = FakeNpuBackend(mode="reduce-overhead")
    torch.testing.assert_close(minidynamo.compile(block, backend=static, dynamic=False)(*inputs()),
                               block(*inputs()))
    assert len(static.handoffs) == 1


def test_dynamic_shapes_reach_the_ge_graph_as_symbols():
    npu = FakeNpuBackend()
    compiled = minidynamo.compile(block, backend=npu, dynamic=True)
    for rows in (3, 5):
        torch.testing.assert_close(compiled(*inputs(rows)), block(*inputs(rows)))
    assert len(npu.handoffs) == 1
    sizes = [node.meta["val"].shape[0] for node in npu.handoffs[0].graph.graph.nodes
             if node.op == "placeholder" and isinstance(node.meta.get("val"), torch.Tensor)]
    assert any(isinstance(size, torch.SymInt) for size in sizes)


def test_the_contract_check_names_what_torchair_would_reject():
    """A Dynamo graph handed over without AOTAutograd holds torch functions and module
    calls, not ATen operators; inputs on two devices cannot make one GE graph."""
    captured = []

    def keep(gm, example_inputs):
        captured.append((gm, example_inputs))
        return gm.forward

    minidynamo.compile(block, backend=keep)(*inputs())
    gm, example_inputs = captured[0]
    problems = torchair_problems(gm, example_inputs, "max-autotune")
    assert problems and all("is not an ATen operator" in each or "only ATen operators" in each
                            for each in problems)
    assert any("gelu" in each for each in problems)
    mixed = [torch.ones(2), torch.ones(2, device="meta")]
    assert torchair_problems(gm, mixed, "max-autotune")[-1].startswith("inputs on several devices")
    assert any("not a tensor or a number" in each
               for each in torchair_problems(gm, ["text"], "max-autotune"))
