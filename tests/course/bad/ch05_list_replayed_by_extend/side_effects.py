"""A common mistake: replay a list by extending it with its final contents. The items it
had before the frame are then there twice: the side effect is applied on top of the
original state instead of replacing it."""

from __future__ import annotations


def _replay_list(codegen: PyCodegen, variable: ListVariable) -> None:
    codegen.load_source(variable.source)
    codegen.append("LOAD_METHOD", argval="extend")
    variable.reconstruct(codegen)
    codegen.call_function(1)
    codegen.append("POP_TOP")


def _replay_attributes(codegen: PyCodegen, variable: VariableTracker) -> None:
    for name, value in variable.attributes.items():
        codegen(value)
        codegen.load_source(variable.source)
        codegen.append("STORE_ATTR", argval=name)
