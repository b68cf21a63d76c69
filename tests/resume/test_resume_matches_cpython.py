"""Resume every sample at every instruction it executes; CPython's own run is the oracle.

For each sample and each (offset, first or last execution) the harness stops a
fresh run there, builds the resume function from the frame's real stack
(NULLs included), live locals and cells, and calls it. Its outcome and the log
of side effects must equal those of the undisturbed run. Offsets inside the
frame's prologue or in the middle of a call sequence must be refused instead.
"""

from __future__ import annotations

import pytest
from resume_harness import reference, refused_offsets, resume_at, resume_points
from resume_samples import SAMPLES

from minidynamo import resume


def sample_id(sample):
    return f"{sample.name}{sample.args}"


@pytest.mark.parametrize("sample", SAMPLES, ids=sample_id)
def test_resuming_anywhere_finishes_the_run(sample):
    expected, executed = reference(sample)
    refused = refused_offsets(sample.make().__code__)
    cache = resume.ResumeCache()
    failures = []
    for offset, occurrence in resume_points(executed):
        got = resume_at(sample, offset, occurrence, cache)
        if offset in refused:
            if got.kind != "refused":
                failures.append((offset, occurrence, "should be refused", got.kind))
        elif (got.kind, got.value, got.log) != (expected.kind, expected.value, expected.log):
            failures.append((offset, occurrence, got, expected))
    assert not failures, "\n".join(map(repr, failures[:5]))


WITH_SAMPLES = [s for s in SAMPLES if s.name.startswith(("with_", "nested_with"))]


@pytest.mark.parametrize("sample", WITH_SAMPLES, ids=sample_id)
def test_reentered_with_blocks_exit_and_enter_again(sample):
    """Leave every enclosing with-block at the break, re-enter it in the prologue."""
    expected, executed = reference(sample)
    code = sample.make().__code__
    cache = resume.ResumeCache()
    checked = 0
    for offset, occurrence in resume_points(executed):
        blocks = resume.with_blocks_at(code, offset)
        if not blocks or offset in refused_offsets(code):
            continue
        got = resume_at(sample, offset, occurrence, cache, reenter=True)
        assert got.kind == expected.kind and got.value == expected.value, (offset, got)
        inserted = got.log[got.at:got.at + 2 * len(blocks)]
        exits, enters = inserted[:len(blocks)], inserted[len(blocks):]
        assert [entry[0] for entry in exits] == ["exit"] * len(blocks), (offset, inserted)
        assert [entry[2] for entry in exits] == [None] * len(blocks)
        assert enters == [("enter", entry[1]) for entry in reversed(exits)], (offset, inserted)
        rest = got.log[:got.at] + got.log[got.at + 2 * len(blocks):]
        assert rest == expected.log, offset
        checked += 1
    assert checked
