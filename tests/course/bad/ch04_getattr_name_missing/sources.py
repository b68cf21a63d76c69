"""A common mistake: always spell an attribute with a dot. `L['obj'].my-attr` is not a
Python expression, so a guard built from it could never be evaluated; TorchDynamo
writes `getattr(L['obj'], 'my-attr')`."""

from __future__ import annotations


class AttrSource:
    def name(self) -> str:
        return f"{self.base.name()}.{self.member}"


class GetItemSource:
    def reconstruct(self) -> list[Instruction]:
        return [
            *self.base.reconstruct(),
            create_instruction("LOAD_CONST", argval=self.index),
            create_instruction("BINARY_SUBSCR"),
        ]
