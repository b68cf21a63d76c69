"""A common mistake: popping the operands one by one hands them over top of stack first,
so `x - y` is traced as `y - x` (and `x / 2` as `2 / x`)."""

from __future__ import annotations


def stack_op(fn: Callable[..., Any]) -> Handler:
    argument_count = len(inspect.signature(fn).parameters)
    fn_variable = BuiltinVariable(fn)

    def handler(self: InstructionTranslatorBase, inst: Instruction) -> None:
        args = [self.pop() for _ in range(argument_count)]  # top first: reversed
        self.push(fn_variable.call_function(self, args, {}))

    return handler
