"""Conformance corpora: small programs with their arguments, registered as cases.

Two corpora live here:

* ``pure_python``: functions with no tensor in sight. Traced by minidynamo (or
  TorchDynamo) they must give CPython's answer and capture no graph.
* ``tensor_programs``: programs that ``torch.compile`` captures in one graph with no
  graph break. minidynamo must capture the same graph.

A corpus module registers its cases with a :class:`Registry`::

    CASES = Registry()

    @CASES.case(3, 4)                  # fn(3, 4)
    @CASES.case(2.5, b=1)              # a second case of the same function: id "add-1"
    def add(a, b=2):
        return a + b

    CASES.add("mlp", MLP(), torch.randn(2, 4))   # a case whose callable is not a def

Arguments are stored as given; every run works on deep copies of them (see
``minidynamo.testing``), so a case may mutate its inputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any


@dataclasses.dataclass(frozen=True, eq=False)
class Case:
    """One program and the arguments to call it with (hashed by identity)."""

    id: str
    fn: Callable
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    tags: frozenset = frozenset()

    def __repr__(self) -> str:
        return f"Case({self.id})"


class Registry:
    """An ordered list of cases with unique ids."""

    def __init__(self) -> None:
        self.cases: list[Case] = []
        self._ids: set[str] = set()

    def case(self, *args: Any, **kwargs: Any) -> Callable[[Callable], Callable]:
        """Decorator: register ``fn(*args, **kwargs)``; the id is the function's name
        (``name-1``, ``name-2``, ... for further cases of the same function)."""

        def register(fn: Callable) -> Callable:
            self.add(self._fresh_id(fn.__name__), fn, *args, **kwargs)
            return fn

        return register

    def add(self, case_id: str, fn: Callable, *args: Any, tags: tuple = (), **kwargs: Any) -> Case:
        """Register ``fn(*args, **kwargs)`` under ``case_id`` (must be new)."""
        if case_id in self._ids:
            raise ValueError(f"duplicate case id {case_id!r}")
        new_case = Case(case_id, fn, args, kwargs, frozenset(tags))
        self._ids.add(case_id)
        self.cases.append(new_case)
        return new_case

    def tag(self, *tags: str) -> Callable[[Callable], Callable]:
        """Decorator placed *above* ``@case`` lines: adds tags to the function's cases."""

        def register(fn: Callable) -> Callable:
            for position, existing in enumerate(self.cases):
                if existing.fn is fn:
                    self.cases[position] = dataclasses.replace(existing, tags=existing.tags | set(tags))
            return fn

        return register

    def _fresh_id(self, name: str) -> str:
        if name not in self._ids:
            return name
        number = 1
        while f"{name}-{number}" in self._ids:
            number += 1
        return f"{name}-{number}"

    def with_tag(self, tag: str) -> list[Case]:
        return [existing for existing in self.cases if tag in existing.tags]

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def __getitem__(self, case_id: str) -> Case:
        for existing in self.cases:
            if existing.id == case_id:
                return existing
        raise KeyError(case_id)
