"""What programs written to probe side effects across graph breaks, recompiles and
exceptions found, each checked against eager PyTorch and torch.compile (right on each):

- `if a:` on a list that contains itself (`a.append(a)`) asked the list whether it is a
  constant, which asked its items, itself among them, until a RecursionError: an
  internal error, the frame run eagerly (and with `fullgraph=True`, silently so);
- a call with arguments the function rejects raised Python's own TypeError from inside
  the `except` that caught the binder's, so the user's error carried minidynamo's
  `___bind` error as its `__context__` ("During handling of the above exception").
"""

from __future__ import annotations

import pytest
import torch

import minidynamo
from minidynamo import config
from minidynamo.testing import CompileCounter


def truth_of(x, a):
    if a:
        x = x + 1
    return x


@pytest.mark.parametrize("fullgraph", [False, True])
def test_the_truth_of_a_list_that_contains_itself_is_traced(fullgraph):
    minidynamo.reset()
    counter = CompileCounter()
    holder = [1]
    holder.append(holder)
    with config.patch(strict=True):
        out = minidynamo.compile(truth_of, backend=counter, fullgraph=fullgraph)(
            torch.ones(2), holder)
    assert torch.equal(out, truth_of(torch.ones(2), holder))
    assert counter.frame_count == 1  # one graph, as on torch.compile


def calls_a_lambda_wrongly(x):
    g = lambda a: a  # noqa: E731
    return g(1, 2)


def test_a_rejected_call_raises_python_error_without_a_context():
    minidynamo.reset()
    with pytest.raises(TypeError) as eager:
        calls_a_lambda_wrongly(torch.ones(1))
    with pytest.raises(TypeError) as compiled:
        minidynamo.compile(calls_a_lambda_wrongly, backend="eager")(torch.ones(1))
    assert str(compiled.value) == str(eager.value)
    assert compiled.value.__context__ is None and eager.value.__context__ is None
