"""What the fault and bad-input suites share: a graph-counting backend, a call's outcome."""

from __future__ import annotations

import torch


def counting_backend():
    """A backend that keeps every graph it is given and runs it as it is."""
    graphs: list[torch.fx.GraphModule] = []
    return graphs, lambda gm, example_inputs: graphs.append(gm) or gm.forward


def outcome(thunk):
    """("value", result) or ("raise", exception type, message): what a call did."""
    try:
        return ("value", thunk())
    except Exception as error:  # noqa: BLE001 - the exception is the result
        return ("raise", type(error), str(error))
