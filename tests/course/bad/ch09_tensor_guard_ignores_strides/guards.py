"""Known-bad ch09 submission: TENSOR_MATCH compares the sizes and forgets the strides, so a transposed or sliced
tensor of the same shape reuses an entry torch.compile would not.
"""

from __future__ import annotations

import itertools
import re
import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable
import torch
from minidynamo.guard_reads import Reads
from minidynamo.sources import Source

# defined next to the exercises in the package:
from minidynamo.guards import substitute
from minidynamo.guards import (
    Guard, TensorFacts, _ref_name, display_name, eval_source,
    key_set_as_torch_prints_it, scalar_type_name, tensor_mismatch,
)


class GuardSet:
    """The exercise methods of minidynamo.guards.GuardSet; the class keeps all its others."""

    def tensor_match(self, source: Source, value: torch.Tensor) -> None:
        """TENSOR_MATCH: `value`'s type, dispatch keys, dtype, device index, requires_grad,
        sizes and strides, compared in one line of code; its reason is `tensor_mismatch`'s."""
        name = source.name()
        facts = TensorFacts.of(value)
        refs: dict[str, Any] = {}
        cls = type(value)
        cls_name = "Tensor" if cls is torch.Tensor else _ref_name(refs, "type", cls)
        keys = _ref_name(refs, "keys", facts.dispatch_keys)
        dtype = _ref_name(refs, "dtype", facts.dtype)
        # The dispatch keys name the device type (CPU, CUDA ...); only the index is left.
        device = "" if facts.device.index is None else \
            f"and {name}.get_device() == {facts.device.index} "
        code = (f"type({name}) is {cls_name} and ___dispatch_keys({name}) == {keys} "
                f"and {name}.dtype is {dtype} {device}"
                f"and {name}.requires_grad is {facts.requires_grad} "
                f"and {name}.size() == {facts.size}")
        shown = display_name(name)
        self._add(Guard("TENSOR_MATCH", source, code, refs,
                        reason=lambda L, G: tensor_mismatch(shown, facts, eval_source(name, L, G))))


def tensor_difference(expected: TensorFacts, actual: TensorFacts) -> str | None:
    """The first property in which `actual` differs from `expected`, in the order and words
    of torch's TensorGuards: `size mismatch at index 0. expected 3, actual 4` (None: none)."""
    if actual.dispatch_keys != expected.dispatch_keys:
        return (f"dispatch key set mismatch. expected "
                f"{key_set_as_torch_prints_it(expected.dispatch_keys)}, "
                f"actual {key_set_as_torch_prints_it(actual.dispatch_keys)}")
    if actual.dtype != expected.dtype:
        return (f"dtype mismatch. expected {scalar_type_name(expected.dtype)}, "
                f"actual {scalar_type_name(actual.dtype)}")
    if actual.device != expected.device:
        return (f"Tensor device index mismatch. Expected device index to be "
                f"{expected.device.index}, actual {actual.device.index}")
    if actual.requires_grad != expected.requires_grad:
        return f"requires_grad mismatch. expected requires_grad={int(expected.requires_grad)}"
    if len(actual.size) != len(expected.size):
        return f"rank mismatch. expected {len(expected.size)}, actual {len(actual.size)}"
    for what, old, new in (("size", expected.size, actual.size),
                           ("stride", expected.stride, actual.stride)):
        for index, (a, b) in enumerate(zip(old, new)):
            if a != b:
                return f"{what} mismatch at index {index}. expected {a}, actual {b}"
    return None


class CheckFunction:
    """The exercise methods of minidynamo.guards.CheckFunction; the class keeps all its others."""

    def generate(self) -> str:
        """The check function's source: one `if not (...)` per guard, in the order added,
        commented with the guard's kind and the user line that added it.

        Each source a guard reads is fetched once into a local (`___v0 = L['self']`,
        `___v1 = ___v0.__dict__`: `Reads.local`), as TorchDynamo's guard tree walks each path
        once, and the guard's code reads the locals. An exception means False."""
        lines = ["def ___check(L, G):", "    try:"]
        reads = Reads(self.guards)
        for guard in self.guards:
            for source in guard.sources():
                reads.local(source, lines)
            code = substitute(guard.code, {e: local for e, local in reads.locals.items() if e in guard.code})
            where = guard.user_line.strip()
            lines.append(f"        if not ({code}):  # {guard.kind}" + (f": {where}" if where else ""))
            lines.append("            return False")
        lines += ["    except Exception:  # the input is not even shaped like the guarded one",
                  "        return False", "    return True"]
        return "\n".join(lines) + "\n"

    def failure_reason(self, L: dict, G: dict) -> str | None:
        """The first failing guard's reason (None when all hold): the slow, verbose path.

        Each guard is evaluated on its own (`lambda L, G: <its code>`, in the check's
        namespace). Guards that failed more often before are tried first
        (`self.fail_counts`, kept from call to call). A guard that raises (`xs[2]` of a
        shorter list) is passed over for one that fails cleanly (`len(xs) == 3`); its
        error is the reason only when no other guard fails."""
        if self._one_by_one is None:
            self._one_by_one = [
                eval(f"lambda L, G: {guard.code}", self.namespace) for guard in self.guards
            ]
            self.fail_counts = [0] * len(self.guards)
        # TorchDynamo's guard managers move a failing guard to the front, so the reason
        # names the guard that keeps failing; and its tree checks a list's own guards
        # (its length) before those of its items, so that a reason never names a guard
        # that could not even be evaluated while a structural one fails.
        order = sorted(range(len(self.guards)), key=lambda index: -self.fail_counts[index])
        raised: tuple[int, str] | None = None
        for index in order:
            guard, holds = self.guards[index], self._one_by_one[index]
            try:
                ok = holds(L, G)
            except Exception as error:  # noqa: BLE001 (a missing key or attribute)
                if raised is None:
                    raised = index, f"{display_name(guard.code)} ({type(error).__name__}: {error})"
                continue
            if not ok:
                self.fail_counts[index] += 1
                return (guard.reason(L, G) if guard.reason else None) or guard.describe()
        if raised is not None:
            self.fail_counts[raised[0]] += 1
            return raised[1]
        return None
