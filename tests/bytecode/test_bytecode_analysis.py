"""live_variables: small hand-reasoned cases and a brute-force path search."""

from __future__ import annotations

import dis

from minidynamo.bytecode import scan
from minidynamo.bytecode.analysis import live_variables


def at(instructions, opname, argval=None, nth=0):
    """The nth instruction with this opname (and argval, if given)."""
    matches = [i for i in instructions
               if i.opname == opname and (argval is None or i.argval == argval)]
    return matches[nth]


def branches(a, b):
    x = a
    if b:
        y = 1
    else:
        y = x
    return y + a


def loop(n):
    total = 0
    i = 0
    while i < n:
        total += i
        i += 1
    return total


def handler_reads(a):
    b = 1
    try:
        b = a()
    except Exception:
        return b
    return 0


def deleting(a):
    x = a
    del x
    return 1


def test_branches():
    instructions = scan(branches)
    assert live_variables(instructions, instructions[0]) == {"a", "b"}
    assert live_variables(instructions, at(instructions, "LOAD_FAST", "b")) == {"a", "b", "x"}
    assert live_variables(instructions, at(instructions, "LOAD_CONST", 1)) == {"a"}
    assert live_variables(instructions, at(instructions, "LOAD_FAST", "y")) == {"a", "y"}


def test_loop_carries_its_variables_round():
    instructions = scan(loop)
    test = at(instructions, "LOAD_FAST", "i")            # while i < n
    assert live_variables(instructions, test) == {"i", "n", "total"}
    body = at(instructions, "LOAD_FAST", "total")        # total += i
    assert live_variables(instructions, body) == {"i", "n", "total"}
    assert live_variables(instructions, instructions[0]) == {"n"}


def test_exception_handler_keeps_variables_alive():
    instructions = scan(handler_reads)
    call_site = at(instructions, "LOAD_FAST", "a")
    assert live_variables(instructions, call_site) == {"a", "b"}


def test_delete_reads_then_kills():
    instructions = scan(deleting)
    assert live_variables(instructions, at(instructions, "DELETE_FAST", "x")) == {"x"}
    assert live_variables(instructions, instructions[0]) == {"a"}
    assert live_variables(instructions, at(instructions, "RETURN_VALUE")) == set()


# --- brute force: every path, from dis alone --------------------------------------

STOPS = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE",
         "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
READS = {"LOAD_FAST", "DELETE_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE",
         "DELETE_DEREF", "MAKE_CELL"}
WRITES = {"STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF"}


def dis_graph(code):
    """offset -> (opname, argval, successor offsets), built from dis output only."""
    listing, start_of, pending = [], {}, []
    for instruction in dis.get_instructions(code):
        pending.append(instruction.offset)
        if instruction.opname != "EXTENDED_ARG":
            start_of.update((offset, instruction.offset) for offset in pending)
            listing.append(instruction)
            pending = []
    rows = dis._parse_exception_table(code)
    graph = {}
    for index, instruction in enumerate(listing):
        following = []
        if instruction.opname not in STOPS and index + 1 < len(listing):
            following.append(listing[index + 1].offset)
        if instruction.opcode in dis.hasjrel:
            following.append(start_of[instruction.argval])
        following += [start_of[row.target] for row in rows
                      if row.start <= instruction.offset < row.end]
        graph[instruction.offset] = (instruction.opname, instruction.argval, following)
    return graph


def brute_force_live(graph, start, limit=20_000):
    """Walk (instruction, names written so far) states; None if there are too many."""
    live, seen, todo = set(), set(), [(start, frozenset())]
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        if len(seen) > limit:
            return None
        seen.add(state)
        offset, written = state
        opname, argval, following = graph[offset]
        if opname in READS and argval not in written:
            live.add(argval)
        if opname in WRITES:
            written = written | {argval}
        todo += [(successor, written) for successor in following]
    return live


def test_live_variables_equal_a_brute_force_search(stdlib_code):
    checked = 0
    small = [code for code in stdlib_code if len(code.co_code) < 400 and code.co_nlocals]
    for code in small[::4]:
        graph = dis_graph(code)
        instructions = scan(code)
        for instruction in instructions[::5]:
            expected = brute_force_live(graph, instruction.offset)
            if expected is None:
                continue
            assert live_variables(instructions, instruction) == expected, (code, instruction)
            checked += 1
    assert checked > 1000
