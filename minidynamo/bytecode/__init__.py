"""minidynamo.bytecode: reading, analysing and rewriting 3.11 bytecode (chapter 1).

The lowest layer of minidynamo; it imports nothing from the rest of the
package. Everything above chapter 1 uses only the names exported here:

    scan(code)                      code object -> list[Instruction]
    assemble(instructions, template, **code_replace) -> code object
    create_instruction(opname, *, arg=None, argval=..., target=None)
    Instruction, InstructionExceptionEntry
    stack_effect(instruction, *, jump=None), max_stack_depth(instructions)
    decode_exception_table(bytes), encode_exception_table(entries), ExceptionTableEntry
    opcodes                         the Python-version facts (the only such module)
    analysis                        live_variables(instructions, start) and CFG helpers

Inside the package, lowest first: opcodes -> instruction, exception_table,
line_table -> scanner, analysis -> stack -> assembler.
"""

from minidynamo.bytecode import analysis, opcodes
from minidynamo.bytecode.analysis import live_variables
from minidynamo.bytecode.assembler import assemble
from minidynamo.bytecode.exception_table import (
    ExceptionTableEntry,
    decode_exception_table,
    encode_exception_table,
)
from minidynamo.bytecode.instruction import (
    Instruction,
    InstructionExceptionEntry,
    create_instruction,
)
from minidynamo.bytecode.scanner import scan
from minidynamo.bytecode.stack import max_stack_depth, stack_depths, stack_effect

__all__ = [
    "ExceptionTableEntry",
    "Instruction",
    "InstructionExceptionEntry",
    "analysis",
    "assemble",
    "create_instruction",
    "decode_exception_table",
    "encode_exception_table",
    "live_variables",
    "max_stack_depth",
    "opcodes",
    "scan",
    "stack_depths",
    "stack_effect",
]
