"""Training: a compiled forward whose backward runs through AOTAutograd (chapter 10).

Every program of the tensor corpus is run with its float tensors (and its modules'
parameters) requiring gradients: eagerly, and compiled with aot_eager (two corpus
programs also with inductor). The loss is the sum of every differentiable output;
the outputs and every gradient must equal eager's, and the compiled run must have
captured its one graph (strict mode: no eager fallback can pass). Two real models of
the model suite (GPT-2 and BERT, tiny configs, dropout off, the loss computed by the
model from `labels`: GPT-2 breaks once in its loss path, as torch.compile does, and
BERT's head builds a CrossEntropyLoss module while tracing) train for two steps, with
an optimizer step outside the compiled function between them: the losses and all
gradients equal eager's, the graphs are as many as torch.compile's, and the second step
reuses the first step's graphs.
"""

from __future__ import annotations

import contextlib
import copy

import pytest
import torch
from corpus import tensor_programs
from models import zoo

import minidynamo
from minidynamo.backends import lookup_backend
from minidynamo.testing import assert_same_value, compare_with_torch, strict_mode

pytestmark = pytest.mark.timeout(120)


def with_gradients(value):
    """A deep copy in which every float tensor is a leaf that requires a gradient (one
    leaf per tensor: a tensor that is also a dict key stays the same object there)."""
    value, leaves_made = copy.deepcopy(value), {}

    def mark(item):
        if isinstance(item, torch.Tensor) and item.is_floating_point() and not item.requires_grad:
            if id(item) not in leaves_made:
                leaves_made[id(item)] = item, item.detach().requires_grad_(True)
            return leaves_made[id(item)][1]
        if isinstance(item, (list, tuple)) and type(item) in (list, tuple):
            return type(item)(mark(each) for each in item)
        if isinstance(item, dict) and type(item) is dict:
            return {mark(key): mark(each) for key, each in item.items()}
        return item

    return mark(value)


def differentiable(value, found):
    if isinstance(value, torch.Tensor):
        if value.requires_grad and value.is_floating_point():
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for each in value:
            differentiable(each, found)
    elif isinstance(value, dict):
        for each in value.values():
            differentiable(each, found)
    return found


def leaves(args, kwargs):
    found = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.nn.Module):
            found += list(value.parameters())
        else:
            differentiable(value, found)
    return [each for each in found if each.is_leaf]


def forward_and_backward(fn, args, kwargs, call=None):
    """fn's outputs (called through `call`, fn by default), and the gradient of every
    leaf after `sum(out.sum())`."""
    output = (call or fn)(*args, **kwargs)
    outputs = differentiable(output, [])
    if not outputs:
        return output, None
    sum(each.sum() for each in outputs).backward()
    return output, [None if leaf.grad is None else leaf.grad.clone()
                    for leaf in leaves((fn, *args), kwargs)]


def counting(backend_name):
    backend, graphs = lookup_backend(backend_name), []

    def count(gm, example_inputs):
        graphs.append(gm)
        return backend(gm, example_inputs)

    return count, graphs


def check_training(case, backend_name):
    # the program may be a module with state of its own: each run gets a copy of it
    fn, args, kwargs = with_gradients((case.fn, case.args, case.kwargs))
    try:
        expected, expected_grads = forward_and_backward(fn, args, kwargs)
    except RuntimeError as error:  # e.g. an in-place update of a leaf that needs a gradient
        pytest.skip(f"eager cannot train this program: {error}")
    if expected_grads is None:
        pytest.skip("no output needs a gradient")
    fn, args, kwargs = with_gradients((case.fn, case.args, case.kwargs))
    backend, graphs = counting(backend_name)
    minidynamo.reset()
    with strict_mode():
        actual, actual_grads = forward_and_backward(
            fn, args, kwargs, call=minidynamo.compile(fn, backend=backend))
    assert len(graphs) == 1
    assert_same_value(expected, actual)
    for index, (got, want) in enumerate(zip(actual_grads, expected_grads)):
        assert (got is None) == (want is None), f"gradient {index}"
        if want is not None:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=f"gradient {index}")


@pytest.mark.parametrize("case", tensor_programs.CASES.cases, ids=lambda case: case.id)
def test_corpus_gradients_equal_eager_under_aot_eager(case):
    check_training(case, "aot_eager")


@pytest.mark.timeout(300)  # a cold inductor cache compiles C++
@pytest.mark.parametrize("case", tensor_programs.CASES.with_tag("inductor")[:2],
                         ids=lambda case: case.id)
def test_corpus_gradients_equal_eager_under_inductor(case):
    check_training(case, "inductor")


TRAINING_MODELS = {
    "gpt2": zoo.transformers_model(
        "GPT2LMHeadModel", "GPT2Config", vocab_size=zoo.VOCAB, n_embd=zoo.HIDDEN,
        n_layer=zoo.LAYERS, n_head=zoo.HEADS, n_positions=zoo.POSITIONS, bos_token_id=0,
        eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),
    "bert": zoo.transformers_model(
        "BertForMaskedLM", "BertConfig", **zoo.decoder_config(),
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
}


def train_two_steps(model, step_fn):
    """Two steps of SGD, the loss computed by the model from `labels`; the losses and
    the gradients of each step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    record = []
    for seed in (0, 1):
        ids = zoo.token_ids(seed)
        optimizer.zero_grad()
        loss = step_fn(input_ids=ids, labels=ids).loss
        loss.backward()
        record.append((loss.detach(), {name: parameter.grad.clone()
                                       for name, parameter in model.named_parameters()
                                       if parameter.grad is not None}))
        optimizer.step()
    return record


@pytest.mark.parametrize("name", TRAINING_MODELS)
def test_real_models_train_as_eager(name):
    build = TRAINING_MODELS[name]
    expected_model = build().train()
    expected = train_two_steps(expected_model, expected_model)

    model = build().train()
    backend, graphs = counting("aot_eager")
    minidynamo.reset()
    compiled = minidynamo.compile(model, backend=backend)
    actual = train_two_steps(model, compiled)
    torch._dynamo.reset()
    torch_backend, torch_graphs = counting("aot_eager")
    reference = build().train()
    train_two_steps(reference, torch.compile(reference, backend=torch_backend))

    assert len(graphs) == len(torch_graphs) >= 1  # the second step hit the cache
    for step, ((loss, grads), (want_loss, want_grads)) in enumerate(zip(actual, expected)):
        torch.testing.assert_close(loss, want_loss, rtol=1e-4, atol=1e-5, msg=f"step {step}")
        assert grads.keys() == want_grads.keys()
        for key in grads:
            torch.testing.assert_close(grads[key], want_grads[key], rtol=1e-4, atol=1e-5,
                                       msg=f"step {step}: {key}")


def test_no_grad_regions_and_frozen_parameters_train_as_eager():
    """A parameter frozen by requires_grad_(False) gets no gradient, a no_grad region's
    result is a constant to autograd, as in eager."""
    torch.manual_seed(0)
    first, second = torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)
    first.weight.requires_grad_(False)

    def step(x):
        hidden = first(x).relu()
        with torch.no_grad():
            scale = hidden.mean()
        return (second(hidden) * scale).sum()

    x = torch.randn(3, 4)
    expected = step(x)
    expected.backward()
    want = [p.grad.clone() if p.grad is not None else None for p in (*first.parameters(), *second.parameters())]
    for p in (*first.parameters(), *second.parameters()):
        p.grad = None
    backend, graphs = counting("aot_eager")
    with strict_mode():
        loss = minidynamo.compile(step, backend=backend)(x)
    loss.backward()
    got = [p.grad for p in (*first.parameters(), *second.parameters())]
    torch.testing.assert_close(loss, expected)
    assert [g is None for g in got] == [w is None for w in want] == [True, False, False, False]
    for g, w in zip(got, want):
        if w is not None:
            torch.testing.assert_close(g, w)
    assert len(graphs) == 1


def optimizer_steps(compile_fn, optimizer_class, **options):
    """Three steps of a Linear model with the optimizer's `step` compiled (or not, for
    None): the parameters after them and the graphs the step compiled."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = optimizer_class(model.parameters(), lr=0.1, **options)
    graphs = []
    step = optimizer.step if compile_fn is None else compile_fn(
        optimizer.step, backend=lambda gm, example_inputs: (graphs.append(gm), gm.forward)[1])
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(3, 4)).pow(2).sum().backward()
        with strict_mode() if compile_fn is minidynamo.compile else contextlib.nullcontext():
            step()
    return [p.detach().clone() for p in model.parameters()], len(graphs)


@pytest.mark.parametrize("optimizer_class, options", [
    (torch.optim.SGD, {"momentum": 0.9}), (torch.optim.Adam, {}),
    (torch.optim.AdamW, {"weight_decay": 0.1})], ids=["sgd", "adam", "adamw"])
def test_a_compiled_optimizer_step_is_captured_as_on_torch_compile(optimizer_class, options):
    """`optimizer.step` compiled ran wholly eagerly: its profiler `record_function` is
    ignored now, as TorchDynamo ignores it; `torch.optim`'s frames reached natively are
    compiled as frames (torch's file rules skip `torch.nn`, not `torch.optim`); and
    `p.addcdiv_(a, b, value=t)` with a tensor `t` is a fused multiply-add, not `.item()`."""
    expected, _ = optimizer_steps(None, optimizer_class, **options)
    torch._dynamo.reset()
    _, their_graphs = optimizer_steps(torch.compile, optimizer_class, **options)
    minidynamo.reset()
    ours, our_graphs = optimizer_steps(minidynamo.compile, optimizer_class, **options)
    assert our_graphs == their_graphs >= 1
    for mine, eager in zip(ours, expected):
        torch.testing.assert_close(mine, eager, rtol=1e-4, atol=1e-5)


def scaled_updates(p, a, b, s):
    p.addcdiv_(a, b, value=-s)
    p.addcmul_(a, b, value=0.5)
    p.add_(a, alpha=s)
    p.add_(b, alpha=2)
    return p


def test_in_place_updates_with_a_tensor_scale_are_fused_as_in_torch():
    comparison = compare_with_torch(scaled_updates, torch.ones(3), torch.arange(3.0),
                                    torch.full((3,), 2.0), torch.tensor(0.5))
    assert comparison.ok, comparison.report()
