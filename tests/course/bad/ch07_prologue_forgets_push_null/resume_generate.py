"""A common mistake: NULL is not a value, so the prologue leaves it out. But 3.11's
CALL counts it: `PUSH_NULL; LOAD_GLOBAL f; <args>; CALL n` needs the NULL under the
callable. Without it every slot above sits one lower than the original code expects,
and the call takes the value below as its callable (or fails to build the code)."""

from __future__ import annotations


def resume_code_fields(code: CodeType, point: ResumePoint, line: int) -> dict[str, Any]:
    """The code-object fields of the resume function (the rest comes from `code`).

    Arguments: the stack values, then the live locals; then the other locals.
    The original cells become free variables, before the original free ones.
    """
    arguments = point.stack_argument_names() + list(point.live_locals)
    others = [name for name in code.co_varnames
              if name not in arguments and name not in code.co_cellvars]
    freevars = code.co_cellvars + code.co_freevars
    flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    if freevars:
        flags &= ~inspect.CO_NOFREE
    name = f"{RESUME_PREFIX}_{code.co_name}_at_{line}"
    scope, _, _ = code.co_qualname.rpartition(".")
    return dict(
        co_name=name, co_qualname=f"{scope}.{name}" if scope else name,
        co_firstlineno=line, co_flags=flags,
        co_argcount=len(arguments), co_posonlyargcount=0, co_kwonlyargcount=0,
        co_varnames=tuple(arguments + others), co_cellvars=(), co_freevars=freevars,
    )


class Prologue:
    def build(self, target: Instruction) -> list[Instruction]:
        code: list[Instruction] = []
        if self.freevar_count:
            code.append(create_instruction("COPY_FREE_VARS", arg=self.freevar_count))
        code.append(create_instruction("RESUME", arg=0))
        values = iter(self.point.stack_argument_names())
        for slot in range(self.point.stack_depth):
            if slot not in self.point.null_slots:
                code += self.push_slot(slot, next(values))
        code.append(create_instruction("JUMP", target=target))
        return code
