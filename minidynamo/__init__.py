"""minidynamo: a readable TorchDynamo, built one chapter at a time (chapter 0).

Import layering, lowest first; a module imports only from its layer or the ones below
(ARCHITECTURE.md; `tests/test_package_style.py` checks it):

    config / logs / polyfills -> bytecode -> resume (needs only bytecode) -> exc
    -> variables / sources / guards -> codegen -> translator -> output_graph / side_effects
    -> cache -> convert_frame -> backends -> api
"""

from minidynamo import config
from minidynamo.api import (
    ExplainOutput,
    OptimizedModule,
    compile,
    explain,
    reset,
    show_code,
    show_guards,
)
from minidynamo.backends import InvalidBackend, list_backends, lookup_backend, register_backend
from minidynamo.exc import BackendCompilerFailed, FailOnRecompileLimitHit, InternalError, Unsupported
from minidynamo.logs import set_logs
from minidynamo.shapes import mark_dynamic, mark_static

__all__ = [
    "BackendCompilerFailed", "ExplainOutput", "FailOnRecompileLimitHit", "InternalError",
    "InvalidBackend", "OptimizedModule", "Unsupported", "compile", "config",
    "explain", "list_backends", "lookup_backend", "mark_dynamic", "mark_static",
    "register_backend", "reset", "set_logs",
    "show_code", "show_guards",
]
