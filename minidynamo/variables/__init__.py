"""VariableTrackers: the symbolic values of the tracer, one file per family (chapters 3-4).

    base.py          the protocol (python_type, as_python_constant, as_proxy, var_getattr,
                     call_function, call_method, reconstruct) and immutable versions
    constant.py      ConstantVariable: folded Python constants
    tensor.py        TensorVariable: an FX node with a FakeTensor example value
    lists.py         list, tuple, torch.Size, namedtuple, range, slice
    dicts.py         dicts and their views, sets
    keys.py          what a dict key or set element is hashed as (constants, objects)
    iterators.py     iterators advanced by FOR_ITER (loops unroll)
    builtins.py      builtins and operators: fold, graph node, or the operand's method
    functions.py     user functions, methods, closures and cells (inlined)
    user_defined.py  user classes and objects
    super_lookup.py  super(): lookup after a class in the MRO
    nn_module.py     torch.nn.Module (inlined calls, parameters as graph inputs)
    torch.py         torch functions as graph nodes
    misc.py          bound methods, NULL, Python modules
    numpy.py         numpy on tensors: ndarrays as graph tensors, numpy calls as torch._numpy
    lazy.py          LazyVariableTracker: frame inputs realized on first use (chapter 4)
    builder.py       VariableBuilder: real value + source -> tracker (chapter 4)
"""

from minidynamo.variables.base import VariableTracker, new_object_id, replace_version
from minidynamo.variables.builder import VariableBuilder
from minidynamo.variables.builtins import BuiltinVariable
from minidynamo.variables.constant import ConstantVariable, constant
from minidynamo.variables.dicts import ConstDictVariable, DictViewVariable, SetVariable
from minidynamo.variables.functions import (
    BaseUserFunctionVariable,
    CellVariable,
    NestedUserFunctionVariable,
    UserFunctionVariable,
    UserMethodVariable,
)
from minidynamo.variables.iterators import ListIteratorVariable, RangeIteratorVariable
from minidynamo.variables.lazy import LazyVariableTracker
from minidynamo.variables.lists import (
    ListVariable,
    NamedTupleVariable,
    RangeVariable,
    SizeVariable,
    SliceVariable,
    TupleVariable,
)
from minidynamo.variables.misc import GetAttrVariable, NullVariable, PythonModuleVariable
from minidynamo.variables.nn_module import NNModuleVariable
from minidynamo.variables.tensor import TensorVariable
from minidynamo.variables.torch import TorchFunctionVariable
from minidynamo.variables.user_classes import UserDefinedClassVariable
from minidynamo.variables.user_defined import (
    UserDefinedDictVariable,
    UserDefinedObjectVariable,
    UserDefinedSequenceVariable,
)

__all__ = [
    "BaseUserFunctionVariable", "BuiltinVariable", "CellVariable", "ConstDictVariable",
    "ConstantVariable", "DictViewVariable", "GetAttrVariable", "LazyVariableTracker",
    "ListIteratorVariable", "ListVariable", "NNModuleVariable", "NamedTupleVariable",
    "NestedUserFunctionVariable", "NullVariable", "PythonModuleVariable", "RangeIteratorVariable",
    "RangeVariable", "SetVariable", "SizeVariable", "SliceVariable", "TensorVariable",
    "TorchFunctionVariable", "TupleVariable", "UserDefinedClassVariable",
    "UserDefinedDictVariable", "UserDefinedObjectVariable", "UserDefinedSequenceVariable",
    "UserFunctionVariable", "UserMethodVariable",
    "VariableBuilder", "VariableTracker", "constant", "new_object_id", "replace_version",
]
