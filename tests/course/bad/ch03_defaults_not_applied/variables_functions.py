"""A common mistake: binding the arguments but forgetting the defaults, so a parameter
the caller left out is not a local of the callee."""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence
from minidynamo.exc import EXCEPTION_IN_TRACED_CODE, graph_break
from minidynamo.sources import AttrSource, Source, closure_cell_source, default_argument_source, keyword_default_source
from minidynamo.variables.base import VariableTracker, new_object_id
from minidynamo.variables.dicts import ConstDictVariable
from minidynamo.variables.lists import TupleVariable
if TYPE_CHECKING:
    from minidynamo.codegen import PyCodegen
    from minidynamo.translator.base import InstructionTranslatorBase as Translator


def bind_arguments(
    code: types.CodeType,
    defaults: Sequence[VariableTracker],
    keyword_defaults: dict[str, VariableTracker],
    args: Sequence[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> dict[str, VariableTracker]:
    """The callee's initial locals: parameters bound to argument trackers.

    Python's own binding rules do the work: we build a stand-in function with
    the callee's code object whose defaults *are* trackers and ask `inspect` to
    bind the arguments to it.
    """
    closure = tuple(types.CellType() for _ in code.co_freevars)
    stand_in = types.FunctionType(code, {}, code.co_name, tuple(defaults), closure)
    stand_in.__kwdefaults__ = dict(keyword_defaults) or None
    signature = inspect.signature(stand_in)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        graph_break(EXCEPTION_IN_TRACED_CODE, f"calling {code.co_name}(): {error}")
    # inspect spells a comprehension's hidden parameter `.0` as `implicit0`
    real_names = {f"implicit{name[1:]}": name for name in code.co_varnames if name.startswith(".")}
    local_variables = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            value = TupleVariable(tuple(value))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            value = ConstDictVariable(dict(value), object_id=new_object_id())
        local_variables[real_names.get(name, name)] = value
    return local_variables
