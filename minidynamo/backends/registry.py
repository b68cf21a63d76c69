"""The backend registry: names for backends, as torch.compile's (chapter 10).

A backend is any callable `(gm: fx.GraphModule, example_inputs: list) -> callable`.
`minidynamo.compile(fn, backend=...)` takes one directly, or a name that
`lookup_backend` turns into one, looking in three places in turn:

1. the backends registered here with `register_backend` (minidynamo's own: eager,
   aot_eager, inductor, cudagraphs, npu, fake_npu, and any a user registers);
2. the entry-point group `minidynamo_backends` of the installed packages, so that a
   package can offer a backend without being imported first (torch's group is
   `torch_dynamo_backends`);
3. torch's own registry (`torch._dynamo.list_backends`, which reads that group too), so
   that every backend torch.compile knows by name works here unchanged.

A name found nowhere is an `InvalidBackend` error that lists what is known. A registered
backend may define `check_available()`: the lookup calls it, so that a backend whose
libraries are missing (the NPU's) fails when `compile` is called, with a message that
says what to install, not later inside the first call.

Compare with TorchDynamo: `torch/_dynamo/backends/registry.py`.
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points
from typing import Any, Callable, Sequence

import torch

Backend = Callable[[torch.fx.GraphModule, list[Any]], Callable[..., Any]]

ENTRY_POINT_GROUP = "minidynamo_backends"
DEFAULT_EXCLUDED_TAGS = ("debug", "experimental")  # what list_backends leaves out, as torch's

_BACKENDS: dict[str, Backend] = {}
_TAGS: dict[str, tuple[str, ...]] = {}


class InvalidBackend(RuntimeError):
    """A backend name that no registry knows (a RuntimeError, as torch's InvalidBackend)."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        super().__init__(
            f"unknown backend {name!r}. Known backends: {', '.join(known)}. Pass a "
            "callable (gm, example_inputs) -> callable, or register one by name with "
            "@minidynamo.register_backend (or an entry point in the group "
            f"{ENTRY_POINT_GROUP!r})")


def register_backend(compiler_fn: Backend | None = None, *, name: str | None = None,
                     tags: Sequence[str] = ()) -> Any:
    """Register `compiler_fn` under `name` (its `__name__` by default); returns it.

    Used bare (`@register_backend`), with arguments (`@register_backend(name="mine",
    tags=("debug",))`) or called (`register_backend(fn, name="mine")`). `tags` mark
    backends that `list_backends()` leaves out by default ("debug", "experimental")."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    if not callable(compiler_fn):
        raise TypeError(f"a backend must be callable as (gm, example_inputs), got "
                        f"{type(compiler_fn).__name__}")
    name = name or getattr(compiler_fn, "__name__", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{compiler_fn!r} has no __name__: register it with name=...")
    if name in _BACKENDS and _BACKENDS[name] is not compiler_fn:
        raise ValueError(f"a backend named {name!r} is registered already "
                         f"({_BACKENDS[name]!r}); choose another name")
    _BACKENDS[name] = compiler_fn
    _TAGS[name] = tuple(tags)
    return compiler_fn


def lookup_backend(backend: str | Backend) -> Backend:
    """The backend callable for `backend`, a name or a callable.

    A callable is the backend itself. A name is looked up in this registry, then among
    the entry points of the group `ENTRY_POINT_GROUP` (`_load_entry_point` registers the
    one of that name, if a package offers it), then in torch's registry
    (`_torch_backend_names`, `torch._dynamo.lookup_backend`). A backend found here that
    has a `check_available` method is checked before it is returned. An unknown name is
    `InvalidBackend`, listing the names of this registry and torch's default listing
    (`torch._dynamo.list_backends()`); anything else is a `TypeError`."""
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a name or a callable (gm, example_inputs) -> "
                        f"callable, got {type(backend).__name__}")
    if backend not in _BACKENDS:
        _load_entry_point(backend)
    if backend in _BACKENDS:
        found = _BACKENDS[backend]
        check = getattr(found, "check_available", None)
        if check is not None:
            check()
        return found
    if backend in _torch_backend_names():
        return torch._dynamo.lookup_backend(backend)
    raise InvalidBackend(backend, sorted(set(_BACKENDS) | set(torch._dynamo.list_backends())))


def list_backends(exclude_tags: Sequence[str] | None = DEFAULT_EXCLUDED_TAGS) -> list[str]:
    """The names registered here and by entry points, without those tagged with one of
    `exclude_tags` (pass `()` or None for all). torch's own names also work in
    `lookup_backend`: `torch._dynamo.list_backends()` lists them."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        _load_entry_point(entry.name)
    excluded = set(exclude_tags or ())
    return sorted(name for name in _BACKENDS if not excluded & set(_TAGS[name]))


def _load_entry_point(name: str) -> None:
    """Register the backend an installed package offers under `name`, if one does."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name and name not in _BACKENDS:
            register_backend(entry.load(), name=name)


def _torch_backend_names() -> list[str]:
    return torch._dynamo.list_backends(exclude_tags=())
