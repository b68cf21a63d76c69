"""minidynamo: a readable TorchDynamo, built one chapter at a time.

Import layering, lowest first; a module imports only from layers below it:

    bytecode -> resume (needs only bytecode) -> variables / sources -> translator
    -> output_graph / side_effects -> guards -> convert_frame -> backends -> api
"""

from minidynamo import config
from minidynamo.api import ExplainOutput, OptimizedModule, compile, explain, reset, show_code
from minidynamo.backends import list_backends, lookup_backend, register_backend
from minidynamo.exc import InternalError, Unsupported
from minidynamo.logs import set_logs

__all__ = [
    "ExplainOutput", "InternalError", "OptimizedModule", "Unsupported", "compile", "config",
    "explain", "list_backends", "lookup_backend", "register_backend", "reset", "set_logs",
    "show_code",
]
