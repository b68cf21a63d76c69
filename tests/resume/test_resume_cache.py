"""The cache: one code object per break point, keyed by code identity; global names."""

from __future__ import annotations

import gc
import re
import weakref

from resume_samples import loops

from minidynamo import resume
from minidynamo.bytecode import scan, stack_depths


def first_store(code):
    """(offset, depth) of the first STORE_FAST: a simple place to resume."""
    instructions = scan(code)
    for instruction, depth in zip(instructions, stack_depths(instructions)):
        if instruction.opname == "STORE_FAST":
            return instruction.offset, depth
    raise AssertionError("no STORE_FAST")


def lookup(cache, code, **options):
    offset, depth = first_store(code)
    return cache.lookup(code, offset, depth, resume.live_locals_at(code, offset), **options)


def test_the_same_point_gives_the_same_code_object():
    cache = resume.ResumeCache()
    first = lookup(cache, loops)
    assert lookup(cache, loops.__code__) is first        # a function or its code
    assert lookup(cache, loops).code is first.code
    assert len(cache) == 1


def test_a_different_point_gives_a_different_code_object():
    cache = resume.ResumeCache()
    offset, depth = first_store(loops.__code__)
    one = cache.lookup(loops, offset, depth, ["n"])
    other = cache.lookup(loops, offset, depth, ["log", "n"])
    assert one.code is not other.code
    assert one.code.co_varnames[:2] == ("___stack0", "n")
    assert other.code.co_varnames[:3] == ("___stack0", "log", "n")


def test_uncached_calls_make_new_code_objects():
    offset, depth = first_store(loops.__code__)
    live = resume.live_locals_at(loops, offset)
    first = resume.make_resume_code(loops, offset, depth, live)
    second = resume.make_resume_code(loops, offset, depth, live)
    assert first is not second and first.co_code == second.co_code


def test_global_names():
    cache = resume.ResumeCache()
    entry = lookup(cache, loops)
    offset, _ = first_store(loops.__code__)
    match = re.fullmatch(rf"__resume_at_{offset}_(\d+)", entry.name)
    assert match
    other = cache.lookup(loops, offset, 1, [])
    assert other.name != entry.name
    cache.clear()
    assert len(cache) == 0
    again = lookup(cache, loops)
    assert again.code is not entry.code
    assert again.name != entry.name                      # names are never reused


def test_equal_code_objects_do_not_share_entries():
    source = "def twin(log, x):\n    y = x + 1\n    return y * 2\n"
    first_namespace, second_namespace = {}, {}
    exec(compile(source, "twins.py", "exec"), first_namespace)
    exec(compile(source, "twins.py", "exec"), second_namespace)
    first, second = first_namespace["twin"].__code__, second_namespace["twin"].__code__
    assert first == second and first is not second      # code objects compare by value
    cache = resume.ResumeCache()
    assert lookup(cache, first).code is not lookup(cache, second).code
    assert len(cache) == 2


def test_entries_die_with_their_code():
    source = "def short_lived(log, x):\n    y = x + 1\n    return y\n"
    namespace = {}
    exec(compile(source, "short_lived.py", "exec"), namespace)
    function = namespace.pop("short_lived")
    cache = resume.ResumeCache()
    lookup(cache, function)
    assert len(cache) == 1
    code = weakref.ref(function.__code__)
    del function
    gc.collect()
    if code() is not None:
        print([type(holder) for holder in gc.get_referrers(code())])
    assert len(cache) == 0


def test_module_cache():
    resume.resume_cache.clear()
    entry = lookup(resume.resume_cache, loops)
    assert lookup(resume.resume_cache, loops) is entry
    resume.resume_cache.clear()
    assert len(resume.resume_cache) == 0

